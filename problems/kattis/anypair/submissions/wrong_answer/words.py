input()
print('two numbers')
