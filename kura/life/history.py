"""``kura history SLUG``: every version of a memory, who or what wrote each, and the chain of
corrections it belongs to.

kura keeps no log of its own (a person edits files by hand and a pull brings other people's
writes), so a memory's history is read from what already records it:

- **in a git work tree**, every commit that touched the file (``git log --follow``, so a
  rename is followed to the old name), each with the file as it was then, and the edits not
  yet committed;
- **outside git**, what the file itself records: ``created``, ``updated``, each witness with
  its day and source, ``valid_until`` with ``superseded_by``, ``archived`` with its reason.

What a version said goes to agents over HTTP and MCP, so a secret an old version held (one
pasted, then replaced out) is redacted, and a memory whose file is gone is shown only as
far as it was not purged: a version whose claim a purge's tombstone matches keeps its date
and author and loses its words (``kura.life.purge``; git itself still holds them, as the
purge said).

Who wrote a version is read from the most specific record there is: the witnesses that
version added (MANUAL — an agent over a tool; a witness carrying a transcript session — the
distiller; ``kura remember``'s SAID — a person), then the commit's message (``kura sync``,
``kura setup``, a distill or import), else a person, named by the commit's author. The
supersede chain (``supersedes`` back, ``superseded_by`` forward) names every memory that
held this fact before or after it, with the day each was replaced.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kura.errors import GitError, NotFound, StoreError
from kura.files import memory_file as nt
from kura.files import witness as wt
from kura.files.slugs import new_slug
from kura.git import stamps
from kura.git.run import READ_SECONDS, run
from kura.store.store import Memory, Store
from kura.text.quarantine import clean
from kura.text.secrets import redact

MAX_VERSIONS = 200  # commits read for one memory; older ones are counted, not read
_RS, _US = "\x1e", "\x1f"
_SUBJECTS = (("kura sync", "sync"), ("setup", "setup"), ("distill", "distiller"), ("import", "import"))


@dataclass(frozen=True, slots=True)
class Version:
    """One version of the memory (in git) or one thing its file records (outside git)."""

    when: str  # YYYY-MM-DD, with HH:MM for a commit
    what: str  # created, changed, renamed, superseded, forgotten, witnessed, uncommitted
    who: str  # person, agent, distiller, setup, sync, import
    source: str  # git, uncommitted, untracked, frontmatter, witness
    by: str = ""  # the commit's author, or the witness's source
    commit: str = ""
    message: str = ""
    path: str = ""  # the file's name in the store at that version
    description: str = ""
    text: str = ""  # the whole file at that version (git), else ""

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(frozen=True, slots=True)
class Link:
    """One memory of the supersede chain, oldest first."""

    slug: str
    description: str
    state: str  # current, superseded, archived, missing
    until: str = ""  # the day it was replaced


@dataclass(frozen=True, slots=True)
class History:
    store: str
    slug: str
    in_git: bool
    versions: tuple[Version, ...] = ()
    chain: tuple[Link, ...] = field(default=())
    older: int = 0  # commits past MAX_VERSIONS, not read

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "slug": self.slug,
            "in_git": self.in_git,
            "versions": [v.to_dict() for v in self.versions],
            "chain": [
                {"slug": c.slug, "description": c.description, "state": c.state, "until": c.until}
                for c in self.chain
            ],
            "older": self.older,
        }


def history(store: Store, slug: str) -> History:
    """The memory's versions, newest first, and its supersede chain. A memory whose file is
    gone (deleted, purged, renamed away by hand) still has the versions git kept."""
    try:
        data, memory = store.read(slug)
    except NotFound:
        gone = _gone(store, slug)
        if gone is None:
            raise
        return gone
    if not data and memory.findings:
        raise NotFound(f"{store.name}/{memory.slug}: {memory.findings[0].message}")
    rel = memory.path.relative_to(store.root).as_posix()
    found = _from_git(store.root, rel, data)
    chain = tuple(_chain(store, memory))
    if found is None:
        return History(store.name, memory.slug, False, tuple(_recorded(memory)), chain)
    versions, older = found
    return History(store.name, memory.slug, True, tuple(versions), chain, older)


def _gone(store: Store, slug: str) -> History | None:
    """The history git kept of a memory whose file is no longer there (None: none)."""
    try:
        rel = new_slug(slug.strip()) + ".md"
    except StoreError:
        return None
    found = _from_git(store.root, rel, None)
    if not found or not found[0]:
        return None
    from kura.life.purge import buried, tombstones  # only a gone memory's versions can be a purged one's

    hashes = tombstones(store)
    kept = [_withheld(v) if buried(_said(v), hashes) else v for v in found[0]]
    return History(store.name, rel[:-3], True, tuple(kept), (), found[1])


def _said(version: Version) -> list[str]:
    note = nt.from_bytes(version.text.encode("utf-8"))
    return [t for t in (note.description, note.name) if t.strip()]


def _withheld(version: Version) -> Version:
    """A version of a purged memory: when and by whom, never what it said."""
    return replace(
        version, description="", text="", message=f"{version.message} (purged: its text is not shown)"
    )


# -- git ------------------------------------------------------------------------------------


def _from_git(root: Path, rel: str, now: bytes | None) -> tuple[list[Version], int] | None:
    """The file's versions from git, newest first (None outside a work tree, or without git);
    ``now``: the file's bytes in the work tree, None when it is gone."""
    try:
        inside = run(root, "rev-parse", "--is-inside-work-tree", check=False, timeout=READ_SECONDS)
        if not inside.ok or inside.text != "true":
            return None
        log = run(
            root,
            "-c",
            "core.quotePath=false",
            "log",
            "--follow",
            "--name-status",
            f"--format={_RS}%H{_US}%ct{_US}%an{_US}%s",
            "--",
            rel,
            check=False,
            timeout=READ_SECONDS,
        )
    except GitError:
        return None
    commits = _commits(log.text if log.ok else "")
    read = commits[:MAX_VERSIONS]
    blobs = [_blob(root, c["sha"], c["path"]) for c in read]
    versions: list[Version] = []
    for n, commit in enumerate(read):
        before = blobs[n + 1] if n + 1 < len(blobs) else None
        versions.append(_version(commit, blobs[n], before, first=n + 1 == len(commits)))
    head = blobs[0] if blobs else None
    if head != now:
        versions.insert(0, _uncommitted(root / rel, rel, now, head, tracked=bool(commits)))
    return versions, len(commits) - len(read)


def _commits(log: str) -> list[dict[str, str]]:
    """Each commit of ``git log --name-status``: sha, time, author, subject, status, path."""
    found = []
    for record in log.split(_RS)[1:]:
        head, _, names = record.partition("\n")
        parts = head.split(_US)
        changes = [line.split("\t") for line in names.splitlines() if "\t" in line]
        if len(parts) != 4 or not changes:
            continue
        status = changes[-1]
        found.append(
            {
                "sha": parts[0],
                "time": parts[1],
                "author": clean(parts[2]),  # a commit's words: no control character reaches a terminal
                "subject": clean(parts[3]),
                "status": status[0],
                "path": status[-1],
                "from": status[1] if len(status) == 3 else "",
            }
        )
    return found


def _blob(root: Path, sha: str, path: str) -> bytes | None:
    """The file at ``path`` (from the top of the work tree) in commit ``sha``."""
    if path.startswith("-"):
        return None
    shown = run(root, "show", f"{sha}:{path}", check=False, timeout=READ_SECONDS)
    return shown.out if shown.ok else None


def _version(commit: dict[str, str], data: bytes | None, before: bytes | None, *, first: bool) -> Version:
    note = nt.from_bytes(data or b"", commit["path"])
    was = nt.from_bytes(before, commit["path"]) if before is not None else None
    status = commit["status"][:1]
    what = "created" if first or status == "A" else "renamed" if status == "R" else _change(note, was)
    if status == "D":
        what = "deleted"
    moment = stamps.when(commit["time"])  # a crafted commit's date no calendar holds: none
    when = "undated" if moment is None else moment.strftime("%Y-%m-%d %H:%M")
    message = commit["subject"] + (f" (renamed from {commit['from']})" if status == "R" else "")
    return Version(
        when,
        what,
        _who(note, was, commit["subject"]),
        "git",
        by=commit["author"],
        commit=commit["sha"][:12],
        message=redact(message)[0],
        path=commit["path"],
        description=redact(note.description)[0],
        text=_shown(data),
    )


def _uncommitted(path: Path, rel: str, now: bytes | None, head: bytes | None, *, tracked: bool) -> Version:
    if now is None:
        return Version(
            dt.date.today().isoformat(),
            "deleted",
            "person",
            "uncommitted",
            message="deleted, not committed yet",
            path=rel,
        )
    note = nt.from_bytes(now, rel)
    was = nt.from_bytes(head, rel) if head is not None else None
    try:
        when = dt.datetime.fromtimestamp(os.stat(path).st_mtime).strftime("%Y-%m-%d %H:%M")
    except OSError:
        when = dt.date.today().isoformat()
    what = _change(note, was) if tracked else "created"
    return Version(
        when,
        what,
        _who(note, was, ""),
        "uncommitted" if tracked else "untracked",
        message="not committed yet",
        path=rel,
        description=redact(note.description)[0],
        text=_shown(now),
    )


def _shown(data: bytes | None) -> str:
    """A version's text as history shows it: a secret an old version held is redacted."""
    return redact((data or b"").decode("utf-8", "replace"))[0]


def _change(note: nt.MemoryFile, was: nt.MemoryFile | None) -> str:
    """What a version did to the memory's standing, else ``changed``."""
    if was is None:
        return "created"
    if note.meta.get("superseded_by") and not was.meta.get("superseded_by"):
        return "superseded"
    if note.meta.get("archived") and not was.meta.get("archived"):
        return "forgotten"
    return "changed"


def _who(note: nt.MemoryFile, was: nt.MemoryFile | None, subject: str) -> str:
    """Who wrote a version: the witnesses it added, then the commit's message, else a person."""
    had = set(wt.read(was.meta)[0]) if was is not None else set()
    added = [w for w in wt.read(note.meta)[0] if w not in had]
    for witness in added:
        said = _of(witness)
        if said != "person":
            return said
    lowered = subject.lower()
    for word, who in _SUBJECTS:
        if word in lowered:
            return who
    return "person"


def _of(witness: wt.Witness) -> str:
    """Who a witness says wrote the memory."""
    if witness.kind == "MANUAL":
        return "agent"
    if witness.session or witness.kind not in ("SAID",):
        return "distiller"
    return "person"


# -- outside git -----------------------------------------------------------------------------


def _recorded(memory: Memory) -> list[Version]:
    """What the file records of its own past, newest first."""
    meta, rel = memory.note.meta, memory.path.name
    found: list[Version] = []
    witnesses = wt.read(meta, rel)[0]
    first = _of(min(witnesses, key=lambda w: w.when or dt.date.max)) if witnesses else "person"
    for key, what, who in (("created", "created", first), ("updated", "changed", "")):
        day = wt.parse_when(meta.get(key))
        if day is not None:
            found.append(Version(day.isoformat(), what, who, "frontmatter", path=rel))
    for w in witnesses:
        if w.when is not None:
            by = w.source or w.session or ""
            said = f"{w.kind}: {redact(w.quote)[0]}" if w.quote else w.kind
            found.append(
                Version(w.when.isoformat(), "witnessed", _of(w), "witness", by=by, message=said, path=rel)
            )
    until = wt.parse_when(meta.get("valid_until"))
    newer = " ".join(str(meta.get("superseded_by") or "").split())
    if until is not None and newer:
        said = f"by {newer}"
        found.append(Version(until.isoformat(), "superseded", "", "frontmatter", message=said, path=rel))
    archived = wt.parse_when(meta.get("archived"))
    if archived is not None:
        reason = " ".join(str(meta.get("archived_reason") or "").split())
        found.append(Version(archived.isoformat(), "forgotten", "", "frontmatter", message=reason, path=rel))
    # newest first; on the day it was created, whatever else that day recorded came after it
    found.sort(key=lambda v: (v.when, v.what != "created"), reverse=True)
    if found:
        found[0] = _described(found[0], memory)
    return found


def _described(version: Version, memory: Memory) -> Version:
    return replace(version, description=redact(memory.description)[0], text="")


# -- the chain ------------------------------------------------------------------------------


def _chain(store: Store, memory: Memory) -> list[Link]:
    """The memories this one replaced (oldest first), itself, and those that replaced it;
    [] when it is in no chain."""
    back: list[Link] = []
    seen = {memory.slug}
    older = _named(memory.note.meta.get("supersedes"))
    while older and len(seen) < 50:
        slug = older[0]
        if slug in seen:
            break
        seen.add(slug)
        link, meta = _link(store, slug)
        back.insert(0, link)
        older = _named(meta.get("supersedes"))
    ahead: list[Link] = []
    newer = " ".join(str(memory.note.meta.get("superseded_by") or "").split())
    while newer and newer not in seen and len(seen) < 50:
        seen.add(newer)
        link, meta = _link(store, newer)
        ahead.append(link)
        newer = " ".join(str(meta.get("superseded_by") or "").split())
    if not back and not ahead:
        return []
    me = _link(store, memory.slug)[0]
    return [*back, me, *ahead]


def _link(store: Store, slug: str) -> tuple[Link, dict[str, Any]]:
    try:
        note = store.show(slug).note
    except NotFound:
        return Link(slug, "", "missing"), {}
    meta = note.meta
    state = "archived" if meta.get("archived") else "superseded" if meta.get("superseded_by") else "current"
    until = wt.parse_when(meta.get("valid_until"))
    return Link(slug, note.description, state, until.isoformat() if until else ""), meta


def _named(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value] if value else []
    return [" ".join(str(v).split()) for v in items if str(v).strip()]


# -- saying it ----------------------------------------------------------------------------------


def lines(found: dict[str, Any], *, full: bool = False) -> list[str]:
    """``History.to_dict()`` as text (the CLI's and the MCP tool's)."""
    where = "git" if found["in_git"] else "the file's own record (not in git)"
    said = [f"{found['slug']} in store '{found['store']}': {len(found['versions'])} version(s), from {where}"]
    for v in found["versions"]:
        who = v["who"] + (f" ({v['by']})" if v["by"] else "")
        tag = f" {v['commit'][:8]}" if v["commit"] else ""
        message = f" — {v['message']}" if v["message"] else ""
        said.append(f"{v['when']}{tag}  {v['what']:<11} {who}{message}")
        if v["description"]:
            said.append(f"    description: {v['description']}")
        if full and v["text"]:
            said.extend("    | " + line for line in v["text"].rstrip("\n").split("\n"))
    if found.get("older"):
        said.append(f"(and {found['older']} older commit(s), not read)")
    if found["chain"]:
        said.append("supersede chain, oldest first:")
        for c in found["chain"]:
            mark = " (this one)" if c["slug"] == found["slug"] else ""
            until = f", replaced {c['until']}" if c["until"] else ""
            said.append(f"  {c['slug']}{mark}: {c['state']}{until} — {c['description'] or '?'}")
    return said
