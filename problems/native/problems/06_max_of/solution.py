def max_of(xs):
    return max(xs)
def show(v):
    if isinstance(v, bool):
        return 'YES' if v else 'NO'
    if isinstance(v, list):
        return ' '.join(map(str, v))
    return str(v)
input()
xs = list(map(int, input().split()))
print(show(max_of(xs)))
