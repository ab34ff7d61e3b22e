print(f'Hi, {input().strip()}!')
