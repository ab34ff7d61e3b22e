def check(candidate):
    assert candidate(0) == 1
    assert candidate(5) == 120
    assert candidate(10) == 3628800
