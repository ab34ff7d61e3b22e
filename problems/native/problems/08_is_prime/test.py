def check(candidate):
    assert candidate(2) == True
    assert candidate(15) == False
    assert candidate(97) == True
    assert candidate(1) == False
