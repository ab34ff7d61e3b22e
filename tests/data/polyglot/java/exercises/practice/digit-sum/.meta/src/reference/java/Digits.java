import java.util.ArrayList;
import java.util.List;

class Digits {

    static List<Long> of(long n) {
        List<Long> out = new ArrayList<>();
        for (; n > 0; n /= 10) {
            out.add(n % 10);
        }
        return out;
    }
}
