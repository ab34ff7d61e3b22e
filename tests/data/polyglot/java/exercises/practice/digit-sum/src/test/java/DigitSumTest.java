import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

public class DigitSumTest {

    @Test
    public void zero() {
        assertThat(DigitSum.of(0)).isEqualTo(0);
    }

    @Disabled("Remove to run test")
    @Test
    public void oneDigit() {
        assertThat(DigitSum.of(7)).isEqualTo(7);
    }

    @Disabled("Remove to run test")
    @Test
    public void manyDigits() {
        assertThat(DigitSum.of(90817)).isEqualTo(25);
    }
}
