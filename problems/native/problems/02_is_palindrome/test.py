def check(candidate):
    assert candidate('level') == True
    assert candidate('abc') == False
    assert candidate('') == True
