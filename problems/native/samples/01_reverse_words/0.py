def reverse_words(s):
    return ' '.join(reversed(s.split()))
def show(v):
    if isinstance(v, bool):
        return 'YES' if v else 'NO'
    if isinstance(v, list):
        return ' '.join(map(str, v))
    return str(v)
s = input()
print(show(reverse_words(s)))
