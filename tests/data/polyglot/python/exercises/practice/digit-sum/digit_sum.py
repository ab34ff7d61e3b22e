def digit_sum(n):
    pass
