def running_sum(xs):
    """The task running_sum."""
