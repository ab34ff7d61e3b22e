use digit_sum::*;

#[test]
fn zero() {
    assert_eq!(digit_sum(0), 0);
}

#[test]
#[ignore]
fn one_digit() {
    assert_eq!(digit_sum(7), 7);
}

#[test]
#[ignore]
fn many_digits() {
    assert_eq!(digit_sum(90817), 25);
}
