def is_palindrome(s):
    """The task is_palindrome."""
