"""What every channel's verdict looks like."""

import time

from ..text import clean_name, clean_text, safe_str


class Verdict(Exception):
    def __init__(self, status, reason, detail=""):
        super().__init__(reason)
        self.verdict = {"status": status, "reason": clean_text(reason, 120), "detail": clean_text(detail),
                        "t_end": time.monotonic()}


def _describe(e) -> str:
    return f"{clean_name(type(e).__name__)}: {clean_text(safe_str(e), 700)}"
