def add(a, b):
    """The task add."""
