package digitsum

func DigitSum(n int) int {
	panic("Please implement the DigitSum function")
}
