class DigitSum {

    static long of(long n) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }
}
