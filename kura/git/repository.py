"""The git repository that holds a store: setting it up for kura, and what a merge knows.

git is the engine a team shares a store with, so kura uses the ``git`` binary itself (never
a library that re-implements it) and asks git rather than guessing: ``rev-parse`` finds the
repository, the store's place in it and the hooks folder (``core.hooksPath`` included);
``check-attr`` says whether MEMORY.md already has the merge driver, however a person wrote
that rule. Every change is idempotent, keeps the other bytes of the file it touches, and is
said; a hook someone else wrote is never replaced.

During a merge, git hands the driver three temporary files and nothing else. Its dates
come from the memory files: ours' from the work tree (git has not touched it yet while it
merges), theirs' from the commit being merged — named by git's ``GITHEAD_<sha>`` variable
in a merge, by the last line of ``rebase-merge/done`` in a rebase (``git pull --rebase``).
When neither says (a cherry-pick, a stash), theirs has no date and the merge says so.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kura.errors import GitError, KuraError
from kura.files.memory_file import from_bytes
from kura.files.slugs import INDEX_NAME, lookup_parts
from kura.git.index_merge import Dated, Side
from kura.git.run import Ran, run
from kura.store.atomic import write_atomic
from kura.store.catalog import written_date
from kura.store.safe_read import MEMORY_CAP
from kura.store.store import Store

DRIVER = "kura-index"
DRIVER_NAME = "kura: merge MEMORY.md line by memory (kura git merge-index)"
HOOKS = ("pre-commit", "post-merge", "post-checkout")
MARK = "Installed by `kura git install --hooks`"
# sha256 of each script kura's hooks/git/ has held (tests/git/test_git_merge.py checks today's
# are here): a copy or a link of one is kura's hook, and is upgraded
SHIPPED = frozenset({
    "3c4a18f6166790c8d1fb18e7539dd03e2b179689c178e38a0af117060429797a",  # pre-commit, first
    "4dfa830c93c37ae7f9679be4db88d28dcd58ba4b96b2c88d312bc92996556a57",  # pre-commit, --staged
    "7f7325f210ddec242df84dd95ed1b71492e6b73cfc131e7d8d3ca97e72d98365",  # post-merge, weave
    "66d485362eea406460e390f50eb172544f99eb0b7f20791cb5d55b3d69763462",  # post-checkout, weave
    "56880410f6838a46d4e0c9e80615debc21773875d2a350bc8415145d8adceade",  # pre-commit: `kura hook`
    "68df85d49b2cb4342d0e0a3309c3686bae8801a01c10c214f8af81757721bfe1",  # post-merge: `kura hook`
    "c40d84165d5df91eb445265592518cfc5e64ac097c0f38e40895d40f01dc551c",  # post-checkout: `kura hook`
})  # fmt: skip
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True, slots=True)
class Repo:
    top: Path  # the work tree's top folder
    prefix: str  # the store's folder relative to it: "" or "memory/"
    hooks: Path  # the folder git runs hooks from


@dataclass(frozen=True, slots=True)
class Installed:
    """What ``install`` did, found already done, and would not do — each said for a person."""

    done: tuple[str, ...] = ()
    already: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def git(args: list[str], cwd: Path, *, check: bool = True) -> Ran:
    """Run the git binary (``kura.git.run.run``); GitError when it is not installed or (``check``) fails."""
    return run(cwd, *args, check=check)


def find_repo(folder: Path) -> Repo:
    """The repository whose work tree holds ``folder``; GitError outside one."""
    done = git(["rev-parse", "--show-toplevel", "--show-prefix", "--git-path", "hooks"], folder, check=False)
    out = done.out.decode("utf-8", "surrogateescape").split("\n")
    if done.code != 0 or len(out) < 3:
        said = done.err.decode("utf-8", "replace").strip()
        raise GitError(
            f"{folder} is not inside a git work tree ({said or 'git rev-parse failed'}); "
            "run `git init` there (or in a folder above it), then run this again"
        )
    return Repo(Path(out[0]), out[1], Path(os.path.normpath(folder / out[2])))


def driver_command(python: str) -> str:
    """The ``merge.kura-index.driver`` line: this Python running kura (works in a venv that
    is not activated, as git runs it), with git's placeholders. ``-P``: git runs it at the
    top of the work tree, and a ``kura/`` folder there must not be imported as kura."""
    return f"{shlex.quote(python)} -P -m kura git merge-index --marker-size %L %O %A %B %P"


def install(folder: Path, *, driver: str, hooks: bool = False, kura_bin: str = "kura") -> Installed:
    """Set up the repository holding the store in ``folder``: the ``.gitattributes`` rule
    and the driver in the local git config, and (``hooks``) kura's git hooks, each a few
    lines of sh that run ``kura_bin hook NAME`` for the store."""
    repo = find_repo(folder)
    done: list[str] = []
    already: list[str] = []
    refused: list[str] = []
    _attribute(repo, done, already)
    for key, value in ((f"merge.{DRIVER}.name", DRIVER_NAME), (f"merge.{DRIVER}.driver", driver)):
        now = git(["config", "--local", "--get", key], repo.top, check=False).out.decode().rstrip("\n")
        if now == value:
            already.append(f"git config {key} is set")
            continue
        git(["config", "--local", key, value], repo.top)
        done.append(f"{'set' if not now else 'updated'} git config {key} = {value}")
    for name in HOOKS if hooks else ():
        _hook(repo, name, kura_bin, (done, already, refused))
    return Installed(tuple(done), tuple(already), tuple(refused))


def _attribute(repo: Repo, done: list[str], already: list[str]) -> None:
    path = repo.prefix + INDEX_NAME
    if _merge_attribute(repo, path) == DRIVER:
        already.append(f"{path} merges with {DRIVER} (git check-attr says so)")
        return
    target = repo.top / ".gitattributes"
    old = target.read_bytes() if target.exists() else b""
    newline = b"\r\n" if old.count(b"\n") and old.count(b"\n") == old.count(b"\r\n") else b"\n"
    line = f"{_pattern(path)} merge={DRIVER}".encode() + newline
    write_atomic(target, old + (newline if old and not old.endswith(b"\n") else b"") + line)
    found = _merge_attribute(repo, path)
    if found != DRIVER:
        raise GitError(
            f"{target}: added `{line.decode().strip()}`, yet git says {path} merges with {found!r} — "
            f"a rule in another attributes file (a deeper .gitattributes, .git/info/attributes) wins; "
            "remove that rule and run this again"
        )
    done.append(f"added `{line.decode().strip()}` to {target}")


def _merge_attribute(repo: Repo, path: str) -> str:
    out = git(["check-attr", "-z", "merge", "--", path], repo.top).out.decode("utf-8", "surrogateescape")
    parts = out.split("\0")
    return parts[2] if len(parts) > 2 else ""


def _pattern(path: str) -> str:
    """A .gitattributes pattern for exactly this path (anchored; quoted when it must be)."""
    escaped = re.sub(r"([*?\[\]!])", r"\\\1", path)
    escaped = escaped if "/" in path else "/" + escaped
    if re.search(r'[\s"\\]', escaped):
        return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def hook_text(name: str, *, kura_bin: str, prefix: str) -> str:
    """kura's ``name`` hook for this repository: the ``kura`` that installed it and the
    store's folder as defaults (a ``KURA_BIN`` or ``KURA_STORE`` in the environment still
    wins), then ``kura hook NAME`` — the hook itself ships inside the package."""
    store = "$(git rev-parse --show-toplevel)" + (f"/{_quoted(prefix.rstrip('/'))}" if prefix else "")
    gone = (
        f"{{ echo \"kura {name}: '$KURA_BIN' not found; skipping the check\" >&2; exit 0; }}"
        if name == "pre-commit"
        else "exit 0"
    )
    return (
        f"#!/bin/sh\n# {MARK}: kura's {name} hook, for the store in this repository.\n"
        f': "${{KURA_BIN:={_quoted(kura_bin)}}}"\n: "${{KURA_STORE:={store}}}"\n'
        f'command -v "$KURA_BIN" >/dev/null 2>&1 || {gone}\n'
        f'exec "$KURA_BIN" -s "$KURA_STORE" hook {name} "$@"\n'
    )


def _quoted(text: str) -> str:
    """Text as it must be written inside double quotes in sh."""
    return re.sub(r'([\\"$`])', r"\\\1", text)


def kuras(text: str) -> bool:
    """Whether a hook file is one kura wrote: installed by any ``kura git install --hooks``
    (it carries ``MARK``), or one of the scripts in kura's ``hooks/git/``, copied or linked by
    hand — today's thin wrappers or the older scripts that ran ``kura doctor``/``weave``."""
    return MARK in text or hashlib.sha256(text.encode("utf-8")).hexdigest() in SHIPPED


def _hook(repo: Repo, name: str, kura_bin: str, said: tuple[list[str], ...]) -> None:
    done, already, refused = said
    text = hook_text(name, kura_bin=kura_bin, prefix=repo.prefix)
    target = repo.hooks / name
    old = target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
    if old == text and os.access(target, os.X_OK):
        already.append(f"{target} is kura's {name} hook")
        return
    if target.exists() and (old is None or not kuras(old)):
        store = shlex.quote(str(repo.top / repo.prefix).rstrip("/"))
        refused.append(f"{target}: a {name} hook that is not kura's is there; left as it is — make it run "
                       f"`{shlex.quote(kura_bin)} -s {store} hook {name} \"$@\"` too, or move it aside and "
                       "run this again")  # fmt: skip
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, text.encode("utf-8"))
    target.chmod(0o755)
    done.append(f"{'updated' if old is not None else 'installed'} {target} (kura's {name} hook)")


# -- during a merge ------------------------------------------------------------------------


def merge_context(path: str | None, cwd: Path) -> tuple[Dated, tuple[str, str]]:
    """For ``kura git merge-index``: the memories' dates on each side, and the labels for
    conflict markers, as git names the two sides."""
    theirs = _theirs_commit(cwd)
    folder = (cwd / path).parent if path else None
    prefix = Path(path).parent.as_posix() if path else "."
    cache: dict[tuple[Side, str], dt.date | None] = {}

    def dated(side: Side, slug: str) -> dt.date | None:
        if folder is None or lookup_parts(slug) is None:
            return None
        if (side, slug) not in cache:
            if side == "ours":
                cache[side, slug] = _work_tree_date(folder, slug)
            else:
                cache[side, slug] = _commit_date(cwd, theirs[0], prefix, slug) if theirs else None
        return cache[side, slug]

    return dated, ("HEAD", theirs[1]) if theirs else ("ours", "theirs")


def merge_committed(path: str | None, cwd: Path) -> Callable[[Side, str], int | None]:
    """When each side last committed the index (seconds since the epoch): ours at HEAD, theirs
    in the commit being merged — what breaks a tie between two edits of a line on one day."""
    theirs = _theirs_commit(cwd)
    index = path or INDEX_NAME
    cache: dict[Side, int | None] = {}

    def committed(side: Side, slug: str) -> int | None:
        rev = "HEAD" if side == "ours" else theirs[0] if theirs else ""
        if side not in cache:
            out = (
                git(["log", "-1", "--format=%ct", rev, "--", index], cwd, check=False).out.strip()
                if rev
                else b""
            )
            cache[side] = int(out) if out.isdigit() else None
        return cache[side]

    return committed


def _theirs_commit(cwd: Path) -> tuple[str, str] | None:
    """The commit being merged in and git's label for it, when git says which."""
    heads = [(k[8:], v) for k, v in os.environ.items() if k.startswith("GITHEAD_") and _SHA.fullmatch(k[8:])]
    if len(heads) == 1:
        return heads[0]
    try:
        done = git(["rev-parse", "--git-path", "rebase-merge/done"], cwd)
        lines = (cwd / done.out.decode().strip()).read_text(encoding="utf-8").splitlines()
    except (GitError, OSError, UnicodeDecodeError):
        return None  # no rebase under way (or no git at all): theirs is not known
    for line in reversed(lines):
        words = line.split(maxsplit=2)
        if len(words) >= 2 and _SHA.fullmatch(words[1]):
            return words[1], f"{words[1][:7]} ({words[2] if len(words) > 2 else ''})"
    return None


def _work_tree_date(folder: Path, slug: str) -> dt.date | None:
    try:
        return written_date(Store(folder).show(slug).note)
    except KuraError:  # not there, or not to be read: no date, and the merge says so
        return None


def _commit_date(cwd: Path, commit: str, prefix: str, slug: str) -> dt.date | None:
    rev = f"{commit}:{'' if prefix == '.' else prefix + '/'}{slug}.md"
    size = git(["cat-file", "-s", rev], cwd, check=False).out.strip()
    if not size.isdigit() or int(size) > MEMORY_CAP:
        return None
    data = git(["cat-file", "blob", rev], cwd, check=False).out
    return written_date(from_bytes(data, rev))
