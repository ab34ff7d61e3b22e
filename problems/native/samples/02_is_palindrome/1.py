def is_palindrome(s):
    return s[0] == s[-1]
