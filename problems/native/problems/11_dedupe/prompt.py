def dedupe(xs):
    """The task dedupe."""
