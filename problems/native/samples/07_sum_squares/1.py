def sum_squares(n):
    return sum(i * i for i in range(n))
