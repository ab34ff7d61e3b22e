def factorial(n):
    """The task factorial."""
