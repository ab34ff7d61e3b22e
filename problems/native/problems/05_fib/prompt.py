def fib(n):
    """The task fib."""
