"""Text from outside passk: bounded and valid for storage, inert where it is shown."""

from harness.core import text


def test_lone_surrogates_become_escapes_and_long_text_is_cut():
    """Regression: an exception message holding '\\ud800' made writing its row raise UnicodeEncodeError."""
    assert text.clean("a\ud800b") == "a\\ud800b"
    cut = text.clean("x" * 5000, 100)
    assert cut.startswith("x" * 100) and cut.endswith("[4900 more characters]")
    cut.encode("utf-8")


def test_a_reason_is_one_short_key_whatever_it_was():
    """Regression: an exception class name with newlines and Markdown became structure in the report."""
    reason = text.clean_reason("exception:X\n\n## pass@k\n| 1 | 1.0 |\x1b[2J\ud800" + "E" * 500)
    assert len(reason) <= text.REASON_CHARS
    assert reason.startswith("exception:X__") and all(c.isalnum() or c in "_.:~-" for c in reason)
    assert text.clean_reason(None) == ""


def test_markdown_inline_cannot_make_structure():
    out = text.markdown_inline("a\n## h\n| x | y |<script>`*_[l](u)")
    assert "\n" not in out and "\\|" in out and "\\<script\\>" in out and "\\#\\#" in out and "\\`" in out


def test_terminal_text_has_no_escape_sequences_or_line_breaks():
    out = text.terminal("red \x1b[31m\u202etxt\rline\nnext")
    assert "\x1b" not in out and "\u202e" not in out and "\n" not in out and "\r" not in out
    assert "\\x1b" in out and "\\u202e" in out
    assert text.terminal_lines(["one\ntwo", "three"]).splitlines() == ["one\\ntwo", "three"]
