def check(candidate):
    assert candidate([1, 2, 1, 3]) == [1, 2, 3]
    assert candidate([3, 1, 3, 2]) == [3, 1, 2]
    assert candidate([4, 4]) == [4]
