"""The store: the only code that opens memory files.

A store is a directory. Its memories are the ``*.md`` files in it (subfolders allowed)
except ``MEMORY.md``, anything whose name starts with ``_`` or ``.``, and the state folder
``.kura/`` (derived, gitignored, rebuildable). Two things follow from owning every open():

* **Containment.** A slug is looked up inside the store's own set of memories and
  nowhere else. The same rule decides what the walk lists and what a lookup may reach,
  so ``../x``, absolute paths, ``%2e%2e``, backslashes, symlinked folders and symlinks
  that leave the store all come out as "no such memory" — never as a foreign file.
* **Safe writes.** Every write is atomic and happens under the store lock, the index is
  re-read under the lock and updated line by line, and a write policy
  (``direct-allowed``, ``distiller-only``, ``frozen``) is checked here, where no caller
  can forget it.
"""

from __future__ import annotations

import datetime as _dt
import json
import stat
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from kura import index as ix
from kura import limits, policy
from kura import note as nt
from kura.atomic import identity, locked, settled_bytes, write_atomic
from kura.errors import NotFound, StoreError
from kura.secrets import refuse_secrets
from kura.slugs import INDEX_NAME, STATE_DIR, index_file, is_memory_name, lookup_parts, new_slug, scan_files
from kura.state import folder


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory as read from disk."""

    slug: str
    path: Path
    note: nt.Note

    @property
    def name(self) -> str:
        return self.note.name

    @property
    def description(self) -> str:
        return self.note.description

    @property
    def type(self) -> str | None:
        return self.note.type

    @property
    def findings(self) -> tuple[nt.Finding, ...]:
        return self.note.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "path": str(self.path),
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "meta": json.loads(json.dumps(self.note.meta, default=str)),
            "body": self.note.body,
            "links": list(self.note.links),
            "findings": [str(f) for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    slug: str
    path: Path
    created: bool
    changed: bool
    index_changed: bool

    @property
    def did_work(self) -> bool:
        return self.created or self.changed or self.index_changed


class Store:
    """A memory directory and the rules for touching it."""

    def __init__(
        self,
        root: str | Path,
        *,
        name: str | None = None,
        label: str = "",
        write_policy: str = "direct-allowed",
        charter: str = "",
        persona: str = "",
    ) -> None:
        if write_policy not in policy.POLICIES:
            raise StoreError(f"write_policy {write_policy!r} is not one of {', '.join(policy.POLICIES)}")
        self.root = Path(root).expanduser().absolute()
        self.name = name or self.root.name
        self.label = label
        self.write_policy = write_policy
        self.charter = charter
        self.persona = persona
        self._wrote: dict[Path, tuple[int, int, int] | None] = {}  # files this object last wrote
        self._index_cache: tuple[bytes, ix.Index] | None = None

    def __repr__(self) -> str:
        return f"Store({self.name!r}, {str(self.root)!r})"

    @property
    def state_dir(self) -> Path:
        """``.kura`` — StoreError when it is a symlink or not a folder (``kura.state.folder``)."""
        return folder(self.root, store=self.name)

    @property
    def index_path(self) -> Path:
        return self.root / INDEX_NAME

    # -- reading -------------------------------------------------------------------------

    def slugs(self) -> tuple[str, ...]:
        """Every memory's slug, sorted."""
        return tuple(sorted(slug for slug, _ in self._walk()))

    def resolve(self, slug: str) -> Path:
        """The file for a slug of this store, or NotFound — never a path outside it."""
        parts = lookup_parts(slug)
        if parts is None:
            raise self._not_found(slug)
        try:
            return self._resolve_parts(slug, parts)
        except OSError:  # a name too long for the filesystem, a loop of links, …
            raise self._not_found(slug) from None

    def _resolve_parts(self, slug: str, parts: list[str]) -> Path:
        path = self.root.joinpath(*parts[:-1], parts[-1] + ".md")
        for depth in range(1, len(parts)):
            if self.root.joinpath(*parts[:depth]).is_symlink():
                raise self._not_found(slug)
        if not path.is_file() or self._contained(path) is None:
            raise self._not_found(slug)
        return path

    def show(self, slug: str) -> Memory:
        """One memory, read tolerantly (problems are in ``.findings``)."""
        path = self.resolve(slug)
        return self._read(self._slug_of(path), path)

    def list(self, type: str | None = None) -> tuple[Memory, ...]:
        """All memories (or those of one type), sorted by slug."""
        found = (self._read(slug, self.root / rel) for slug, rel in sorted(self._walk()))
        return tuple(m for m in found if type is None or m.type == type)

    def index(self) -> ix.Index:
        path = index_file(self.root)
        text = self._read_text(path) if path.exists() else ""
        return ix.parse_index(text)

    def findings(self) -> tuple[nt.Finding, ...]:
        """Problems in the files themselves: broken frontmatter, escaping symlinks."""
        out: list[nt.Finding] = []
        for memory in self.list():
            out.extend(memory.findings)
        out.extend(self.walk_findings())
        return tuple(out)

    # -- writing -------------------------------------------------------------------------

    def remember(
        self,
        slug: str,
        description: str,
        body: str | None = None,
        *,
        type: str | None = None,
        title: str | None = None,
        actor: str = "direct",
    ) -> WriteResult:
        """Create or update one memory and its own index line."""
        self.check_write(actor)
        refuse_secrets(f"store '{self.name}', the slug", slug)  # a name is written too (never echoed)
        slug = new_slug(slug)
        description = " ".join(description.split())
        if not description:
            raise StoreError(
                f"{self.name}/{slug}: the description is empty; it is the line "
                "the index shows — say what the memory is in one line"
            )
        if type is not None and type not in nt.TYPES:
            raise StoreError(f"{self.name}/{slug}: type {type!r} is not one of {', '.join(nt.TYPES)}")
        refuse_secrets(f"{self.name}/{slug}", title or "", description, body or "")
        for text in (title or "", description, body or ""):
            limits.utf8(f"{self.name}/{slug}", text)
        limits.check_text(f"{self.name}/{slug}", title=title or "", description=description, body=body or "")
        with self._lock():
            return self._remember_locked(slug, description, body, type, title)

    def save(self, memory: Memory, *, actor: str = "direct", base: bytes | None = None) -> WriteResult:
        """Write an edited memory back; an unchanged one is not touched at all. With
        ``base`` (the bytes the edit started from), refuse if the file changed meanwhile."""
        self.check_write(actor)
        slug = new_slug(memory.slug)
        text = nt.render(memory.note)
        refuse_secrets(f"{self.name}/{slug}", text)
        data = limits.utf8(f"{self.name}/{slug}", text)
        with self._lock():
            path = self._target(slug)
            created = not path.exists()
            if base is not None and (None if created else path.read_bytes()) != base:
                raise StoreError(f"{self.name}/{slug}: changed meanwhile; nothing was written")
            if not created and path.read_bytes() == data:
                return WriteResult(slug, path, False, False, False)
            if not created:
                limits.check_rewritable(path, self._read(slug, path).note)
            write_atomic(path, data)
            return WriteResult(slug, path, created, True, False)

    def edit_index(self, change: Callable[[ix.Index], ix.Index], *, actor: str = "direct") -> bool:
        """Apply ``change`` to MEMORY.md under the store lock (policy checked); True if it
        changed anything. ``change`` may run more than once if an editor saves meanwhile."""
        self.check_write(actor)
        with self._lock():
            return self._update_index(change)

    def check_write(self, actor: str = "direct") -> None:
        """Refuse a write the store's policy does not allow (PolicyRefused)."""
        policy.check_write(self.write_policy, actor, store=self.name, where=str(self.root))

    def write_file(
        self, slug: str, data: bytes, *, index_line: str | None = None, actor: str = "direct"
    ) -> WriteResult:
        """Put a whole memory file in place as given (imports keep every byte), and its
        index line. Refuses to overwrite a different existing memory."""
        self.check_write(actor)
        slug = new_slug(slug)
        refuse_secrets(f"{self.name}/{slug}", data.decode("utf-8", errors="replace"))
        with self._lock():
            path = self._target(slug)
            created = not path.exists()
            if not created and path.read_bytes() != data:
                raise StoreError(
                    f"{self.name}/{slug}: a different memory with this slug "
                    "exists; nothing was changed — rename one of them"
                )
            if created:
                write_atomic(path, data)
            note = self._read(slug, path).note

            def change(index: ix.Index) -> ix.Index:
                if not created and slug in index.named():
                    return index  # a person may have edited the line since the last import
                return ix.upsert(index, slug, index_line or _entry(index, slug, note, None))

            return WriteResult(slug, path, created, created, self._update_index(change))

    # -- internals -----------------------------------------------------------------------

    def _remember_locked(
        self, slug: str, description: str, body: str | None, type: str | None, title: str | None
    ) -> WriteResult:
        path = self._target(slug)
        for _ in range(5):  # an editor saving the same file meanwhile: start again from its bytes
            old_bytes = self._settled(path)
            created = old_bytes is None
            if created:
                name = title or ix.title_for("", description, slug)
                meta: dict[str, Any] = {"name": name, "description": description, "type": type or "project",
                                        "created": _today()}  # fmt: skip
                note = nt.new_note(meta, body if body is not None else description)
                old_text = None
            else:
                assert old_bytes is not None
                old = self.decode(slug, path, old_bytes)
                limits.check_rewritable(path, old.note)
                note = old.note.with_meta(description=description)
                note = note.with_meta(name=title) if title else note
                note = note.with_type(type) if type else note
                note = note.with_body(body) if body is not None else note
                old_text = old.note.raw
            text = nt.render(note)
            changed = text != old_text
            if changed and not created:
                note = note.with_meta(updated=_today())
                text = nt.render(note)
            if changed and self._settled(path) != old_bytes:
                continue
            if changed:
                self._write(path, text.encode("utf-8"))
            index_changed = self._update_index(partial(_upsert, slug=slug, note=note, title=title))
            return WriteResult(slug, path, created, changed, index_changed)
        raise StoreError(
            f"{self.name}/{slug}: kept changing while kura tried to write it; nothing was written"
        )

    def _settled(self, path: Path) -> bytes | None:
        return settled_bytes(path, ours=self._wrote.get(path))

    def _write(self, path: Path, data: bytes) -> None:
        write_atomic(path, data)
        self._wrote[path] = identity(path)

    def _update_index(self, change: Callable[[ix.Index], ix.Index]) -> bool:
        """Apply ``change`` to the index; if a person's editor saved the file while we
        worked, start again from their version rather than overwrite it — and never read a
        half-saved file as the whole of it (``settled_bytes``)."""
        if self.index_path.is_symlink():
            raise StoreError(
                f"{INDEX_NAME} of store '{self.name}' is a symlink; kura does not write through links — "
                "replace it with the file itself"
            )
        for _ in range(5):
            before = self._settled(self.index_path) or b""
            kept = self._index_cache  # as this object last wrote it: no need to parse it again
            text = before.decode("utf-8", "surrogateescape")
            current = kept[1] if kept and kept[0] == before else ix.parse_index(text)
            updated = change(current)
            if updated is current:
                return False
            data = ix.render_index(updated).encode("utf-8", errors="surrogateescape")
            if (self._settled(self.index_path) or b"") == before:
                self._write(self.index_path, data)
                self._index_cache = (data, updated)
                return True
        raise StoreError(
            f"{INDEX_NAME} of store '{self.name}': kept changing while kura tried to update it; "
            "nothing was written to it — try again"
        )

    def _lock(self) -> AbstractContextManager[None]:
        """The store's write lock; never creates a store that does not exist."""
        if not self.root.is_dir():
            raise self._missing()
        return locked(self.state_dir / "lock")

    def _missing(self) -> StoreError:
        return StoreError(
            f"store '{self.name}': {self.root} is not a directory — create it "
            f"with `kura init {self.name} --path {self.root}`"
        )

    def _target(self, slug: str) -> Path:
        """Where a (possibly new) slug's file goes, refusing anything that would leave
        the store or land on something that is not a memory."""
        if not self.root.is_dir():
            raise self._missing()
        parts = slug.split("/")
        parent = self.root.joinpath(*parts[:-1])
        for depth in range(1, len(parts)):
            if self.root.joinpath(*parts[:depth]).is_symlink():
                raise StoreError(
                    f"{self.name}/{slug}: a folder on the way is a symlink; kura does not write through links"
                )
        path = parent / (parts[-1] + ".md")
        try:
            parent.mkdir(parents=True, exist_ok=True)
            odd = path.is_symlink() or (path.exists() and not path.is_file())
        except OSError as err:  # a folder part that is a file, a name too long, …
            raise StoreError(f"{self.name}/{slug}: cannot be a memory here ({err.strerror})") from None
        if odd:
            raise StoreError(
                f"{self.name}/{slug}: {path.name} is not a plain file; kura does not write through links"
            )
        return path

    def _walk(self) -> Iterator[tuple[str, str]]:
        """(slug, relative path) of every memory."""
        for rel, kind in self._entries():
            if kind == "unreadable" or not is_memory_name(rel):
                continue
            if kind == "file" or self._contained(self.root / rel):
                yield rel[:-3], rel

    def _entries(self) -> Iterator[tuple[str, str]]:
        if not self.root.is_dir():
            raise self._missing()
        return scan_files(self.root)

    def _contained(self, path: Path) -> Path | None:
        """The path's real location relative to the store, if it is a memory there."""
        try:
            real = path.resolve(strict=True)
            rel = real.relative_to(self.root.resolve())
            if not stat.S_ISREG(real.stat().st_mode):
                return None  # a link to a FIFO or a device would hang or lie
        except (OSError, ValueError):
            return None
        return rel if is_memory_name(rel) else None

    def walk_findings(self) -> Iterator[nt.Finding]:
        """What the walk passed over that a person should know about: symlinks that leave
        the store or point at non-memories, and folders it could not read."""
        for rel, kind in self._entries():
            if kind == "unreadable":
                yield nt.Finding(
                    f"{self.name}/{rel}/",
                    1,
                    "folder cannot be read; its memories are missing — fix its permissions",
                )
            elif kind == "link" and is_memory_name(rel) and not self._contained(self.root / rel):
                yield nt.Finding(
                    f"{self.name}/{rel}",
                    1,
                    "symlink points outside the store (or "
                    "at something that is not a memory); ignored — replace it with "
                    "the file itself",
                )

    def _slug_of(self, path: Path) -> str:
        return path.relative_to(self.root).with_suffix("").as_posix()

    def contains(self, rel: str) -> bool:
        """Whether a path relative to the store is one of its memories (links resolved)."""
        return is_memory_name(rel) and self._contained(self.root / rel) is not None

    def files(self) -> Iterator[tuple[str, str]]:
        """(slug, path relative to the store) of every memory, unsorted — the walk."""
        return self._walk()

    def _read(self, slug: str, path: Path) -> Memory:
        try:
            data = path.read_bytes()
        except OSError as err:
            finding = nt.Finding(
                f"{self.name}/{slug}.md", 1, f"cannot read the file ({err.strerror}); fix its permissions"
            )
            return Memory(slug, path, nt.Note(meta={}, body="", findings=(finding,)))
        return self.decode(slug, path, data)

    def decode(self, slug: str, path: Path, data: bytes) -> Memory:
        """A memory from the bytes of its file (for callers that already read them)."""
        rel = f"{self.name}/{slug}.md"
        try:
            return Memory(slug, path, nt.parse(data.decode("utf-8"), rel))
        except UnicodeDecodeError as err:
            note = nt.parse(data.decode("utf-8", errors="replace"), rel)
            line = data[: err.start].count(b"\n") + 1
            finding = nt.Finding(
                rel, line, "not valid UTF-8; read with replacement characters — re-save the file as UTF-8"
            )
            broken = nt.Note(meta=note.meta, body=note.body, findings=(finding, *note.findings),
                             has_frontmatter=note.has_frontmatter)  # fmt: skip
            return Memory(slug, path, broken)

    def _read_text(self, path: Path) -> str:
        try:
            return path.read_bytes().decode("utf-8", errors="replace")
        except OSError as err:
            raise StoreError(f"{path}: cannot read ({err.strerror})") from err

    def _not_found(self, slug: str) -> NotFound:
        return NotFound(
            f"no memory {slug!r} in store '{self.name}' ({self.root}); `kura list` shows what there is"
        )


def _upsert(index: ix.Index, *, slug: str, note: nt.Note, title: str | None) -> ix.Index:
    return ix.upsert(index, slug, _entry(index, slug, note, title))


def _entry(index: ix.Index, slug: str, note: nt.Note, title: str | None) -> str:
    """The memory's index line; a title someone gave its existing line is kept."""
    existing = index.line_for(slug)
    given = title or (existing.title if existing else "") or note.name
    chosen = ix.title_for(given, note.description, slug)
    if existing is not None:
        return ix.update_entry(existing, chosen, note.description)
    return ix.entry_text(slug, chosen, note.description)


def init_store(path: str | Path, *, name: str | None = None) -> tuple[Store, bool]:
    """Create (or complete) a store folder: MEMORY.md, and a .gitignore for the state
    folder. Returns the store and whether anything was created."""
    root = Path(path).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise StoreError(f"{root} exists and is not a directory; choose another --path")
    root.mkdir(parents=True, exist_ok=True)
    store = Store(root, name=name)
    did = False
    if not store.index_path.exists():
        write_atomic(store.index_path, ix.HEADER.encode("utf-8"))
        did = True
    gitignore = root / ".gitignore"
    existing = gitignore.read_text(encoding="utf-8") if gitignore.exists() else ""
    if f"{STATE_DIR}/" not in existing.splitlines():
        sep = "" if not existing or existing.endswith("\n") else "\n"
        write_atomic(gitignore, (existing + sep + f"{STATE_DIR}/\n").encode("utf-8"))
        did = True
    return store, did


def _today() -> _dt.date:
    return _dt.date.today()
