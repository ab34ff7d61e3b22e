"""inspect tasks that execute code, run by inspect_ai itself with `sandbox="local"` and `sandbox="passk"`: the
scores side by side, and the passk containers left after them.

- inspect_evals' HumanEval: its own `record_to_sample`, `verify()` scorer and instruction, unchanged, on
  HumanEval's problems read from --problems (inspect_evals' task reads them from Hugging Face, which these
  machines do not reach, so the Task is built here around its parts, as `humaneval()` builds it). inspect's
  `mockllm` model answers each sample with a canned completion: the canonical solution, a wrong body
  (`return None`), an exit before the tests (`sys.exit(0)`: inspect_evals' scorer reads the exit code, so this
  hack passes under either sandbox; passk does not change the task's own scorer) and, on --loops problems, a
  loop until the scorer's 30 s timeout.
- Our own task (tests/test_inspect_sandbox.py): exec with input, write_file, read_file.

Needs inspect_evals next to inspect_ai (`pip install inspect_evals==0.26.0`; 0.28 needs a package PyPI does not
have here), e.g. in a venv with the system's site-packages:

    python3 scripts/agreement/inspect_tasks.py --problems ../shared/data/HumanEval.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

VARIANTS = {
    "canonical": lambda row: row["canonical_solution"],
    "return None": lambda row: "    return None\n",
    "exit(0) first": lambda row: "    import sys\n    sys.exit(0)\n",
    "loop": lambda row: "    while True:\n        pass\n",
}
MARK = "\n# passk-variant: "   # appended to a sample's input so that the canned model knows which answer to give


def humaneval_task(rows: list[dict], loops: int):
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.solver import generate
    from inspect_evals.humaneval.humaneval import INSTRUCTION, record_to_sample, verify

    to_sample = record_to_sample(INSTRUCTION)
    samples, answers = [], {}
    for i, row in enumerate(rows):
        for name, body in VARIANTS.items():
            if name == "loop" and i >= loops:
                continue
            sample = to_sample(row)
            sample.id = f"{row['task_id']}#{name}"
            sample.input = sample.input + MARK + name
            samples.append(sample)
            answers[sample.input] = body(row)
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=verify()), answers


def canned_model(answers: dict):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content=answers[messages[-1].text])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)   # no tiktoken download
        return out
    return get_model("mockllm/model", custom_outputs=answer)


def run(task, model, sandbox: str, logs: Path) -> tuple[dict, float]:
    from inspect_ai import eval as inspect_eval
    t0 = time.monotonic()
    log = inspect_eval(task, model=model, sandbox=sandbox, log_dir=str(logs / sandbox), display="none")[0]
    if log.status != "success":
        raise SystemExit(f"the {sandbox} run ended {log.status}: {log.error}")
    scores = {s.id: next(iter(s.scores.values())).value for s in log.samples}
    return scores, time.monotonic() - t0


def left() -> int:
    import docker
    from harness.integrations.inspect_sandbox import LABEL_INSPECT
    return len(docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_INSPECT}=1"}))


def compare(title: str, local: dict, passk: dict, group) -> int:
    print(f"\n{title}")
    print(f"| {'answers':<16} | samples | correct (local) | correct (passk) | disagreements |")
    print(f"|{'-' * 18}|---------|-----------------|-----------------|---------------|")
    groups: dict[str, list[str]] = {}
    for sid in local:
        groups.setdefault(group(sid), []).append(sid)
    total = 0
    for name, ids in groups.items():
        differ = [sid for sid in ids if local[sid] != passk.get(sid)]
        total += len(differ)
        print(f"| {name:<16} | {len(ids):>7} | {sum(local[s] == 'C' for s in ids):>15} | "
              f"{sum(passk.get(s) == 'C' for s in ids):>15} | {len(differ):>13} |")
        for sid in differ[:5]:
            print(f"    {sid}: local {local[sid]}, passk {passk.get(sid)}")
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", required=True, help="HumanEval.jsonl(.gz)")
    ap.add_argument("--limit", type=int, default=None, help="the first N problems only")
    ap.add_argument("--loops", type=int, default=4, help="problems that also get a looping answer (30 s each)")
    args = ap.parse_args(argv)
    opener = gzip.open if args.problems.endswith(".gz") else open
    with opener(args.problems, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()][:args.limit]
    differ = 0
    with tempfile.TemporaryDirectory(prefix="passk-inspect-logs-") as logs:
        task, answers = humaneval_task(rows, args.loops)
        local, t_local = run(task, canned_model(answers), "local", Path(logs))
        task, answers = humaneval_task(rows, args.loops)
        passk, t_passk = run(task, canned_model(answers), "passk", Path(logs))
        differ += compare(f"inspect_evals HumanEval, {len(rows)} problems (local {t_local:.0f} s, passk {t_passk:.0f} s)",
                          local, passk, lambda sid: sid.split("#", 1)[1])
        after_humaneval = left()
        from tests.test_inspect_sandbox import PROGRAMS, _model, _task
        local, _ = run(_task(), _model(), "local", Path(logs))
        passk, _ = run(_task(), _model(), "passk", Path(logs))
        differ += compare("our task (exec with input, write_file, read_file)", local, passk, lambda sid: sid)
        wrong = {sid for sid, (_, want) in PROGRAMS.items() if passk.get(sid) != want}
    print(f"\ncontainers left: after HumanEval {after_humaneval}, after both {left()}")
    print(f"disagreements: {differ}; our task's samples off their expected score: {len(wrong)}")
    return 1 if differ or wrong or left() else 0


if __name__ == "__main__":
    sys.exit(main())
