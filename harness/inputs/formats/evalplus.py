"""EvalPlus's HumanEval+ and MBPP+ releases (and their Mini and NoExtreme variants), read unchanged:
task_id, prompt, entry_point, canonical_solution, contract, base_input, plus_input, atol; MBPP+ also
has its assertion text. Recognised by `plus_input` (a file with it is never read as another format);
HumanEval+ or MBPP+ by the task ids (`Mbpp/N`) or MBPP+'s `assertion` field, or forced with
--format humaneval+ / mbpp+ (EvalPlus's own --dataset).

There are no test code and no expected outputs in these files: EvalPlus runs the canonical solution
(prompt + canonical_solution, the contract left out, as its evaluator does) on every input and
compares each candidate's return value with the ground truth's (harness/execution/groundtruth.py runs it in the
sandbox; containers/box/channels/differential.py judges). MBPP+ inputs are JSON, and some tasks'
functions take tuples, sets or complex numbers: they are converted per task id as EvalPlus's
`mbpp_deserialize_inputs` does (read there; the table below is the same conversions, by task)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.core.errors import InputError
from harness.inputs.problem import Problem
from harness.inputs.formats.base import Format, add, register, require

# EvalPlus 0.3.1 (evalplus/eval/_special_oracle.py, evalplus/eval/__init__.py): MBPP+ tasks judged
# otherwise than by equality, by the function's name.
MBPP_SET_EQUAL = ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly", "larg_nnum",
                  "intersection_array", "find_dissimilar", "Diff")
MBPP_NOT_NONE = ("check_str", "text_match_three", "text_starta_endb")
MBPP_ORACLES = {"are_equivalent": "always", "sum_div": "or_zero", "surface_Area": "surface_area",
                "digit_distance_nums": "digit_distance"}


def oracle_of(dataset: str, entry_point: str) -> str:
    """How EvalPlus judges one task's outputs: equal (then with a tolerance), or its special case."""
    if dataset == "humaneval" and entry_point == "find_zero":
        return "find_zero"
    if dataset == "mbpp":
        if entry_point in MBPP_ORACLES:
            return MBPP_ORACLES[entry_point]
        if entry_point in MBPP_SET_EQUAL:
            return "set_equal"
        if entry_point in MBPP_NOT_NONE:
            return "not_none"
    return "equal"


def _tuples(xs):
    return [tuple(x) for x in xs]


def _nested_tuples(x):
    return tuple(_nested_tuples(i) for i in x) if isinstance(x, list) else x


def _to_tuples_in_lists(inp):
    return [[tuple(lst) for lst in lst_lst] for lst_lst in inp]


# task number -> how one input (a JSON list of arguments) becomes the call's arguments
_CONVERSIONS = {}
for _n in (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630, 726, 740,
           744, 809):
    _CONVERSIONS[_n] = _tuples                                       # every argument a tuple
for _n in (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780):
    _CONVERSIONS[_n] = _to_tuples_in_lists                           # each argument a list of tuples
for _n in (75, 413, 444, 753):
    _CONVERSIONS[_n] = lambda inp: [[tuple(x) for x in inp[0]]] + [inp[1]]
for _n in (106, 750):
    _CONVERSIONS[_n] = lambda inp: [inp[0]] + [tuple(inp[1])]
for _n in (250, 405, 446, 617, 720, 763, 808):
    _CONVERSIONS[_n] = lambda inp: [tuple(inp[0])] + [inp[1]]
for _n in (259, 401, 445):
    _CONVERSIONS[_n] = lambda inp: [tuple(x) for x in _to_tuples_in_lists(inp)]
for _n in (580, 615, 791):
    _CONVERSIONS[_n] = _nested_tuples                                # every list, at any depth, a tuple
# sets (an empty list becomes an empty *dict* there, which is what EvalPlus passes)
_CONVERSIONS[115] = lambda inp: [[set(x) if isinstance(x, list) and len(x) else {} for x in inp[0]]]
_CONVERSIONS[124] = lambda inp: (float(inp[0]), complex(inp[1]))
_CONVERSIONS[252] = lambda inp: [complex(inp[0])]
_CONVERSIONS[278] = lambda inp: [tuple(x) for x in [[tuple(i) if isinstance(i, list) else i for i in inp[0]]]]
_CONVERSIONS[307] = lambda inp: [tuple(inp[0])] + [inp[1], inp[2]]
_CONVERSIONS[722] = lambda inp: [{k: tuple(v) for k, v in inp[0].items()}] + inp[1:]


def mbpp_arguments(task_number: int | None, inp):
    convert = _CONVERSIONS.get(task_number)
    return convert(inp) if convert is not None else inp


@dataclass(frozen=True)
class DifferentialTests:
    """What a problem of EvalPlus's is judged by: inputs, and how outputs are compared with the ground
    truth's. Inputs are the call's arguments as Python values (tuples, sets and complex numbers where
    MBPP+ converts to them); they cross into the sandbox as the codec's plain data."""

    dataset: str                    # "humaneval" or "mbpp": EvalPlus's --dataset
    oracle: str                     # oracle_of()
    atol: float
    base: tuple = field(repr=False)   # ((arg, ...), ...)
    plus: tuple = field(repr=False)

    @property
    def sizes(self) -> dict:
        return {"base": len(self.base), "plus": len(self.plus)}


def _inputs(where, obj, name, task_number, dataset):
    value = require(where, obj, name, list)
    out = []
    for i, inp in enumerate(value):
        if not isinstance(inp, list):
            raise InputError(f"{where}: field {name!r}: input {i} must be a list of arguments, got {type(inp).__name__}")
        try:
            args = mbpp_arguments(task_number, inp) if dataset == "mbpp" else inp
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) as e:
            raise InputError(f"{where}: field {name!r}: input {i} does not have the shape task "
                             f"{obj.get('task_id')!r} takes ({type(e).__name__}: {e})") from None
        out.append(tuple(args))
    return tuple(out)


def dataset_of(record: dict) -> str:
    """EvalPlus's --dataset for a record: MBPP+ by its `Mbpp/` task id or its `assertion` field."""
    return "mbpp" if str(record.get("task_id", "")).startswith("Mbpp/") or "assertion" in record else "humaneval"


def detect(obj: dict) -> bool:
    return "plus_input" in obj


def _load(path, records, dataset: str) -> dict:
    problems: dict = {}
    for where, obj in records:
        task_id = require(where, obj, "task_id")
        prompt = require(where, obj, "prompt", allow_empty=True)
        entry_point = require(where, obj, "entry_point")
        if not entry_point.isidentifier():
            raise InputError(f"{where}: entry_point {entry_point!r} is not a Python identifier")
        canonical = require(where, obj, "canonical_solution")
        for name in ("contract", "assertion", "test"):
            if name in obj and not isinstance(obj[name], str):
                raise InputError(f"{where}: field {name!r} must be a string, got {type(obj[name]).__name__}")
        atol = obj.get("atol", None)
        if "atol" not in obj:
            raise InputError(f"{where}: missing field 'atol'")
        if isinstance(atol, bool) or not isinstance(atol, (int, float)) or not math.isfinite(atol) or atol < 0:
            raise InputError(f"{where}: field 'atol' must be a number ≥ 0, got {atol!r}")
        number = None
        tail = task_id.rsplit("/", 1)[-1]
        if dataset == "mbpp" and tail.isdigit():
            number = int(tail)
        base = _inputs(where, obj, "base_input", number, dataset)
        plus = _inputs(where, obj, "plus_input", number, dataset)
        if not base and not plus:
            raise InputError(f"{where}: task {task_id!r} has no inputs (base_input and plus_input are empty)")
        tests = DifferentialTests(dataset, oracle_of(dataset, entry_point), float(atol), base, plus)
        notes = {"contract": obj.get("contract", ""), "where": where}
        if dataset == "mbpp":
            notes["assertion"] = obj.get("assertion", "")
        add(problems, where, Problem(task_id, prompt, "", entry_point, canonical, runner="evalplus",
                                     format="humaneval+" if dataset == "humaneval" else "mbpp+",
                                     aliases=(tail,) if dataset == "mbpp" else (), notes=notes,
                                     differential=tests))
    return problems


def load_any(path, records, ceilings=None) -> dict:
    return _load(path, records, dataset_of(records[0][1]))


def _forced(dataset):
    def load(path, records, ceilings=None):
        first = records[0][1]
        if "plus_input" not in first:
            raise InputError(f"{records[0][0]}: an EvalPlus file has 'plus_input' and 'base_input'; this record has "
                             f"neither (its fields: {', '.join(sorted(first))})")
        return _load(path, records, dataset)
    return load


FIELDS = "task_id, prompt, entry_point, canonical_solution, base_input, plus_input, atol (+ contract; MBPP+: assertion)"
register(Format("humaneval+", "EvalPlus HumanEval+ (and its Mini, NoExtreme variants)",
                lambda obj: detect(obj) and dataset_of(obj) == "humaneval", _forced("humaneval"), FIELDS))
register(Format("mbpp+", "EvalPlus MBPP+", lambda obj: detect(obj) and dataset_of(obj) == "mbpp",
                _forced("mbpp"), FIELDS))


def refuse_evalplus(where: str, obj: dict, name: str) -> None:
    """An EvalPlus record (HumanEval+, MBPP+) is never read as another format: its tests are its inputs,
    judged against the ground truth, and read as plain HumanEval or MBPP its plus inputs would be lost."""
    if "plus_input" in obj:
        plus = dataset_of(obj) + "+"
        raise InputError(f"{where}: an EvalPlus record (it has 'plus_input'), not {name}: read it as {plus} "
                         f"(leave --format out, or --format {plus})")
