package digitsum

import "testing"

func TestZero(t *testing.T) {
	if got := DigitSum(0); got != 0 {
		t.Fatalf("DigitSum(0) = %d, want 0", got)
	}
}

func TestOneDigit(t *testing.T) {
	if got := DigitSum(7); got != 7 {
		t.Fatalf("DigitSum(7) = %d, want 7", got)
	}
}

func TestManyDigits(t *testing.T) {
	if got := DigitSum(90817); got != 25 {
		t.Fatalf("DigitSum(90817) = %d, want 25", got)
	}
}
