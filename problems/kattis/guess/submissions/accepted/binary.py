lo, hi = 1, int(input())
while lo < hi:
    mid = (lo + hi) // 2
    print("?", mid, flush=True)
    reply = input()
    if reply == "=":
        lo = hi = mid
    elif reply == "<":
        hi = mid - 1
    else:
        lo = mid + 1
print("!", lo, flush=True)
