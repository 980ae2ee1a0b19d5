"""Running git: the one way kura calls the ``git`` binary.

A store is shared by pushing and pulling it, and git already does every hard part of that
(three-way merges, the merge drivers a repository configures, rebases, stashes, refusing
a push that would lose someone's work). So kura calls the binary — an argument list,
never a shell, never a library that re-implements git — and reads its exit codes and its
``-z`` / ``--porcelain`` output, which do not change with the person's language.

Two things are decided here once for every caller. The repository is always the one that
holds the store's folder: the variables that point git elsewhere (``GIT_DIR`` and its
kin, set when kura runs inside a git hook) are dropped, so a hook can never make kura
commit into another repository. And git never waits for an editor or for standard input:
a command that would need one fails, and the caller says what to run by hand.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kura.errors import GitError
from kura.git.guard import SAFE

# What `git rev-parse --local-env-vars` lists: each would point git at another repository.
_ELSEWHERE = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CONFIG",
    "GIT_GRAFT_FILE", "GIT_IMPLICIT_WORK_TREE", "GIT_SHALLOW_FILE", "GIT_REPLACE_REF_BASE",
    "GIT_INTERNAL_SUPER_PREFIX", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_NO_REPLACE_OBJECTS",
)  # fmt: skip
READ_SECONDS = 30.0
"""How long a git that only reads may take: a store may come with its repository's config
(an archive carries ``.git/``), whose ``include.path`` can name a FIFO that git waits on for
ever. ``kura recent``, ``history`` and the distiller's check read with it (the weave's ages
have the same bound); a write (``kura sync``) has none, for a pull may take its time."""
MISSING = (
    "git is not installed (no `git` on PATH); sharing a store goes through the git binary — "
    "install git (e.g. `apt install git` or `brew install git`) and run the command again"
)


@dataclass(frozen=True, slots=True)
class Ran:
    """One finished git command: its exit code and what it printed."""

    args: tuple[str, ...]
    code: int
    out: bytes
    err: bytes

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def text(self) -> str:
        """Standard output as text, without its final newline."""
        return self.out.decode("utf-8", errors="surrogateescape").rstrip("\n")

    def said(self, lines: int = 4) -> str:
        """The last few lines git wrote (stderr, else stdout), on one line: what to quote."""
        words = (self.err or self.out).decode("utf-8", errors="replace").strip().splitlines()
        kept = [line.strip() for line in words if line.strip() and not line.startswith("hint:")]
        return " / ".join(kept[-lines:]) or f"exit code {self.code}"


@dataclass(frozen=True, slots=True)
class WorkTree:
    """The work tree holding a store: its top folder and the store's place in it."""

    top: Path
    prefix: str  # the store's folder relative to ``top``, "" or ending in "/"

    def run(self, *args: str, check: bool = True, input: bytes | None = None) -> Ran:
        return run(self.top, *args, check=check, input=input)


def run(
    cwd: Path,
    *args: str,
    check: bool = True,
    input: bytes | None = None,
    index: str | None = None,
    timeout: float | None = None,
) -> Ran:
    """``git ARGS`` in ``cwd`` (``input`` on its stdin; ``index``: the index file to read, as
    a pre-commit hook is handed one for ``commit -a``); GitError when git is missing, (``check``)
    when it fails, or when it has not answered in ``timeout`` seconds (``READ_SECONDS`` for a
    read: see there)."""
    env = {k: v for k, v in os.environ.items() if k not in _ELSEWHERE}
    env.update(GIT_EDITOR="true", GIT_MERGE_AUTOEDIT="no", GIT_SEQUENCE_EDITOR="true")
    if index:
        env["GIT_INDEX_FILE"] = index
    try:
        done = subprocess.run(
            ["git", *SAFE, *args], cwd=cwd, env=env, input=input, capture_output=True, check=False,
            stdin=subprocess.DEVNULL if input is None else None, timeout=timeout,
        )  # fmt: skip
    except FileNotFoundError:
        raise GitError(MISSING) from None
    except subprocess.TimeoutExpired:
        raise GitError(
            f"`git {' '.join(args[:2])}` did not answer in {timeout:.0f} s in {cwd}; kura went on without it "
            "— see what the repository's config includes (git config --list --show-origin): a FIFO there "
            "keeps git waiting"
        ) from None
    except OSError as err:
        raise GitError(f"cannot run git in {cwd} ({err.strerror or err})") from None
    ran = Ran(tuple(args), done.returncode, done.stdout, done.stderr)
    if check and not ran.ok:
        raise GitError(f"`git {' '.join(args)}` failed in {cwd}: {ran.said()}")
    return ran


def find_repo(folder: Path) -> WorkTree:
    """The git work tree that holds ``folder``; GitError (saying how to make one) when none
    does, or when the folder is inside a ``.git`` folder or a bare repository."""
    if not folder.is_dir():
        raise GitError(f"{folder} is not a folder; there is no store there to share")
    ran = run(folder, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix", check=False,
              timeout=READ_SECONDS)  # fmt: skip  # the first git of kura sync: a blocked config stops it here
    lines = ran.out.decode("utf-8", errors="surrogateescape").split("\n")[:3]  # the prefix may be ""
    if not ran.ok or len(lines) != 3 or lines[0] != "true":
        raise GitError(
            f"{folder} is not in a git repository (a work tree), so there is nothing to sync; make it "
            f"one with `git -C {folder} init` and add a remote (docs/sharing.md shows the setups)"
        )
    return WorkTree(Path(lines[1]), lines[2])
