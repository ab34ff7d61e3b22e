def is_prime(n):
    """The task is_prime."""
