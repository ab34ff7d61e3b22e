import unittest

from digit_sum import digit_sum


class DigitSumTest(unittest.TestCase):
    def test_zero(self):
        self.assertEqual(digit_sum(0), 0)

    def test_one_digit(self):
        self.assertEqual(digit_sum(7), 7)

    def test_many_digits(self):
        self.assertEqual(digit_sum(90817), 25)
