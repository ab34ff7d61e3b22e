"""Repositories on this machine (`--repos DIR`: DIR/<owner>/<name>, a bare mirror or a clone with its work
tree) and the tree a candidate's patch applies to.

Nothing is fetched: a repository or a base commit that is not here is one line naming the instance. The
tree at the base commit is checked out of the repository with a private index (the repository itself is
never changed) and committed into a fresh repository of one commit, so the candidate's copy holds no later
commit, tag, reflog or remote: a patch cannot read the fix from the future (the harness prunes its clone to
the same end). The version a setuptools_scm project would compute from its history is computed here, from
the tags reachable from the base commit, and given to the install (SETUPTOOLS_SCM_PRETEND_VERSION). The
result is cached per instance, as a gzip'd tar whose files belong to the candidate's user."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import HarnessError, InputError
from harness.core.paths import cache_root

CANDIDATE_UID = 10001          # containers/box/layout.py: the files are the candidate's in the container
TREE_FORMAT = 3                 # 3: submodules checked out from --repos
FIXED_DATE = "2000-01-01T00:00:00+0000"
MAX_TREE_BYTES = 1 << 30       # a tree larger than this is refused (SWE-bench's largest are a few hundred MB)


@dataclass(frozen=True)
class Tree:
    instance_id: str
    path: Path                 # the .tar.gz
    base: str                  # the fresh repository's one commit
    scm_version: str | None
    bytes: int                 # of the tar.gz
    files: int


def git_dir(repos: Path | str, repo: str) -> Path:
    """The git directory of `repo` (owner/name) under `repos`: a bare repository, or a clone's .git."""
    root = Path(repos) / repo
    if (root / ".git").is_dir():
        return root / ".git"
    if (root / "objects").is_dir() and (root / "HEAD").is_file():
        return root
    return root / ".git"   # not there: the caller names it


def _git(gdir: Path, *args, env=None, input=None, check=True) -> subprocess.CompletedProcess:
    cmd = ["git", f"--git-dir={gdir}", *args]
    proc = subprocess.run(cmd, capture_output=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1",
                                                         "GIT_TERMINAL_PROMPT": "0", **(env or {})}, input=input)
    if check and proc.returncode != 0:
        raise HarnessError(f"git {' '.join(args[:3])} failed: {proc.stderr.decode('utf-8', 'replace').strip()[-500:]}")
    return proc


def check_available(repos: Path | str | None, repo: str, commit: str, where: str) -> Path:
    """The repository's git directory, having checked it holds `commit`; InputError naming the instance."""
    if not repos:
        raise InputError(f"{where}: a repository task needs --repos DIR (DIR/{repo}: a clone or a mirror of "
                         f"github.com/{repo}; nothing is fetched while a run evaluates)")
    gdir = git_dir(repos, repo)
    if not gdir.is_dir():
        raise InputError(f"{where}: repository {repo} is not under --repos ({Path(repos) / repo}: no git repository)")
    proc = _git(gdir, "cat-file", "-e", f"{commit}^{{commit}}", check=False)
    if proc.returncode != 0:
        raise InputError(f"{where}: commit {commit} is not in {Path(repos) / repo} (fetch it there first; "
                         "nothing is fetched while a run evaluates)")
    return gdir


def scm_version(gdir: Path, commit: str) -> str | None:
    """The version setuptools_scm's default scheme gives a checkout of `commit` with its history: the last
    tag reachable from it, or the next development release after it ("5.4.2.dev12+g1a2b3c4d")."""
    proc = _git(gdir, "describe", "--tags", "--long", "--abbrev=8", "--match", "[0-9]*", "--match", "v[0-9]*",
                commit, check=False)
    m = re.match(r"^v?(?P<tag>[0-9][0-9A-Za-z.]*)-(?P<n>\d+)-g(?P<node>[0-9a-f]+)$", proc.stdout.decode().strip())
    if proc.returncode != 0 or m is None:
        return None
    tag, distance, node = m.group("tag"), int(m.group("n")), m.group("node")
    if distance == 0:
        return tag
    parts = re.match(r"^(.*?)(\d+)$", tag.split("rc")[0].split("a")[0].split("b")[0].split(".dev")[0])
    bumped = f"{parts.group(1)}{int(parts.group(2)) + 1}" if parts else tag
    return f"{bumped}.dev{distance}+g{node}"


def export(repos, repo: str, commit: str, work: Path, gdir: Path | None = None, depth: int = 0) -> Path:
    """The files of `commit` checked out into `work` (a new directory), as the harness's clone makes them
    (attributes and filters apply), with an index of our own: the repository's HEAD, index and refs are
    left as they are. A submodule (astropy 3.x's astropy_helpers) is checked out at its recorded commit
    from its own repository under `repos` (the URL .gitmodules names, as DIR/<owner>/<name>). InputError
    naming the path for what this machine does not hold: a file the mirror lacks, a submodule's repository
    or commit."""
    gdir = gdir or check_available(repos, repo, commit, repo)
    entries = tree_entries(gdir, commit)
    missing = missing_objects(gdir, entries)
    if missing:
        raise InputError(f"{repo} at {commit}: the repository here lacks {len(missing)} file(s) the tree needs "
                         f"({', '.join(missing[:3])}); a partial mirror cannot give the tree as the harness has it")
    work.mkdir(parents=True)
    env = {"GIT_INDEX_FILE": str(work.parent / f".{work.name}.index")}
    try:
        _git(gdir, "read-tree", commit, env=env)
        _git(gdir, f"--work-tree={work}", "checkout-index", "--all", "--force", env=env)
    finally:
        Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    for path, sub_repo, sub_commit in submodules(gdir, commit, repo, entries):
        if depth >= 2:
            raise InputError(f"{repo} at {commit}: submodules nested more than two deep ({path})")
        target = work / path
        if target.exists():
            if any(target.iterdir()):
                raise InputError(f"{repo} at {commit}: submodule path {path} is not empty in the tree")
            target.rmdir()
        where = f"{repo} at {commit[:12]}, submodule {path}"
        export(repos, sub_repo, sub_commit, target, check_available(repos, sub_repo, sub_commit, where), depth + 1)
    return work


_SUBMODULE_URL = re.compile(r"^(?:https?://|git@|git://)github\.com[/:]([A-Za-z0-9][A-Za-z0-9_.-]{0,99})/"
                            r"([A-Za-z0-9][A-Za-z0-9_.-]{0,99}?)(?:\.git)?/?$")


def tree_entries(gdir: Path, commit: str) -> list[tuple[str, str, str]]:
    """[(type, object id, path)] of every entry of the tree at `commit` (git ls-tree -r: blobs and gitlinks)."""
    out = []
    for entry in _git(gdir, "ls-tree", "-r", "-z", commit).stdout.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        words = meta.split()
        if len(words) == 3:
            out.append((words[1].decode(), words[2].decode(), path.decode("utf-8", "replace")))
    return out


def submodules(gdir: Path, commit: str, repo: str, entries: list) -> list[tuple[str, str, str]]:
    """[(path in the tree, owner/name of its repository, its commit)] of the tree's submodules (its gitlinks,
    with .gitmodules' URL for each); a gitlink .gitmodules does not map, or a URL that is not GitHub's, is
    InputError naming it."""
    links = {path: oid for kind, oid, path in entries if kind == "commit"}
    if not links:
        return []
    proc = _git(gdir, "show", f"{commit}:.gitmodules", check=False)
    config = subprocess.run(["git", "config", "--file", "-", "--get-regexp", r"^submodule\..*\.(path|url)$"],
                            input=proc.stdout[:1 << 20], capture_output=True).stdout.decode("utf-8", "replace")
    paths, urls = {}, {}
    for line in config.splitlines():
        key, _, value = line.partition(" ")
        name, _, field = key[len("submodule."):].rpartition(".")
        (paths if field == "path" else urls)[name] = value.strip()
    by_path = {paths[n]: urls.get(n, "") for n in paths}
    out = []
    for path, sub_commit in sorted(links.items()):
        url = by_path.get(path)
        parts = Path(path).parts
        if url is None or path.startswith("/") or ".." in parts or ".git" in parts:
            raise InputError(f"{repo} at {commit}: submodule {path[:200]!r} is not one .gitmodules maps")
        m = _SUBMODULE_URL.match(url)
        if m is None:
            raise InputError(f"{repo} at {commit}: submodule {path[:200]!r} comes from {url[:200]!r}, not a GitHub "
                             "repository passk can find under --repos")
        out.append((path, f"{m.group(1)}/{m.group(2)}", sub_commit))
    return out


def missing_objects(gdir: Path, entries: list) -> list[str]:
    """The files of a tree (its tree_entries) whose contents the repository does not hold (a partial mirror)."""
    blobs = {}
    for kind, oid, path in entries:
        if kind == "blob":
            blobs.setdefault(oid, path)
    if not blobs:
        return []
    proc = _git(gdir, "cat-file", "--batch-check", input="\n".join(blobs).encode() + b"\n")
    return [blobs[line.split()[0]] for line in proc.stdout.decode().splitlines() if line.endswith(" missing")]


def cache_dir() -> Path:
    return cache_root("repos/trees")


def _owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = CANDIDATE_UID
    info.uname = info.gname = ""
    info.mtime = 946684800
    return info


def tree(repos: Path | str, repo: str, commit: str, instance_id: str, where: str | None = None) -> Tree:
    """The instance's tree as the candidate's copy is made from it (cached); `where` names the instance's row
    in a message."""
    gdir = check_available(repos, repo, commit, where or instance_id)
    key = hashlib.sha256(f"{TREE_FORMAT}\0{repo}\0{commit}".encode()).hexdigest()[:16]
    out_dir = cache_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    target, meta_path = out_dir / f"{key}.tar.gz", out_dir / f"{key}.json"
    if target.is_file() and meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
            return Tree(instance_id, target, meta["base"], meta.get("scm_version"), target.stat().st_size, meta["files"])
        except (OSError, ValueError, KeyError):
            pass
    with tempfile.TemporaryDirectory(prefix="passk-tree-") as tmp:
        work = export(repos, repo, commit, Path(tmp) / "testbed", gdir)
        size = sum(f.stat().st_size for f in work.rglob("*") if f.is_file() and not f.is_symlink())
        if size > MAX_TREE_BYTES:
            raise InputError(f"{instance_id}: the tree at {commit} holds {size >> 20} MB (at most {MAX_TREE_BYTES >> 20})")
        fresh = {"GIT_AUTHOR_NAME": "passk", "GIT_AUTHOR_EMAIL": "base@passk", "GIT_COMMITTER_NAME": "passk",
                 "GIT_COMMITTER_EMAIL": "base@passk", "GIT_AUTHOR_DATE": FIXED_DATE, "GIT_COMMITTER_DATE": FIXED_DATE,
                 "GIT_CONFIG_NOSYSTEM": "1", "HOME": tmp}
        for args in (["init", "-q", "-b", "main"], ["add", "-A", "-f"],
                     ["commit", "-q", "--no-verify", "-m", f"{repo} at {commit}"]):
            proc = subprocess.run(["git", "-C", str(work), *args], capture_output=True, env={**os.environ, **fresh})
            if proc.returncode != 0:
                raise HarnessError(f"{instance_id}: git {args[0]} of the tree failed: "
                                   f"{proc.stderr.decode('utf-8', 'replace').strip()[-300:]}")
        base = subprocess.run(["git", "-C", str(work), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        for extra in ("logs", "hooks", "COMMIT_EDITMSG", "description", "info"):   # no reflog, no sample hooks
            target_path = work / ".git" / extra
            if target_path.is_dir():
                shutil.rmtree(target_path)
            elif target_path.exists():
                target_path.unlink()
        files = sum(1 for _ in work.rglob("*"))
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
            for entry in sorted(os.listdir(work)):
                tar.add(str(work / entry), arcname=entry, filter=_owned)
        part = target.with_suffix(".part")
        part.write_bytes(buf.getvalue())
        os.replace(part, target)
    version = scm_version(gdir, commit)
    meta_path.write_text(json.dumps({"base": base, "scm_version": version, "files": files, "repo": repo,
                                     "commit": commit}))
    return Tree(instance_id, target, base, version, target.stat().st_size, files)


def requirements_text(repos: Path | str, repo: str, commit: str, paths, where: str) -> str:
    """The repository's requirements file at `commit` (the first of `paths` that exists), with the `-r`
    files it names inlined and the lines the harness drops left out (`-e .`, comments, `.[test`)."""
    gdir = check_available(repos, repo, commit, where)

    def read(path: str) -> str | None:
        proc = _git(gdir, "show", f"{commit}:{path}", check=False)
        return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None

    for path in paths:
        text = read(path)
        if text is None:
            continue
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        keep, extra = [], []
        for line in map(_uncommented, text.splitlines()):
            stripped = line.strip()
            if stripped.startswith("-r"):
                inner = read((folder + "/" if folder else "") + stripped[2:].strip())
                extra += [x for x in map(_uncommented, (inner or "").splitlines()) if not _dropped(x)]
            elif not _dropped(line):
                keep.append(line)
        return "\n".join(extra + keep)
    raise InputError(f"{where}: none of {', '.join(paths)} is in {repo} at {commit} (the spec installs its "
                     "requirements file)")


def _uncommented(line: str) -> str:
    """A requirements line without its comment: as pip reads the file, `#` at the start or after whitespace
    begins one (pylint's `astroid==2.11.3  # Pinned ...`: passed to pip as an argument, the comment was part
    of the requirement and the environment did not build)."""
    return re.sub(r"(^|\s)#.*$", "", line).rstrip()


def _dropped(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith(("-e .", ".[test"))   # a comment is gone already (_uncommented)


def remove_cached() -> int:
    """Remove the cached trees; how many files went."""
    root = cache_dir()
    if not root.is_dir():
        return 0
    n = sum(1 for _ in root.iterdir())
    shutil.rmtree(root, ignore_errors=True)
    return n
