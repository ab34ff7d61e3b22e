"""Text that passk did not write itself (a candidate's messages and output, names from input files):
bounded and made valid before it is stored, and escaped for where it is shown, so that it is only
ever data, never structure, in a file, a report or a terminal."""

from __future__ import annotations

import re

DETAIL_CHARS = 1000
REASON_CHARS = 120
TAIL_CHARS = 4096

# Characters that change how text is displayed rather than being text: C0 and C1 controls, DEL,
# and the bidirectional and zero-width format characters (a line can be made to read backwards).
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def valid(text: str) -> str:
    """`text` encodable as UTF-8: lone surrogates (which JSON input and exception messages can hold)
    become backslash escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def clean(value, limit: int = DETAIL_CHARS) -> str:
    """Bounded, valid text for storage. Anything that is not a string becomes its repr-free str()."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    size = len(text)
    text = valid(text[:limit])[:limit]  # escapes can lengthen it: the bound holds after them
    return text + f"… [{size - limit} more characters]" if size > limit else text


_REASON_CHARS = re.compile(r"[^\w.:~-]", re.UNICODE)
_PLAIN_REASON = re.compile(r"[A-Za-z0-9_.:~-]{0,%d}" % REASON_CHARS)


def clean_reason(value) -> str:
    """A reason is a short key (`assertion`, `exception:ValueError`): one line of word characters,
    '.', ':', '~' and '-', whatever the container sent."""
    text = value if isinstance(value, str) else ""
    if _PLAIN_REASON.fullmatch(text):   # the usual case, and already what the rest would make of it
        return text
    text = _REASON_CHARS.sub("_", text[:REASON_CHARS])  # surrogates and controls are not word characters
    return "".join(c if c.isprintable() else "_" for c in text)


def visible(text: str) -> str:
    """Control and format characters shown as escapes (\\x1b, \\u202e): what is printed is what is there."""
    return _INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), valid(text))


def terminal(value, limit: int = 300) -> str:
    """For a terminal: one line, bounded, no escape sequences."""
    text = clean(value if isinstance(value, str) else str(value), limit)
    return visible(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t"))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~!#{}])")


def markdown_inline(value, limit: int = DETAIL_CHARS) -> str:
    """Text for one line of Markdown (a table cell, a list item): no line breaks, every character that
    Markdown or inline HTML could read as markup escaped."""
    text = terminal(value, limit)
    return _MD_SPECIAL.sub(r"\\\1", text)



def terminal_lines(lines: list[str]) -> str:
    """Lines for a terminal, each kept to one line: what a value interpolated into a line holds (a
    newline, an escape sequence) cannot start another line or move the cursor."""
    return "\n".join(terminal(line, 4000) for line in lines)
