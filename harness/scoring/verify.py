"""A problem package's own submissions against the verdicts their directories promise (what problemtools'
`verifyproblem` checks of them): a pure function of the rows (`expected` is the sample's directory).

    accepted            passed (and, on a scoring problem, the full score)
    partially_accepted  a score strictly between 0 and full
    wrong_answer        failed by wrong_answer (or presentation_error)
    time_limit_exceeded timed out by the time limit (or, interactive, by the idleness limit)
    run_time_error      failed by runtime_error (or memory_limit: a crash for want of memory)
    rejected            anything but passed
    brute_force         time_limit or runtime_error, never a wrong answer
"""

from __future__ import annotations

from harness.core import text

EXPECTATIONS = {
    "accepted": lambda r: r.status == "passed" and (r.score is None or r.score >= 1),
    "partially_accepted": lambda r: r.score is not None and 0 < r.score < 1,
    "wrong_answer": lambda r: r.status == "failed" and r.reason in ("wrong_answer", "presentation_error"),
    "time_limit_exceeded": lambda r: r.status == "timed_out" and r.reason in ("time_limit", "idleness_limit"),
    "run_time_error": lambda r: r.status == "failed" and r.reason in ("runtime_error", "memory_limit"),
    "rejected": lambda r: r.status != "passed",
    "brute_force": lambda r: r.reason in ("time_limit", "idleness_limit", "runtime_error", "memory_limit"),
}


def check(rows) -> list[dict]:
    """One entry per submission: its task, file, expected directory, what passk said, and whether they agree
    (None where the directory promises nothing passk knows)."""
    out = []
    for r in sorted(rows, key=lambda r: (r.task_id, r.sample_index)):
        expected = (r.sample or {}).get("expected")
        rule = EXPECTATIONS.get(expected)
        out.append({"task_id": r.task_id, "file": (r.sample or {}).get("file", str(r.sample_index)),
                    "language": r.language, "expected": expected, "status": r.status, "reason": r.reason,
                    "score": r.score, "agrees": None if rule is None else bool(rule(r))})
    return out


def format_check(entries: list[dict]) -> str:
    lines = [f"{'submission':<48} {'language':<10} {'expected':<20} {'passk':<28} agrees"]
    for e in entries:
        got = f"{e['status']} {e['reason']}" + (f" {e['score']:.3f}" if e["score"] is not None else "")
        mark = {True: "yes", False: "NO", None: "-"}[e["agrees"]]
        lines.append(f"{e['file'][:48]:<48} {e['language'] or 'python':<10} {str(e['expected']):<20} {got[:28]:<28} {mark}")
    agree = sum(1 for e in entries if e["agrees"])
    known = sum(1 for e in entries if e["agrees"] is not None)
    lines.append(f"{agree} of {known} submissions got the verdict their directory promises")
    return text.terminal_lines(lines)
