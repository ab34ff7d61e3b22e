n = int(input())
xs = list(map(int, input().split()))
print(round(sum(xs) / n, 1))
