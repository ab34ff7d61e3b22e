pub fn digit_sum(n: u64) -> u64 {
    todo!("the sum of the digits of {n}")
}
