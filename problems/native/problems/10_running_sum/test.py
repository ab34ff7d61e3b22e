def check(candidate):
    assert candidate([1, 2, 3]) == [1, 3, 6]
    assert candidate([]) == []
    assert candidate([5, -5]) == [5, 0]
