def check(candidate):
    assert candidate(3) == 14
    assert candidate(1) == 1
    assert candidate(0) == 0
