"""What a slug is, and which files are memories: the containment rule in one place.

The store walks its folder with ``is_memory_name`` and looks slugs up with
``lookup_parts``; because both apply the same rule (and the store re-checks the real,
symlink-resolved location against it), the set of names a lookup can reach is exactly the
set the walk lists. Anything else — ``../x``, absolute paths, backslashes, drive letters,
names starting with ``_`` or ``.`` (private files and the state folder) — is no memory.

Names kura itself creates (``new_slug``) are stricter than names it will read, because a
person's ``My Notes.md`` should still be found, but kura should not invent such names.

Every name kura creates is first put in composed Unicode (NFC): ``café`` typed as ``e`` and
a combining accent looks exactly like ``café`` with ``é``, so it must be the same memory,
never a second file that reads the same. A look-up takes the name as spelled, then its NFC
form, then a file a person saved under a decomposed spelling (macOS and some tools write
NFD) that is the same in NFC (``lookalike``); and kura refuses to create a memory beside
such a twin. The containment rule is applied to the name as given and again, by the store,
to the real location of whatever file is found.

The folder ``threads/`` at the top of a store (any case) belongs to threads
(``kura.threads``): the notebooks and keyed items of agents' threads. Nothing in it is a
memory — not listed, not looked up, not created, not in the index, the map, doctor or
recall — so a thread's scratch notes never pose as the store's durable facts.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import unicodedata
from collections.abc import Iterator
from itertools import chain, compress
from operator import itemgetter
from pathlib import Path
from stat import S_ISDIR, S_ISLNK, S_ISREG

from kura.errors import StoreError
from kura.files.folder_walk import open_below, open_top

STATE_DIR = ".kura"
INDEX_NAME = "MEMORY.md"
SLUG_MAX = 160
PART_BYTES = 200  # a file name is at most 255 bytes; ".md" and a temporary suffix need room
THREADS_DIR = "threads"  # the store's folder of threads: never memories (kura.threads)
_NEW_PART = re.compile(r"[^\W_][\w.\-]*")  # used with fullmatch: "$" would let "x\n" through
# A part of a name no look-up can reach: a control character (a newline splits MEMORY.md's line
# and the terminal's), ":" or "\\", or white space at either end. Such a file is never listed,
# so it cannot make every reader fail; doctor names it (``unreachable_name``).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Bytes that are not UTF-8 reach Python as lone surrogates (U+DC80-U+DCFF, ``surrogateescape``),
# which no SQLite text, JSON or terminal takes: such a name is unreachable too.
_UNREACHABLE = re.compile(r"[\x00-\x1f\x7f:\\\udc80-\udcff]|(?:\A|/)\s|\s(?:/|\.md\Z)")


def is_memory_name(rel: Path | str) -> bool:
    """Whether a path relative to the store (``a/b.md``) names a memory."""
    if isinstance(rel, str) and "/" not in rel:  # the common case, taken 20,000 times a weave
        return (
            rel.endswith(".md")
            and len(rel) > 3
            and rel[:1] not in "._"
            and rel.lower() != "memory.md"
            and _UNREACHABLE.search(rel) is None
        )
    text = rel.as_posix() if isinstance(rel, Path) else rel
    return _UNREACHABLE.search(text) is None and _named_like_memory(text)


def memory_names(rels: list[str]) -> list[bool]:
    """``[is_memory_name(rel) for rel in rels]``, in a few passes over the joined text of
    the names that are not the index when each is a plain memory name in the top folder
    (the usual store, 20,000 names a weave); else name by name."""
    named = [rel.lower() != "memory.md" for rel in rels]  # the index, in any case, is no memory
    return named if _plain(list(compress(rels, named))) else [is_memory_name(rel) for rel in rels]


def _plain(names: list[str]) -> bool:
    """Whether every one of ``names`` is a plain memory name in the top folder (other than the
    index). Each check only ever says "maybe not" wrongly, never "yes"."""
    joined = "/".join(names)
    return (
        joined.count("/") == len(names) - 1  # no folders: the names are exactly the parts
        and joined.count(".md/") == len(names) - 1  # each ends with .md (only a name's end meets "/")
        and joined.endswith(".md")
        and joined[:1] not in "._/"
        and "/." not in joined  # none starts with "." or "_", and so none is ".md" alone
        and "/_" not in joined
        and _reachable(joined)
    )


def _reachable(joined: str) -> bool:
    """What ``_UNREACHABLE`` finds in no name, asked of all of them joined by "/" in C scans
    (its regex took ~5 ms over 20,000 names). A printable string holds no control character,
    and of the characters ``\\s`` matches only the space (``tests/files/test_fast_paths.py``
    checks both over every code point); so what is left to find is a space at a part's
    start or end, ':' and '\\'. A string that is not printable is asked name by name."""
    return (
        joined.isprintable()
        and ":" not in joined
        and "\\" not in joined
        and not joined.startswith(" ")
        and "/ " not in joined
        and " /" not in joined
        and " .md/" not in joined
        and not joined.endswith(" .md")
    )


UNREACHABLE_TODO = (
    "a file name kura never makes (a control character such as a newline, bytes that are not UTF-8, "
    "':' or '\\', or a space at either end of a part): skipped by every reader — rename it to letters, "
    "digits, '-', '.' and '_'"
)


def unreachable_name(rel: str) -> bool:
    """Whether ``rel`` looks like a memory file but has a name no look-up can reach (and kura
    never makes): it is skipped by every reader and named by doctor."""
    return _UNREACHABLE.search(rel) is not None and _named_like_memory(rel)


def _named_like_memory(text: str) -> bool:
    parts = text.split("/")
    return (
        parts[-1].endswith(".md")
        and len(parts[-1]) > 3
        and parts[-1].lower() != INDEX_NAME.lower()
        and all(part[:1] not in ("", ".", "_") for part in parts)
        and not in_threads(parts)
    )


def in_threads(parts: list[str]) -> bool:
    """Whether a path's parts lie in the store's ``threads/`` folder (any case: a file
    system that ignores case would make ``Threads/`` the same folder)."""
    return len(parts) > 1 and parts[0].lower() == THREADS_DIR


def lookup_parts(slug: object) -> list[str] | None:
    """Split a slug for lookup; None for anything that could name a foreign file."""
    if not isinstance(slug, str) or not slug or _CONTROL.search(slug) or "\\" in slug:
        return None
    if slug.endswith(".md"):
        slug = slug[:-3]
    parts = slug.split("/")
    if any(not p or p[:1] in "._" or ":" in p or p != p.strip() for p in parts) or in_threads(parts):
        return None
    return parts


def new_slug(slug: str) -> str:
    """A slug kura may create: word characters, dots and dashes, ``/`` for folders; in NFC."""
    slug = unicodedata.normalize("NFC", slug)
    bare = slug[:-3] if slug.endswith(".md") else slug
    parts = bare.split("/")
    if in_threads(parts):
        raise StoreError(
            f"{slug!r} is not a usable slug: the folder {THREADS_DIR}/ holds threads' notebooks "
            "(kura thread), never memories — choose another folder"
        )
    if (
        len(bare) > SLUG_MAX
        or not all(_NEW_PART.fullmatch(p) and len(p.encode("utf-8")) <= PART_BYTES for p in parts)
        or any(p.lower().endswith(".md") for p in parts[:-1])  # a folder that looks like a memory
        or parts[-1].lower() == INDEX_NAME[:-3].lower()
    ):
        raise StoreError(
            f"{slug!r} is not a usable slug: use letters, digits, '-', '.' and "
            "'_' (not first), with '/' for folders, e.g. deploy-checklist"
        )
    return bare


def new_part(part: str) -> bool:
    """Whether one part of a name (between ``/``) is one kura may create."""
    return bool(_NEW_PART.fullmatch(part)) and len(part.encode("utf-8")) <= PART_BYTES


def taken_as(given: str, slug: str) -> str | None:
    """Why a name given to kura was written as another slug (``x.md`` as ``x``, a decomposed
    ``café`` as the composed one), for the person who gave it; None when it was not."""
    if given == slug:
        return None
    why = []
    if unicodedata.normalize("NFC", given) != given:
        why.append(
            "names are stored in composed Unicode (NFC), so a name that looks the same is the same memory"
        )
    if unicodedata.normalize("NFC", given).endswith(".md"):
        why.append("a slug names a memory without .md")
    if not why:
        return None
    return f"{given!r} was written as memory {slug!r} (file {slug}.md): {'; '.join(why)}"


def lookalike(root: Path, parts: list[str]) -> list[str] | None:
    """The spelling on disk of the memory ``parts`` names in another Unicode form — its NFC
    form, or a name saved by hand decomposed (the same in NFC) — when ``parts`` as spelled
    names nothing; else None. The exact spelling always wins, so of two files that look
    alike each stays reachable by its own name. A folder is listed only on a miss."""
    names = [*parts[:-1], parts[-1] + ".md"]
    if os.path.lexists(os.path.join(root, *names)):
        return None
    found: list[str] = []
    folder = root
    try:
        for name in names:
            spelled = _spelled(folder, name)
            if spelled is None:
                return None
            found.append(spelled)
            folder = folder / spelled
    except OSError:  # a folder that cannot be listed, a name too long: no twin to be found
        return None
    return [*found[:-1], found[-1][:-3]]


def _spelled(folder: Path, name: str) -> str | None:
    """``name`` as ``folder`` spells it: as given, in NFC, or an entry that is the same in
    NFC (only a name that is not plain ASCII can differ from its NFC form)."""
    if os.path.lexists(folder / name):
        return name
    key = unicodedata.normalize("NFC", name)
    if key != name and os.path.lexists(folder / key):
        return key
    twins = [e for e in os.listdir(folder) if not e.isascii() and unicodedata.normalize("NFC", e) == key]
    return min(twins) if twins else None


def twin_refused(where: str, twin: list[str]) -> StoreError:
    return StoreError(
        f"{where}: {'/'.join(twin)}.md already holds this name spelled with other Unicode characters "
        "(it looks the same); nothing was written — rename that file to the composed (NFC) name, or edit it"
    )


def scan_files(root: Path) -> Iterator[tuple[str, str]]:
    """Every ``*.md`` file outside private folders as (relative posix path, "file", "link"
    or "special" — a FIFO, socket or device, which is never read), and folders that could
    not be read as (path, "unreadable"). Symlinked folders are not entered. One scandir
    pass over plain strings: no stat per plain file, which keeps a walk of 20,000 memories
    in tens of milliseconds."""
    for rel, kind, _ in _scan(root, with_stats=False):
        yield rel, kind


Ident = tuple[int, int, int, int]
Stats = list[tuple[str, Ident, bool]]


def file_stats(root: Path) -> Stats:
    """(relative path, (inode, size, mtime_ns, ctime_ns), is it a symlink) of every
    candidate memory file and of MEMORY.md, sorted: enough to tell whether anything
    changed without reading a file. (The walk finds MEMORY.md like any other .md file.)"""
    stats = _stat_walk(root)
    stats.sort(key=itemgetter(0))  # each path once: the tuples' own order, without comparing tuples
    return stats


def identity(stats: Stats) -> str:
    """A checksum over ``file_stats``: it changes when any memory file or the index is
    edited, added, removed, renamed or moved with its folder. The names and the numbers
    are each packed whole and hashed once (no Python step a file), so a hook can afford
    it on every prompt at 20,000 memories."""
    if not stats:
        return "0-" + hashlib.sha256(b"").hexdigest()[:32]
    rels, idents, _ = zip(*stats, strict=True)
    digest = hashlib.sha256("\0".join(rels).encode("utf-8", "surrogateescape"))
    numbers = list(chain.from_iterable(idents))
    try:
        digest.update(struct.pack(f"<{len(numbers)}q", *numbers))
    except struct.error:  # a number past 64 bits (an odd file system's inode): its digits instead
        digest.update(repr(idents).encode())
    return f"{len(stats)}-{digest.hexdigest()[:32]}"


def stamp_files(root: Path) -> str:
    """``identity(file_stats(root))`` (the prefill hot path)."""
    return identity(file_stats(root))


def _scan(root: Path, *, with_stats: bool) -> Iterator[tuple[str, str, Ident | None]]:
    if with_stats:
        yield from ((rel, "link" if link else "file", ident) for rel, ident, link in _stat_walk(root))
        return
    stack = [""]
    for prefix, fd in _folders(root, stack):
        listed = None if fd is None else _listed(fd, prefix, stack)
        if listed is None:
            yield prefix, "unreadable", None
            continue
        yield from ((rel, kind, None) for rel, kind in listed)


def _folders(root: Path, stack: list[str]) -> Iterator[tuple[str, int | None]]:
    """Each folder taken off ``stack`` (the caller pushes the subfolders of the one it holds)
    as (its path, an open descriptor), or (its path, None) when it cannot be read. Opened from
    the store's folder a part at a time, never through a link (``open_below``): a folder
    swapped for a link since its parent was listed is not entered. Each descriptor is closed
    when the caller asks for the next folder."""
    try:
        top = open_top(root)
    except OSError:
        yield "", None
        return
    try:
        while stack:
            prefix = stack.pop()
            try:
                fd = open_below(top, prefix) if prefix else top
            except OSError:
                yield prefix, None
                continue
            if fd is None:
                continue
            try:
                yield prefix, fd
            finally:
                if fd != top:
                    os.close(fd)
    finally:
        os.close(top)


def _listed(fd: int, prefix: str, stack: list[str]) -> list[tuple[str, str]] | None:
    """The ``*.md`` names of the open folder ``fd`` with their kind (None when it cannot be
    read); its subfolders pushed on ``stack``. Read while ``fd`` is open: a name's kind may
    need a look relative to it."""
    try:
        entries = list(os.scandir(fd))
    except OSError:
        return None
    found: list[tuple[str, str]] = []
    for entry in entries:
        name = entry.name
        if name[:1] in "._":
            continue
        rel = f"{prefix}/{name}" if prefix else name
        if entry.is_dir(follow_symlinks=False):
            if prefix or name.lower() != THREADS_DIR:  # threads/ holds no memories
                stack.append(rel)
            continue
        if not name.endswith(".md"):
            continue
        link = entry.is_symlink()
        special = not link and not entry.is_file(follow_symlinks=False)  # a FIFO, socket, device
        found.append((rel, "link" if link else "special" if special else "file"))
    return found


def _stat_walk(root: Path) -> Stats:
    """``file_stats`` unsorted: every folder opened once (``_folders``: never through a
    link), and each of its names looked at relative to it (``stat`` with ``dir_fd``), not
    through the whole path again — at 20,000 memories that path lookup was a third of the
    walk. A link is identified by what it points at; a dangling one, a FIFO, socket or device
    is left out, and so is a folder that cannot be read."""
    stats: Stats = []
    stack = [""]
    for prefix, fd in _folders(root, stack):
        if fd is not None:
            stats += _stat_folder(fd, prefix, stack)
    return stats


def _stat_folder(fd: int, prefix: str, stack: list[str]) -> Stats:
    """The memory-like files of the open folder ``fd`` with their identity; its subfolders
    pushed on ``stack``."""
    found: Stats = []
    try:
        names = os.listdir(fd)
    except OSError:
        return found
    for name in names:
        if name[:1] in "._":
            continue
        try:
            seen = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:  # gone since the listing
            continue
        rel = f"{prefix}/{name}" if prefix else name
        if S_ISDIR(seen.st_mode):
            if prefix or name.lower() != THREADS_DIR:  # threads/ holds no memories
                stack.append(rel)
            continue
        if not name.endswith(".md"):
            continue
        link = S_ISLNK(seen.st_mode)
        if link:
            try:
                seen = os.stat(name, dir_fd=fd)
            except OSError:  # a link to nothing
                continue
        elif not S_ISREG(seen.st_mode):  # a FIFO, socket or device: never read
            continue
        found.append((rel, (seen.st_ino, seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns), link))
    return found


def index_file(root: Path) -> Path:
    """MEMORY.md, refusing one that is a symlink out of the store (its bytes are not the
    store's to show)."""
    path = root / INDEX_NAME
    if path.is_symlink():
        try:
            path.resolve(strict=True).relative_to(root.resolve())
        except (OSError, ValueError):
            raise StoreError(
                f"{path} is a symlink to {os.readlink(path)}, outside the store; kura will not "
                "read or write through it — replace it with the file itself"
            ) from None
    return path
