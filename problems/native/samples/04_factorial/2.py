def factorial(n):
    while True:
        pass
