def count_vowels(s):
    return sum(c in 'aeiou' for c in s.lower())
