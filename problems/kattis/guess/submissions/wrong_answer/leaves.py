n = int(input())
print('?', 1, flush=True)
