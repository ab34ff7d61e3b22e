n = int(input())
print('!', n // 2, flush=True)
