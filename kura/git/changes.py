"""What a git diff does to a store: the memories it adds, changes and forgets.

A commit that says ``+2 ~1 -1 (deploy-day, …)`` tells a teammate reading ``git log`` what
their agents will now remember, which a list of file names does not. Forgetting in kura is
a frontmatter edit, not a deletion (``archived:``, ``superseded_by:``, see
``kura.files.belief``), so a modified file is told apart by reading both versions' frontmatter
with the note reader: a memory that became retired was forgotten, any other edit changed
it. Both versions come from git's object store (``git cat-file --batch``), the same way for
what is about to be committed and for what a pull brought in; a blob over the memory
size cap is not read and counts as changed.

The new side is also checked for merge conflict markers (``kura.files.checks``): a
conflict someone left in a memory must never be pushed to every teammate's prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kura.files import memory_file as nt
from kura.files.belief import retired
from kura.files.checks import conflict_markers
from kura.files.finding import Finding
from kura.files.slugs import INDEX_NAME, STATE_DIR, is_memory_name
from kura.git.run import WorkTree, run
from kura.store.safe_read import INDEX_CAP, MEMORY_CAP

SUBJECT_WIDTH = 72


@dataclass(frozen=True, slots=True)
class Changes:
    """Slugs added, changed and forgotten (``why`` says how each was forgotten), and the
    store's other files that changed (MEMORY.md, .gitignore, the observation log, …)."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    forgotten: tuple[str, ...] = ()
    other: tuple[str, ...] = ()
    why: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.forgotten or self.other)

    def counts(self) -> str:
        """``+2 ~1 -1`` (the non-zero ones), or the other files' names when no memory moved."""
        marks = [f"{sign}{len(group)}" for sign, group in self._groups() if group]
        return " ".join(marks) or ", ".join(self.other)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added), "changed": list(self.changed), "forgotten": list(self.forgotten),
            "other": list(self.other), "why": dict(self.why),
        }  # fmt: skip

    def _groups(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        return (("+", self.added), ("~", self.changed), ("-", self.forgotten))


def store_pathspec(repo: WorkTree) -> tuple[str, ...]:
    """The store's folder and nothing else, never its state folder (even where the store's
    own .gitignore was lost): a pathspec relative to the top, taken literally."""
    folder = f":(top,literal){repo.prefix}" if repo.prefix else ":(top)"
    return folder, f":(top,literal,exclude){repo.prefix}{STATE_DIR}"


def stage(repo: WorkTree) -> list[str]:
    """``git add -A`` the store's folder. The state folder is left out by the store's own
    .gitignore; only where that is lost is it excluded by name (git refuses an exclusion
    that names an ignored path). Derived state a commit added anyway (a remote that
    committed ``.kura/``) is untracked first (``git rm -r --cached``: the files stay on
    disk) and returned, for ``commit_untracked`` to commit and the caller to say."""
    folder, state = store_pathspec(repo)
    inside = _state_spec(repo)
    listed = repo.run("ls-files", "-z", "--", inside).out.decode("utf-8", errors="surrogateescape")
    tracked = [path for path in listed.split("\0") if path]
    if tracked:
        repo.run("rm", "-r", "-q", "--cached", "--", inside)
    ignored = repo.run("check-ignore", "-q", f"{repo.prefix}{STATE_DIR}/", check=False).ok
    repo.run("add", "-A", "--", folder, *(() if ignored else (state,)))
    return tracked


def commit_untracked(repo: WorkTree, message: str) -> str:
    """A commit on HEAD that removes the state folder from git and changes nothing else;
    its id. ``git commit -- PATHS`` would put the files back (it commits their work-tree
    contents), so the commit is made from a private index: HEAD's tree less ``.kura/``."""
    index = repo.top / repo.run("rev-parse", "--git-path", "kura-untrack-index").text
    try:
        run(repo.top, "read-tree", "HEAD", index=str(index))
        run(
            repo.top,
            "rm",
            "-r",
            "-q",
            "--cached",
            "--ignore-unmatch",
            "--",
            _state_spec(repo),
            index=str(index),
        )
        tree = run(repo.top, "write-tree", index=str(index)).text
    finally:
        index.unlink(missing_ok=True)
    head = repo.run("rev-parse", "HEAD").text
    commit = repo.run("commit-tree", tree, "-p", head, "-m", message).text
    repo.run("update-ref", "-m", message, "HEAD", commit, head)
    return commit


def _state_spec(repo: WorkTree) -> str:
    return f":(top,literal){repo.prefix}{STATE_DIR}"


def staged(repo: WorkTree) -> tuple[Changes, list[Finding]]:
    """What committing the store's staged paths would do (against HEAD, or against nothing
    before the first commit), and the conflicts left in what would be committed."""
    listed = repo.run("diff", "--cached", "--name-status", "-z", "--no-renames", "--", *store_pathspec(repo))
    return _read(repo, _statuses(listed.out), old="HEAD", new="")


def between(repo: WorkTree, old: str, new: str) -> tuple[Changes, list[Finding]]:
    """What the commits from ``old`` to ``new`` did to the store."""
    spec = store_pathspec(repo)
    listed = repo.run("diff", "--name-status", "-z", "--no-renames", old, new, "--", *spec)
    return _read(repo, _statuses(listed.out), old=old, new=new)


def message(changes: Changes) -> str:
    """``kura sync: +2 ~1 -1 (deploy-day, oncall, …)`` and a body with one slug a line."""
    slugs = [*changes.added, *changes.changed, *changes.forgotten]
    subject = f"kura sync: {changes.counts()}"
    shown: list[str] = []
    for slug in slugs:
        more = "" if len(shown) + 1 == len(slugs) else ", …"
        if len(f"{subject} ({', '.join([*shown, slug])}{more})") > SUBJECT_WIDTH and shown:
            break
        shown.append(slug)
    if shown:
        subject += f" ({', '.join(shown)}{', …' if len(shown) < len(slugs) else ''})"
    why = dict(changes.why)
    body = [f"{sign} {slug}" for sign, group in changes._groups() for slug in group if sign != "-"]
    body += [f"- {slug} ({why.get(slug, 'forgotten')})" for slug in changes.forgotten]
    if changes.other:
        body.append(f"other files: {', '.join(changes.other)}")
    return subject + "\n\n" + "\n".join(body) + "\n"


def _statuses(out: bytes) -> list[tuple[str, str]]:
    """(status letter, path from the top) from ``--name-status -z`` output."""
    words = out.decode("utf-8", errors="surrogateescape").split("\0")
    return [(words[i][:1], words[i + 1]) for i in range(0, len(words) - 1, 2)]


def _read(
    repo: WorkTree, statuses: list[tuple[str, str]], *, old: str, new: str
) -> tuple[Changes, list[Finding]]:
    """Classify each path, reading the two versions of every modified memory and the new
    version of every text file (for conflicts) in two ``cat-file`` calls."""
    wanted = {f"{new}:{path}" for status, path in statuses if status != "D"}
    wanted |= {f"{old}:{path}" for status, path in statuses if status in "MT" and _memory(repo, path)}
    blobs = _blobs(repo, sorted(name for name in wanted if "\n" not in name))  # one name a line
    groups: dict[str, list[str]] = {"added": [], "changed": [], "forgotten": [], "other": []}
    why: list[tuple[str, str]] = []
    conflicts: list[Finding] = []
    for status, path in statuses:
        rel = path[len(repo.prefix) :]
        now = blobs.get(f"{new}:{path}")
        if now is not None:
            text = now.decode("utf-8", errors="replace")
            conflicts += conflict_markers(text, rel, examples=rel != "MEMORY.md")
        if not _memory(repo, path):
            groups["other"].append(rel)
            continue
        slug, gone = rel[:-3], _forgotten(status, blobs.get(f"{old}:{path}"), now)
        group = "added" if status == "A" else "forgotten" if gone else "changed"
        groups[group].append(slug)
        if gone:
            why.append((slug, gone))
    found = Changes(**{k: tuple(v) for k, v in groups.items()}, why=tuple(why))
    return found, conflicts


def _memory(repo: WorkTree, path: str) -> bool:
    return path.startswith(repo.prefix) and is_memory_name(path[len(repo.prefix) :])


def _forgotten(status: str, was: bytes | None, now: bytes | None) -> str:
    """How a memory left the index in this change ("" when it did not)."""
    if status == "D":
        return "deleted"
    after = _meta(now)
    if status == "A" or was is None or after is None or not retired(after):
        return ""
    before = _meta(was)
    if before is not None and retired(before):
        return ""
    if after.get("superseded_by"):
        return f"superseded by {after['superseded_by']}"
    reason = " ".join(str(after.get("archived_reason") or "").split())
    return f"archived: {reason}" if reason else "archived"


def _meta(data: bytes | None) -> dict[str, Any] | None:
    return None if data is None else nt.from_bytes(data).meta


def _blobs(repo: WorkTree, names: list[str]) -> dict[str, bytes]:
    """The contents of ``names`` (``REV:path``; ``:path`` is the index) that are blobs of
    at most the cap; anything else is left out."""
    if not names:
        return {}
    listing = "".join(f"{name}\n" for name in names).encode("utf-8", errors="surrogateescape")
    sizes = repo.run("cat-file", "--batch-check=%(objecttype) %(objectsize)", input=listing).text.split("\n")
    small = [n for n, line in zip(names, sizes, strict=True) if _fits(n, line)]
    if not small:
        return {}
    asked = "".join(f"{name}\n" for name in small).encode("utf-8", errors="surrogateescape")
    out, found, at = repo.run("cat-file", "--batch", input=asked).out, {}, 0
    for name in small:
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        found[name] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def _fits(name: str, line: str) -> bool:
    kind, _, size = line.partition(" ")
    cap = INDEX_CAP if name.endswith(f"/{INDEX_NAME}") or name.endswith(f":{INDEX_NAME}") else MEMORY_CAP
    return kind == "blob" and size.isdigit() and int(size) <= cap
