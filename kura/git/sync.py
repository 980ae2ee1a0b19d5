"""``kura sync``: commit the store, pull with rebase, push — or leave everything as it was.

Sharing a store is git's job; this module only runs git's own steps in an order that can
always be undone, so a person (or a cron job) may run it without reading git's manual:

1. **Refuse before touching anything**: no repository, a detached HEAD, a merge or rebase
   in progress, unresolved conflicts, no remote or no upstream.
2. Under the store's write lock (a kura write landing meanwhile could be lost by an undo),
   note HEAD and the index (``git write-tree``).
3. ``git add -A`` the store's folder (never ``.kura/``: derived state a remote committed
   anyway is untracked with ``git rm -r --cached``, said, and its removal committed apart;
   the files stay on disk) and commit only those paths
   (``git commit -- PATHS``: what is staged elsewhere in the repository stays staged and
   uncommitted). The message lists the memories added, changed and forgotten.
4. ``git fetch``; when the upstream holds commits HEAD lacks, set aside what is
   uncommitted outside the store (``git stash push``), ``git rebase`` onto the upstream —
   ``git pull --rebase`` in its two steps, so nothing is stashed when there is nothing to
   pull — with whatever merge drivers the repository configures (``.gitattributes``; kura's
   MEMORY.md driver is one), then put the changes back (``git stash pop --index``).
5. Refuse a merged store that still holds conflict markers, then push to the upstream.

Any failure in 3–5 undoes all of it: ``git rebase --abort``, ``git reset --hard`` to
sync's own commit, the set-aside changes applied again, ``git reset --soft`` to the HEAD
noted first, the index read back from the tree written first, and no stash left behind.
Only what ``git fetch`` learned stays (``origin/main`` knows the remote's newest commit),
as a plain fetch would leave it. The caller re-weaves the map once the push went through,
so a refused push never leaves a map of commits the repository no longer holds.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kura.errors import GitError
from kura.files.slugs import STATE_DIR
from kura.git import changes as sd
from kura.git.run import WorkTree, find_repo
from kura.observe.observations import LOG_NAME
from kura.store.atomic import locked
from kura.store.store import Store

STASH_NOTE = "kura sync: changes outside the store, set aside while it pulls (it puts them back)"
_BUSY = (
    ("rebase-merge", "a rebase", "git rebase --continue"),
    ("rebase-apply", "a rebase", "git rebase --continue"),
    ("MERGE_HEAD", "a merge", "git merge --continue"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue"),
    ("REVERT_HEAD", "a revert", "git revert --continue"),
)
_MOVED = ("fetch first", "non-fast-forward", "stale info", "but expected")


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where the branch pulls from and pushes to."""

    branch: str
    remote: str
    merge: str  # the remote's ref, refs/heads/main

    @property
    def name(self) -> str:
        return f"{self.remote}/{self.merge.removeprefix('refs/heads/')}"


@dataclass(kw_only=True, frozen=True, slots=True)
class Synced:
    """What one sync did: its commit and what it held, what came in, what went out."""

    store: str
    repo: Path
    upstream: Upstream
    commit: str  # sync's own commit, "" when the store had nothing to commit
    message: str
    committed: sd.Changes
    pulled: int  # commits that came in
    incoming: sd.Changes
    pushed: int  # commits sent
    head: str
    notes: tuple[str, ...] = ()  # what the merge drivers decided that a person may want to check
    untracked: int = 0  # files of derived state (.kura/) a commit had added, no longer tracked

    @property
    def moved(self) -> bool:
        return bool(self.commit or self.pulled or self.pushed)

    def to_dict(self) -> dict[str, Any]:
        up = self.upstream
        return {
            "store": self.store, "repo": str(self.repo), "branch": up.branch, "upstream": up.name,
            "committed": {"commit": self.commit, "message": self.message, **self.committed.to_dict()}
            if self.commit else None,
            "pulled": {"commits": self.pulled, **self.incoming.to_dict()},
            "pushed": {"commits": self.pushed, "to": up.name},
            "head": self.head, "moved": self.moved, "notes": list(self.notes), "untracked": self.untracked,
        }  # fmt: skip


@dataclass(kw_only=True, slots=True)
class _Trail:
    """Where the repository stood, and what sync has done to it so far: all the undo needs."""

    head: str  # HEAD as it was, "" on a branch with no commit yet
    tree: str  # the index as it was, written as a tree
    commit: str = ""
    stash: str = ""
    stashed: bool = False  # the stash is still in the list (not popped yet)
    rebased: bool = False
    notes: tuple[str, ...] = ()
    untracked: int = 0


def sync(store: Store, *, message: str | None = None) -> Synced:
    """Commit the store, pull with rebase, push. GitError (its ``next_step`` the command to
    run next) with the repository exactly as it was when anything fails or is refused."""
    repo = find_repo(store.root)
    up = _upstream(repo)
    with _locks(store), _deferred_signals():
        trail = _Trail(head=_rev(repo, "HEAD"), tree=repo.run("write-tree").text)
        try:
            return _sync(_Run(repo, store, up, trail), message)
        except BaseException as err:
            failed = _restore(repo, trail)
            if failed:
                raise GitError(
                    f"{err}; and putting the repository back failed too ({failed}) — `git status` shows "
                    f"where it stands; sync's commit is {trail.commit or 'none'}, your other changes are "
                    f"in stash {trail.stash or 'none'}",
                    next_step="git status",
                ) from None
            raise


@dataclass(frozen=True, slots=True)
class _Run:
    repo: WorkTree
    store: Store
    up: Upstream
    trail: _Trail


def _sync(run: _Run, message: str | None) -> Synced:
    committed, text = _commit(run, message)
    _stop_if_asked()
    pulled, incoming = _pull(run)
    _stop_if_asked()  # after the push there is nothing left to undo: a stop then waits for the end
    pushed = _push(run.repo, run.up)
    head = _rev(run.repo, "HEAD")
    commit = run.trail.commit
    if commit and pulled:  # the rebase replayed it as a new commit, or found it upstream already
        commit = head if head != _rev(run.repo, "@{upstream}") or pushed else ""
    return Synced(store=run.store.name, repo=run.repo.top, upstream=run.up, commit=commit, message=text,
                  committed=committed, pulled=pulled, incoming=incoming, pushed=pushed, head=head,
                  notes=run.trail.notes, untracked=run.trail.untracked)  # fmt: skip


class _Stopped(GitError):
    """A signal asked sync to stop; it stops at its next step and undoes what it did."""


_asked: list[int] = []


@contextmanager
def _deferred_signals() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT wait for the git command under way (killing git halfway
    leaves a half rebase), then stop sync at its next step, which undoes what it did."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [s for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)]
    before = {s: signal.getsignal(s) for s in wanted}
    _asked.clear()
    for s in wanted:
        signal.signal(s, lambda number, frame: _asked.append(number))
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        _asked.clear()


def _stop_if_asked() -> None:
    if _asked:
        name = signal.Signals(_asked[0]).name
        raise _Stopped(f"stopped by {name}; nothing was changed here — run `kura sync` again", "kura sync")


# -- refusals --------------------------------------------------------------------------


def _upstream(repo: WorkTree) -> Upstream:
    """The branch's upstream, refusing every state sync must not work in."""
    named = repo.run("symbolic-ref", "-q", "--short", "HEAD", check=False)
    if not named.ok:
        at = repo.run("rev-parse", "--short", "HEAD", check=False).text
        holding = repo.run(
            "for-each-ref", "--contains", "HEAD", "--format=%(refname:short)", "refs/heads/", check=False
        ).text
        switch = f"git switch {(holding.split() or ['BRANCH'])[0]}"
        raise GitError(
            f"{repo.top}: HEAD is detached (at {at}), and sync works on a branch — "
            f"switch to the branch to sync: `{switch}`",
            next_step=switch,
        )
    branch = named.text
    _refuse_busy(repo)
    remotes = repo.run("remote").text.split()
    remote = repo.run("config", "--get", f"branch.{branch}.remote", check=False).text
    merge = repo.run("config", "--get", f"branch.{branch}.merge", check=False).text
    if not remotes:
        push = f"git push -u origin {branch}"
        raise GitError(
            f"{repo.top}: no remote to sync with: add one with `git remote add origin URL` and push once "
            f"with `{push}`",
            next_step="git remote add origin URL",
        )
    if not remote or not merge:
        push = f"git push -u {'origin' if 'origin' in remotes else remotes[0]} {branch}"
        raise GitError(
            f"{repo.top}: branch {branch} has no upstream to sync with: push it once with `{push}`",
            next_step=push,
        )
    return Upstream(branch, remote, merge)


def _refuse_busy(repo: WorkTree) -> None:
    paths = _git_paths(repo, *(name for name, _, _ in _BUSY))
    for (_, what, finish), path in zip(_BUSY, paths, strict=True):
        if (repo.top / path).exists():
            raise GitError(
                f"{repo.top}: {what} is in progress; finish it (`{finish}`) or abort it, then run "
                "`kura sync` again",
                next_step="git status",
            )
    unmerged = _paths(repo.run("diff", "--name-only", "-z", "--diff-filter=U").out)
    if unmerged:
        raise GitError(
            f"{repo.top}: unresolved conflicts in {_some(unmerged)}; edit each file to what is true, "
            f"`git add` it, then run `kura sync` again",
            next_step="git status",
        )


# -- the steps ---------------------------------------------------------------------------


def _commit(run: _Run, message: str | None) -> tuple[sd.Changes, str]:
    repo, store, trail = run.repo, run.store, run.trail
    trail.untracked = len(sd.stage(repo))
    changes, conflicts = sd.staged(repo)
    if conflicts:
        raise GitError(
            f"{store.name}/{conflicts[0]}; nothing was committed — resolve it (`kura doctor` lists every "
            "conflict), then run `kura sync` again",
            next_step=f"kura -s {store.root} doctor",
        )
    if changes.empty:
        return changes, _untracked(run, message)
    text = message or sd.message(changes)
    # Only the store's paths (what is staged elsewhere stays staged); hooks run, a pre-commit check too.
    ran = repo.run("commit", "-q", "-m", text, "--", *sd.store_pathspec(repo), check=False)
    if not ran.ok:
        raise GitError(
            f"{repo.top}: git commit refused the store's changes ({ran.said()}); nothing was committed — "
            "fix what it says, then run `kura sync` again",
            next_step="kura sync",
        )
    trail.commit = _rev(repo, "HEAD")
    _untracked(run, None)
    return changes, text


def _untracked(run: _Run, message: str | None) -> str:
    """Commit the removal of the derived state ``stage`` untracked, if any; its message."""
    if not run.trail.untracked:
        return ""
    text = message or f"kura sync: stop tracking {STATE_DIR}/ (derived state, never shared)"
    run.trail.commit = sd.commit_untracked(run.repo, text)
    return text


def _pull(run: _Run) -> tuple[int, sd.Changes]:
    """Fetch, and rebase onto the upstream when it holds anything HEAD lacks."""
    repo, store, up, trail = run.repo, run.store, run.up, run.trail
    fetched = repo.run("fetch", "-q", up.remote, check=False)
    if not fetched.ok:
        raise GitError(
            f"{repo.top}: could not fetch from {up.remote} ({fetched.said()}); nothing was changed here — "
            f"`git fetch {up.remote}` shows the problem; once it works, run `kura sync` again",
            next_step=f"git fetch {up.remote}",
        )
    theirs, before = _rev(repo, "@{upstream}"), trail.commit or trail.head
    if not theirs or (before and repo.run("merge-base", "--is-ancestor", theirs, before, check=False).ok):
        return 0, sd.Changes()  # the remote has no such branch yet (the push makes it), or nothing new
    if not before:
        raise GitError(
            f"{repo.top}: branch {up.branch} has no commit yet and the store nothing to commit; take "
            f"{up.name} as it is with `git pull`",
            next_step="git pull",
        )
    outside = _set_aside(repo, trail)
    trail.rebased = True
    # Merge drivers apply here. Other branches are never moved along (the undo could not move
    # them back), whatever rebase.updateRefs says; nothing is stashed but what sync stashed.
    merges = repo.run("config", "--get", "pull.rebase", check=False).text == "merges"
    how = ["--rebase-merges"] if merges else []
    rebased = repo.run("-c", "rebase.updateRefs=false", "rebase", "--no-autostash", *how, check=False)
    trail.notes = tuple(_driver_notes(rebased.err))
    if not rebased.ok:
        _refuse_rebase(repo, up, rebased.said())
    merged, conflicts = sd.between(repo, before, "HEAD")
    if conflicts:
        raise GitError(
            f"{store.name}/{conflicts[0]} (after merging {up.name}: a merge driver said it merged, but left "
            "markers); nothing was changed here — merge by hand with `git pull --rebase --autostash`",
            next_step="git pull --rebase --autostash",
        )
    if trail.stashed:
        _put_back(repo, up, outside, trail)
    base = repo.run("merge-base", before, theirs, check=False).text
    incoming = sd.between(repo, base, theirs)[0] if base else merged
    return int(repo.run("rev-list", "--count", f"{before}..{theirs}").text), incoming


def _set_aside(repo: WorkTree, trail: _Trail) -> list[str]:
    """Stash what is uncommitted outside the store (staged or not); the paths stashed."""
    dirty = repo.run("status", "--porcelain", "-z", "--no-renames", "--untracked-files=no").out
    paths = [entry[3:] for entry in _paths(dirty)] if dirty else []
    if not paths:
        return []
    mine = _rev(repo, "refs/stash")  # the person's own newest stash, if any: never sync's to pop
    ran = repo.run("stash", "push", "-q", "-m", STASH_NOTE, check=False)
    if not ran.ok:
        raise GitError(f"{repo.top}: could not set aside your changes outside the store ({ran.said()}); "
                       "nothing was changed here — commit them, then run `kura sync` again",
                       next_step="git status")  # fmt: skip
    made = _rev(repo, "refs/stash")
    if made == mine:  # git saw nothing it could stash (a submodule's own changes, say)
        return []
    trail.stash, trail.stashed = made, True
    return paths


def _refuse_rebase(repo: WorkTree, up: Upstream, said: str) -> None:
    conflicted = _paths(repo.run("diff", "--name-only", "-z", "--diff-filter=U", check=False).out)
    if conflicted:
        raise GitError(
            f"{repo.top}: your changes and {up.name}'s conflict in {_some(conflicted)}, and no merge driver "
            "could merge them; nothing was changed here — merge by hand: `git pull --rebase --autostash` "
            "stops at the conflict; edit each file it names to what is true and `git add` it (then "
            "`git rebase --continue`, or `git stash drop` once git has put your changes back), and run "
            "`kura sync` again",
            next_step="git pull --rebase --autostash",
        )
    raise GitError(
        f"{repo.top}: git could not rebase onto {up.name} ({said}); nothing was changed here — "
        "`git pull --rebase` shows the problem",
        next_step="git pull --rebase",
    )


def _put_back(repo: WorkTree, up: Upstream, paths: list[str], trail: _Trail) -> None:
    if not repo.run("stash", "pop", "-q", "--index", check=False).ok:
        raise GitError(
            f"{repo.top}: your uncommitted changes outside the store ({_some(paths)}) conflict with what "
            f"came in from {up.name}; nothing was changed here — commit them (or `git stash` them), then "
            "run `kura sync` again",
            next_step="git stash",
        )
    trail.stashed = False


def _push(repo: WorkTree, up: Upstream) -> int:
    if not _rev(repo, "HEAD"):
        return 0
    ahead = int(repo.run("rev-list", "--count", "HEAD", *_not("@{upstream}", repo)).text or "0")
    if not ahead:
        return 0
    ran = repo.run("push", "--porcelain", up.remote, f"HEAD:{up.merge}", check=False)
    if ran.ok:
        return ahead
    rejected = [line for line in ran.text.split("\n") if line.startswith("!")]
    reason = rejected[0].split("\t")[-1] if rejected else ran.said()
    said = ran.err.decode("utf-8", errors="replace")
    if any(word in reason or word in said for word in _MOVED):  # "but expected": it moved mid-push
        raise GitError(
            f"{repo.top}: {up.name} moved while kura synced (someone pushed meanwhile: {reason}); nothing "
            "was changed here — run `kura sync` again",
            next_step="kura sync",
        )
    raise GitError(
        f"{repo.top}: {up.remote} refused the push to {up.name} ({reason}); nothing was changed here — "
        f"`git push {up.remote} HEAD:{up.merge}` shows why; once it works, run `kura sync` again",
        next_step=f"git push {up.remote} HEAD:{up.merge}",
    )


# -- the undo ----------------------------------------------------------------------------


def _restore(repo: WorkTree, trail: _Trail) -> str:
    """Put HEAD, the index and the work tree back as they were; what failed, or ""."""
    failed: list[str] = []

    def step(*args: str) -> None:
        ran = repo.run(*args, check=False)
        if not ran.ok:
            failed.append(f"git {' '.join(args)}: {ran.said(2)}")

    if trail.rebased and _rebasing(repo):
        step("rebase", "--abort")
    base = trail.commit or trail.head
    if base and _rev(repo, "HEAD") != base:
        _back_to(repo, base, failed)
    if trail.stash:
        step("stash", "apply", "-q", trail.stash)
        listed = repo.run("stash", "list", "--format=%H", check=False).text.split("\n")
        if trail.stash in listed:
            step("stash", "drop", "-q", f"stash@{{{listed.index(trail.stash)}}}")
    if trail.commit and trail.head:
        step("reset", "-q", "--soft", trail.head)
    elif trail.commit:
        step("update-ref", "-d", "HEAD", trail.commit)  # back to a branch with no commit yet
    if repo.run("write-tree", check=False).text != trail.tree:
        step("read-tree", trail.tree)
    return "; ".join(failed)


def _back_to(repo: WorkTree, base: str, failed: list[str]) -> None:
    """HEAD back to ``base``, keeping whatever a person saved meanwhile (``reset --keep``);
    when their saves touch the very files that would change, those saves are kept in a stash
    of their own first, and the failure says where."""
    if repo.run("reset", "-q", "--keep", base, check=False).ok:
        return
    saved = repo.run("stash", "create", check=False).text
    if saved:
        repo.run("stash", "store", "-m", "kura sync: edits saved while it synced", saved, check=False)
    done = repo.run("reset", "-q", "--hard", base, check=False)
    kept = f"; edits saved meanwhile are in stash {saved[:7]}" if saved else ""
    failed.append(f"git reset --keep could not keep edits saved meanwhile{kept}" if done.ok else done.said(2))


def _driver_notes(err: bytes) -> list[str]:
    """What merge drivers said while git rebased (kura's own: ``kura: MEMORY.md: …``)."""
    said = err.decode("utf-8", errors="replace").splitlines()
    return [line.removeprefix("kura: ").strip() for line in said if line.startswith("kura: ")]


# -- small helpers ----------------------------------------------------------------------


@contextmanager
def _locks(store: Store) -> Iterator[None]:
    """The store's write lock (``Store`` takes the same one for every write), and the
    observation log's when there is a log."""
    with ExitStack() as stack:
        stack.enter_context(locked(store.state_dir / "lock"))
        if (store.root / LOG_NAME).exists():
            stack.enter_context(locked(store.state_dir / "observations.lock"))
        yield


def _rev(repo: WorkTree, name: str) -> str:
    """The commit ``name`` points at, "" when it points nowhere."""
    return repo.run("rev-parse", "-q", "--verify", f"{name}^{{commit}}", check=False).text


def _not(name: str, repo: WorkTree) -> tuple[str, ...]:
    return ("--not", name) if _rev(repo, name) else ()


def _git_paths(repo: WorkTree, *names: str) -> list[str]:
    asked = [word for name in names for word in ("--git-path", name)]
    return repo.run("rev-parse", *asked).text.split("\n")


def _rebasing(repo: WorkTree) -> bool:
    ran = repo.run("rev-parse", "--git-path", "rebase-merge", "--git-path", "rebase-apply", check=False)
    return ran.ok and any((repo.top / path).exists() for path in ran.text.split("\n"))


def _paths(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", errors="surrogateescape").split("\0") if p]


def _some(paths: list[str], most: int = 3) -> str:
    shown = ", ".join(paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")
