"""A problem package, a row of a problem file and a request to `passk serve` are hostile input: read as
data and checked before anything runs, by this one module, which every reader that takes limits or files
from its input calls (Kattis packages, Codeforces and Code-Contests-Plus rows, the service's inline records).

- Files: only regular files that resolve inside the package are read (a link inside it is fine, as
  problemtools' own examples use them); a link that leads out of it, a device, a FIFO, a socket or anything
  under /proc is refused by name. Directories are walked without leaving the package, to a bounded depth,
  and a package's test data is bounded in number and bytes.
- Numbers: every stated limit is a positive finite number at most its ceiling (Ceilings: configurable, and
  recorded in the run's manifest with its config); anything else is refused with one line naming the file,
  the key, the value and the ceiling.
- YAML: read safely (no Python objects), at most YAML_BYTES, nested at most so deep, and refused when its
  aliases expand it past a small multiple of its size ("billion laughs").

Every refusal is an InputError (exit 2; HTTP 400 in the service) of the form `file: key: value (why)`."""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, fields
from pathlib import Path

from harness.core.errors import InputError

YAML_BYTES = 1 << 20          # a problem.yaml, testdata.yaml or test_group.yaml (real ones are a few KiB)
YAML_EXPANSION = 8            # nodes after alias expansion, per byte of the document, at most (and 10,000 more)
SHOWN = 60                    # characters of a refused value shown in a message


@dataclass(frozen=True)
class Ceilings:
    """The most a package, a row or a request may state. A value above its ceiling is refused, never
    clipped: a limit taken silently lower would change verdicts without saying so. Configurable (the run
    config's `ceilings:` section, `--ceiling key=value`) and recorded in the manifest."""

    time_limit_s: float = 60.0          # CPU seconds per test (and a request's timeout)
    memory_mb: int = 4096               # a program's memory
    output_mb: int = 256                # a program's output
    validation_time_s: float = 300.0    # a checker's or interactor's time per test
    validation_memory_mb: int = 4096    # a checker's or interactor's memory
    time_multiplier: float = 20.0       # Kattis's multipliers (time_multiplier, ac_to_time_limit, margins)
    tests: int = 10000                  # tests of one problem
    depth: int = 32                     # directories nested under a package's data/
    data_mb: int = 512                  # a problem's test data (inputs and answers together)
    compile_time_s: float = 300.0       # a compile step a request asks for

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise InputError(f"ceiling {f.name} must be a positive number, got {value!r}")

    @classmethod
    def parse(cls, items, base: "Ceilings | None" = None) -> "Ceilings":
        """Ceilings from `key=value` strings (the CLI's --ceiling), on `base`."""
        values = {}
        names = {f.name: f for f in fields(cls)}
        for item in items or ():
            key, sep, raw = str(item).partition("=")
            if not sep or key not in names:
                raise InputError(f"--ceiling {item!r}: expected key=value, key one of {', '.join(names)}")
            try:
                values[key] = int(raw) if names[key].type in ("int", int) else float(raw)
            except ValueError:
                raise InputError(f"--ceiling {key}: {raw!r} is not a number") from None
        from dataclasses import replace
        return replace(base or cls(), **values)


DEFAULT_CEILINGS = Ceilings()


def shown(value) -> str:
    """A value as a message shows it: bounded, one line (it may be anything a package holds)."""
    text = repr(value) if not isinstance(value, str) else repr(value)
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def number(where: str, key: str, value, ceiling: float | None = None, *, integer: bool = False,
           unit: str = "", at_least: float | None = None) -> float:
    """A stated limit: a positive finite number (a whole one where `integer`), at most `ceiling` and at
    least `at_least`; else InputError `where: key: value (why)`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            try:
                parsed = float(value.strip())
            except ValueError:
                parsed = None
            if parsed is not None:   # checked as the number it states, shown as it was written
                return _checked(where, key, parsed, value.strip(), ceiling, integer, unit, at_least)
        raise InputError(f"{where}: {key}: {shown(value)} (not a number)")
    return _checked(where, key, value, value, ceiling, integer, unit, at_least)


def _checked(where: str, key: str, value: float, written, ceiling, integer: bool, unit: str, at_least) -> float:
    written = written if isinstance(written, str) else shown(written)
    written = shown(written) if len(written) > SHOWN else written
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: {key}: {written} (must be a positive finite number)")
    if integer and value != int(value):
        raise InputError(f"{where}: {key}: {written} (must be a whole number)")
    if at_least is not None and value < at_least:
        raise InputError(f"{where}: {key}: {written} (must be at least {at_least:g}{unit})")
    if ceiling is not None and value > ceiling:
        raise InputError(f"{where}: {key}: {written} (over the ceiling of {ceiling:g}{unit}; raise it with "
                         f"--ceiling, or the run config's ceilings:, if the problem really needs it)")
    return int(value) if integer else float(value)


def text_of(where: str, key: str, value, *, limit: int = 1 << 16, allow_none: bool = True) -> str | None:
    """A string a package states (a name, a flag): a string, or a number written as one; bounded."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"{where}: {key}: {shown(value)} (must be a string)")
    value = str(value)
    if len(value) > limit:
        raise InputError(f"{where}: {key}: a string of {len(value)} characters (at most {limit})")
    return value


def mapping(where: str, key: str, value, allow_none: bool = True) -> dict:
    if value is None and allow_none:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{where}: {key}: {shown(value)} (must be a mapping)")
    return value


# --------------------------------------------------------------------------------------------------
# YAML
# --------------------------------------------------------------------------------------------------
class _Recursive(Exception):
    pass


def _expanded_size(node, memo: dict, limit: int, path: set | None = None) -> int:
    """How many nodes a composed YAML node stands for once every alias is expanded (an alias shares its
    anchor's node: the count follows every reference), capped just past `limit`. An alias inside its own
    anchor (a recursive document) raises _Recursive. The composer's own recursion bounds the depth."""
    import yaml
    key = id(node)
    if key in memo:
        return memo[key]
    path = path if path is not None else set()
    if key in path:
        raise _Recursive()
    path.add(key)
    total = 1
    children = (node.value if isinstance(node, yaml.SequenceNode) else
                [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else ())
    for child in children:
        total += _expanded_size(child, memo, limit, path)
        if total > limit:
            total = limit + 1
            break
    path.discard(key)
    memo[key] = total
    return total


def load_yaml(path: Path, data: bytes, where: str | None = None):
    """A YAML document's value, read safely: bounded bytes, bounded nesting, bounded alias expansion.
    InputError naming the file (and line) otherwise."""
    import yaml
    where = where or str(path)
    if len(data) > YAML_BYTES:
        raise InputError(f"{where}: {len(data)} bytes of YAML (at most {YAML_BYTES})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{where}: not valid UTF-8 (byte {e.start})") from None
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            limit = YAML_EXPANSION * len(data) + 10000
            try:
                size = _expanded_size(node, {}, limit)
            except _Recursive:
                raise InputError(f"{where}: an alias inside its own anchor (a recursive document): refused") from None
            if size > limit:
                raise InputError(f"{where}: its aliases expand it past {limit} nodes ({len(data)} bytes of YAML): "
                                 "refused (an alias bomb)")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"{where}:{mark.line + 1 if mark else '?'}: invalid YAML "
                         f"({shown(getattr(e, 'problem', None) or str(e))})") from None
    except RecursionError:
        raise InputError(f"{where}: YAML nested too deeply") from None


# --------------------------------------------------------------------------------------------------
# Files of a package
# --------------------------------------------------------------------------------------------------
def _under_proc(path: Path) -> bool:
    parts = path.parts
    return len(parts) > 1 and parts[1] in ("proc", "sys", "dev")


class Package:
    """A package directory whose files are read only through here: every path resolves inside `root`, or
    inside `boundary` where one is given (the contest directory a run was given, whose packages may share
    files by links, as BAPCtools' contests share their validators' header): never outside what the user
    named."""

    def __init__(self, root: Path, ceilings: Ceilings | None = None, boundary: Path | None = None):
        self.given = Path(root)
        real = Path(os.path.realpath(root))
        if _under_proc(real):
            raise InputError(f"{root}: a package under {'/' + real.parts[1]} is refused")
        self.root = Path(os.path.realpath(boundary)) if boundary is not None else real
        if real != self.root and self.root not in real.parents:
            raise InputError(f"{root}: not inside {boundary}")
        self.what = "the package" if boundary is None else "the contest directory"
        self.ceilings = ceilings or DEFAULT_CEILINGS
        self.data_bytes = 0

    def rel(self, path: Path) -> str:
        try:
            return Path(path).relative_to(self.given).as_posix()
        except ValueError:
            return str(path)

    def where(self, path: Path) -> str:
        return str(self.given / self.rel(path)) if not Path(path).is_absolute() else str(path)

    def resolve(self, path: Path, kind: str = "file") -> Path:
        """The real path of `path` (given inside the package), refused when it leads out of the package,
        into /proc, or is not a regular file (kind "file") or a directory (kind "dir"); kind "any" checks
        only where it leads."""
        real = Path(os.path.realpath(path))
        if _under_proc(real):
            raise InputError(f"{self.where(path)}: a link into /{real.parts[1]} is refused")
        if real != self.root and self.root not in real.parents:
            raise InputError(f"{self.where(path)}: leads outside {self.what} (a link out of it is refused)")
        try:
            st = os.stat(real)
        except OSError as e:
            raise InputError(f"{self.where(path)}: cannot be read ({e.strerror or e})") from None
        if kind == "any":
            return real
        if kind == "dir":
            if not stat.S_ISDIR(st.st_mode):
                raise InputError(f"{self.where(path)}: not a directory")
        elif not stat.S_ISREG(st.st_mode):
            what = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or
                    stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else
                    "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file")
            raise InputError(f"{self.where(path)}: {what} (only regular files are read)")
        return real

    def is_file(self, path: Path) -> bool:
        """Whether `path` names something (a file, a link, anything); what it is, read_bytes checks."""
        return os.path.lexists(path) and not os.path.isdir(path)

    def is_dir(self, path: Path) -> bool:
        if not os.path.lexists(path):
            return False
        if os.path.islink(path):
            # refused when it leads out; else whatever it names inside the package (a file linked to
            # another file of the package is a file, as problemtools' own examples have them)
            self.resolve(path, "any")
        return os.path.isdir(path)

    def read_bytes(self, path: Path, limit: int | None = None, data: bool = False) -> bytes:
        """A file's bytes, read from a regular file inside the package, at most `limit` bytes (else
        InputError); `data` counts them against the package's test data ceiling."""
        real = self.resolve(path)
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise InputError(f"{self.where(path)}: not a regular file")
            cap = limit if limit is not None else self.ceilings.data_mb << 20
            if st.st_size > cap:
                raise InputError(f"{self.where(path)}: {st.st_size} bytes (at most {cap})")
            if data:
                self.data_bytes += st.st_size
                if self.data_bytes > self.ceilings.data_mb << 20:
                    raise InputError(f"{self.where(path)}: the package's test data passes the ceiling of "
                                     f"{self.ceilings.data_mb} MB (ceiling data_mb)")
            chunks, size = [], 0
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > cap:
                    raise InputError(f"{self.where(path)}: more than {cap} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def read_text(self, path: Path, limit: int | None = None, data: bool = False) -> str:
        """A file's text: UTF-8, or its bytes carried as they are (surrogateescape) where they are not."""
        raw = self.read_bytes(path, limit, data)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "surrogateescape")

    def yaml(self, path: Path):
        return load_yaml(path, self.read_bytes(path, YAML_BYTES), self.where(path))

    def entries(self, directory: Path) -> list[Path]:
        """A directory's entries, sorted, each given inside the package (the directory itself checked)."""
        self.resolve(directory, "dir")
        try:
            names = sorted(os.listdir(directory))
        except OSError as e:
            raise InputError(f"{self.where(directory)}: cannot be listed ({e.strerror or e})") from None
        return [Path(directory) / name for name in names]

    def walk_files(self, directory: Path, max_depth: int | None = None) -> list[Path]:
        """Every file under `directory` (links followed inside the package only, each directory once),
        at most `max_depth` levels deep: [path given inside the package]."""
        out, seen = [], set()
        depth_cap = self.ceilings.depth if max_depth is None else max_depth

        def visit(d: Path, depth: int):
            if depth > depth_cap:
                raise InputError(f"{self.where(d)}: nested {depth} directories deep (ceiling depth {depth_cap})")
            real = self.resolve(d, "dir")
            if real in seen:
                return
            seen.add(real)
            for entry in self.entries(d):
                if self.is_dir(entry):
                    visit(entry, depth + 1)
                else:
                    out.append(entry)
        visit(Path(directory), 0)
        return out
