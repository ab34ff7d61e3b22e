"""What every channel's verdict looks like."""

import time

from ..text import clean_name, clean_text, safe_str


class Verdict(Exception):
    """`extra`: numbers and short names for the row's channel_detail (which input decided, its limit);
    `truth`: the ground truth's outputs and times (EvalPlus's, channels/differential.py)."""

    def __init__(self, status, reason, detail="", extra=None, truth=None):
        super().__init__(reason)
        self.verdict = {"status": status, "reason": clean_text(reason, 120), "detail": clean_text(detail),
                        "t_end": time.monotonic()}
        if extra:
            self.verdict["extra"] = extra
        if truth is not None:
            self.verdict["truth"] = truth


def _describe(e) -> str:
    return f"{clean_name(type(e).__name__)}: {clean_text(safe_str(e), 700)}"
