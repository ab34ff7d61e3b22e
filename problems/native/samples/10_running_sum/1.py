def running_sum(xs):
    return [sum(xs)]
