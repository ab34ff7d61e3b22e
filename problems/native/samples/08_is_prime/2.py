def is_prime(n):
    while True:
        pass
