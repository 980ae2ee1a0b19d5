"""Claude Code's own auto memory, brought under the project's store.

Claude Code keeps an auto memory of kura's shape — ``MEMORY.md`` plus one-fact files with
name/description/type frontmatter — in ``~/.claude/projects/<sanitised root>/memory/`` and
puts the first 200 lines (25,000 bytes) of that ``MEMORY.md`` into every session. Left
alone it would be a second memory beside the store, its index sent next to kura's map, cut
at 200 lines. Its setting ``autoMemoryDirectory`` moves it (documented for the user's and
the local settings, not a checked-in ``.claude/settings.json``); so ``kura setup
claude-code`` points it at an inbox inside the store's state folder, whose ``MEMORY.md`` is a
short note: the model reads that note, not a second index, and the map stays the one
index it is given.

``absorb`` files what Claude wrote into the inbox through the door ``kura remember`` uses
(the store's write policy, the secret check, the size limits, atomic writes, the index
line) and moves each filed file aside into ``.filed/`` — never deleted. A file kura cannot
take stays in the inbox, untouched, and is reported at every pass until it can be taken.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from kura.errors import KuraError
from kura.files import memory_file as nt
from kura.files.slugs import STATE_DIR
from kura.life.corrections import remember
from kura.store.atomic import locked, settled_bytes, write_atomic
from kura.store.store import Store

INDEX = "MEMORY.md"
FILED = ".filed"
MAX_BYTES = 1 << 20
TITLE_CHARS = 40
SANITISED_MAX = 200  # Claude Code cuts a longer folder name here and adds a hash
NOTE = """# Memory

This project's memory is kept by kura, in the project's store: its map was given to you
at the start of this session, and the kura tools (recall, remember) search and write it.

To remember something, save one fact per file in this folder as usual (frontmatter name,
description, type). kura files each one into the store and takes it out of this folder,
so this folder stays empty and there is no index to keep here.
"""


@dataclass(frozen=True, slots=True)
class Absorbed:
    """What one pass filed (slugs) and what it could not take (``name: why``)."""

    filed: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def inbox(store_root: Path) -> Path:
    """The folder Claude Code's ``autoMemoryDirectory`` points at for this store."""
    return store_root / STATE_DIR / "claude-memory"


def prepare(store_root: Path) -> bool:
    """Make the inbox and its note; True when anything was written."""
    box = inbox(store_root)
    box.mkdir(parents=True, exist_ok=True)
    note = box / INDEX
    if note.is_file() and note.read_bytes() == NOTE.encode("utf-8"):
        return False
    if note.exists():
        _set_aside(box, note)
    write_atomic(note, NOTE.encode("utf-8"))
    return True


def absorb(store: Store) -> list[str]:
    """File what Claude wrote to its auto memory since the last call into ``store``; the
    slugs written."""
    return list(absorb_all(store).filed)


def absorb_all(store: Store) -> Absorbed:
    box = inbox(store.root)
    if not box.is_dir():
        return Absorbed()
    filed: list[str] = []
    refused: list[str] = []
    with locked(store.root / STATE_DIR / "claude-memory.lock"):
        for entry in sorted(os.scandir(box), key=lambda e: e.name):
            if entry.name.startswith(".") or entry.name == INDEX:
                continue
            if not entry.name.endswith(".md") or not entry.is_file(follow_symlinks=False):
                refused.append(f"{entry.name}: not a memory file; kura files one-fact .md files")
                continue
            try:
                slug = _file_one(store, box, Path(entry.path))
            except KuraError as err:
                refused.append(f"{entry.name}: {err}")
                continue
            if slug:
                filed.append(slug)
        _keep_note(box)
    return Absorbed(tuple(filed), tuple(refused))


def _file_one(store: Store, box: Path, path: Path) -> str | None:
    """The memory ``path`` holds, remembered in ``store`` and moved aside; its slug (None
    when the file went away meanwhile)."""
    data = settled_bytes(path, cap=MAX_BYTES)
    if data is None:
        return None
    note = nt.from_bytes(data, str(path))
    if not note.description:
        raise KuraError("it has no description in its frontmatter, so kura cannot index it; left here")
    title = note.name if 0 < len(note.name) <= TITLE_CHARS else None
    slug = re.sub(r"[^\w.-]+", "-", path.stem).strip("-.") or "memory"
    done = remember(store, slug, note.description, note.body, type=note.type, title=title)
    if path.read_bytes() == data:  # a newer save waits for the next pass
        _set_aside(box, path)
    return done.result.slug


def _keep_note(box: Path) -> None:
    """The note back in place of an index Claude wrote (that index kept aside)."""
    note = box / INDEX
    try:
        same = note.read_bytes() == NOTE.encode("utf-8")
    except OSError:
        same = False
    if not same:
        if note.exists():
            _set_aside(box, note)
        write_atomic(note, NOTE.encode("utf-8"))


def _set_aside(box: Path, path: Path) -> Path:
    aside = box / FILED
    aside.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = aside / f"{stamp}-{path.name}"
    os.replace(path, target)
    return target


def sanitised(folder: Path) -> str:
    """The name Claude Code gives a project's folder under ``~/.claude/projects``."""
    return re.sub(r"[^a-zA-Z0-9]", "-", str(folder))


def default_folder(root: Path, claude_config: Path) -> Path | None:
    """Where Claude Code keeps the auto memory of the project at ``root`` by default (None
    when a long name's hashed folder cannot be told apart)."""
    name = sanitised(root)
    projects = claude_config / "projects"
    if len(name) <= SANITISED_MAX:
        return projects / name / "memory"
    found = sorted(projects.glob(f"{name[:SANITISED_MAX]}-*"))
    return found[0] / "memory" if len(found) == 1 else None
