def check(candidate):
    assert candidate(12, 18) == 6
    assert candidate(7, 5) == 1
    assert candidate(0, 9) == 9
