"""Progress of a run on stderr: a bar on a terminal; elsewhere (a file, CI, nohup) one plain status line
every few seconds; nothing when quiet."""

from __future__ import annotations

import sys
import threading
import time

from harness.core.constants import LABELS

MODES = ("auto", "quiet")
STATUS_EVERY_S = 5.0


class Progress:
    def __init__(self, total: int, initial: int = 0, mode: str | bool = "auto", stream=None,
                 every_s: float = STATUS_EVERY_S):
        self.total, self.done, self.start_done = total, initial, initial
        self.counts = {label: 0 for label in LABELS}
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.bar = self._thread = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        mode = {True: "auto", False: "quiet", None: "quiet"}.get(mode, mode)
        if mode not in MODES:
            raise ValueError(f"progress mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "quiet":
            return
        if self.stream.isatty():
            from tqdm import tqdm
            self.bar = tqdm(total=total, initial=initial, unit="cand", dynamic_ncols=True, file=self.stream)
        else:
            self._thread = threading.Thread(target=self._every, args=(every_s,), daemon=True)
            self._thread.start()

    def update(self, status: str) -> None:
        with self._lock:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(self.counts, refresh=False)

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def line(self) -> str:
        with self._lock:
            done, counts = self.done, dict(self.counts)
        elapsed = time.monotonic() - self.started
        rate = (done - self.start_done) / elapsed if elapsed > 0 else 0.0
        left = self.total - done
        eta = f"ETA {left / rate:.0f} s" if rate > 0 and left > 0 else ("done" if left <= 0 else "ETA -")
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        labels = " ".join(f"{k} {v}" for k, v in counts.items())
        return f"passk: {done}/{self.total}{share} · {labels} · {rate:.1f} cand/s · {eta}"

    def _every(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            print(self.line(), file=self.stream, flush=True)
