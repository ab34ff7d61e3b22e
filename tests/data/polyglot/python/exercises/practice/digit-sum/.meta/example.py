def digit_sum(n):
    return sum(int(c) for c in str(n))
