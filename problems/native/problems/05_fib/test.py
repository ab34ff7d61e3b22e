def check(candidate):
    assert candidate(0) == 0
    assert candidate(1) == 1
    assert candidate(10) == 55
