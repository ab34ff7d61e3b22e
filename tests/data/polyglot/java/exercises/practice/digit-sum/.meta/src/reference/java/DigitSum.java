class DigitSum {

    static long of(long n) {
        return Digits.of(n).stream().mapToLong(Long::longValue).sum();
    }
}
