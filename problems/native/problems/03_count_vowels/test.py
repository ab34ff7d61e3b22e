def check(candidate):
    assert candidate('Hello') == 2
    assert candidate('xyz') == 0
    assert candidate('AEIOU') == 5
