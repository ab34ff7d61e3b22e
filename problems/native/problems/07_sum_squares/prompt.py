def sum_squares(n):
    """The task sum_squares."""
