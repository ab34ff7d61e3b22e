def gcd(a, b):
    """The task gcd."""
