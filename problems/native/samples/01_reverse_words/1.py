def reverse_words(s):
    return s[::-1]
def show(v):
    if isinstance(v, bool):
        return 'YES' if v else 'NO'
    if isinstance(v, list):
        return ' '.join(map(str, v))
    return str(v)
s = input()
print(show(reverse_words(s)))
