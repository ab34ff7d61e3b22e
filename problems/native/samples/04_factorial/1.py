def factorial(n):
    r = 1
    for i in range(1, n):
        r *= i
    return r
