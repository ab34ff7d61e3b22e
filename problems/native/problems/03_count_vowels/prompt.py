def count_vowels(s):
    """The task count_vowels."""
