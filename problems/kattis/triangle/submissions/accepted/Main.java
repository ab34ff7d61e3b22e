import java.math.BigInteger;
import java.util.Scanner;

public class Main {
    public static void main(String[] args) {
        BigInteger n = new Scanner(System.in).nextBigInteger();
        System.out.println(n.multiply(n.add(BigInteger.ONE)).shiftRight(1));
    }
}
