"""Text that comes from a candidate: bounded, valid, never structure."""




DETAIL_CHARS = 1000   # a result's detail
NAME_CHARS = 64       # an exception's class name inside a reason


def safe_str(value) -> str:
    """str(value), whatever that raises (the int-to-str digit limit, MemoryError, a hostile __str__)."""
    try:
        text = str(value)
        if type(text) is str:
            return text
    except BaseException as e:  # noqa: B036 - any failure to print is reported, never raised
        return f"<not printable: {clean_name(type(e).__name__)}>"
    return "<not printable>"


def clean_text(value, limit: int = DETAIL_CHARS) -> str:
    """At most `limit` characters (and a note of how many were cut), encodable as UTF-8: lone
    surrogates become backslash escapes. Newlines stay; reports escape them where they are shown."""
    text = value if type(value) is str else safe_str(value)
    size = len(text)
    text = text[:limit]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")[:limit]  # the bound holds after escaping
    return text + f"… [{size - limit} more characters]" if size > limit else text


def clean_name(name) -> str:
    """A class name as it may appear in a reason: letters, digits, '_' and '.', at most NAME_CHARS.
    Anything else (newlines, markup, control characters, surrogates) becomes '_'."""
    if type(name) is not str:
        return "_"
    out = "".join(c if (c.isalnum() or c in "_.") and c.isprintable() else "_" for c in name[:NAME_CHARS])
    if len(name) > NAME_CHARS:
        out += "~"
    return out or "_"
