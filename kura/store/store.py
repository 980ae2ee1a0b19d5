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

import stat
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path

from kura.errors import NotFound, StoreError
from kura.files import memory_file as nt
from kura.files import memory_index as ix
from kura.files import slugs
from kura.files.belief import retired
from kura.files.memory import Memory as Memory
from kura.files.memory import WriteResult as WriteResult
from kura.files.memory import body_kept, current, not_superseded, own_line, remembered
from kura.files.slugs import INDEX_NAME, STATE_DIR, is_memory_name, lookup_parts, new_slug, scan_files
from kura.store import policy, write_checks
from kura.store import rewrite as rw
from kura.store.atomic import identity, locked, settled_bytes, write_atomic
from kura.store.safe_read import INDEX_CAP, MEMORY_CAP, SPECIAL_TODO, Refused, kind_at, read_in
from kura.store.state import folder


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
        """``.kura`` — StoreError when it is a symlink or not a folder (``kura.store.state.folder``)."""
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
        parts = slugs.lookalike(self.root, parts) or parts  # saved by hand in a decomposed spelling
        path = self.root.joinpath(*parts[:-1], parts[-1] + ".md")
        for depth in range(1, len(parts)):
            if self.root.joinpath(*parts[:depth]).is_symlink():
                raise self._not_found(slug)
        if not path.is_file() or self._contained(path) is None:
            raise self._not_found(slug)
        return path

    def show(self, slug: str) -> Memory:
        """One memory, read tolerantly (problems are in ``.findings``)."""
        return self.read(slug)[1]

    def list(self, type: str | None = None) -> tuple[Memory, ...]:
        """All memories (or those of one type), sorted by slug."""
        found = (self._read(slug, self.root / rel) for slug, rel in sorted(self._walk()))
        return tuple(m for m in found if type is None or m.type == type)

    def index(self) -> ix.Index:
        return ix.parse_index(self.index_bytes().decode("utf-8", errors="replace"))

    def index_bytes(self) -> bytes:
        """MEMORY.md's bytes (empty when there is none); StoreError when it must not be read:
        not a regular file, a link out of the store, over ``INDEX_CAP`` (``kura.store.safe_read``)."""
        got = read_in(self.root, INDEX_NAME, cap=INDEX_CAP, what="the index")
        if isinstance(got, Refused):
            raise StoreError(f"{self.index_path}: {got.what}; the index was not read — {got.todo}")
        return got or b""

    def findings(self) -> tuple[nt.Finding, ...]:
        """Problems in the files themselves: broken frontmatter, escaping symlinks."""
        return (*(f for memory in self.list() for f in memory.findings), *self.walk_findings())

    # -- writing -------------------------------------------------------------------------

    def remember(
        self, slug: str, description: str, body: str | None = None, *, type: str | None = None,
        title: str | None = None, actor: str = "direct",
        amend: Callable[[nt.MemoryFile], nt.MemoryFile] | None = None,
    ) -> WriteResult:  # fmt: skip
        """Create or update one memory and its own index line. ``amend`` makes a further
        change to the note (a witness, say) in the same locked write."""
        from kura.text.secrets import refuse_secrets  # here: a reader loads no patterns

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
            write_checks.utf8(f"{self.name}/{slug}", text)
        write_checks.check_text(
            f"{self.name}/{slug}", title=title or "", description=description, body=body or ""
        )
        write_checks.check_title(f"{self.name}/{slug}", title)
        with self._lock():
            return self._remember_locked(slug, description, body, type, title, amend)

    def save(self, memory: Memory, *, actor: str = "direct", base: bytes | None = None) -> WriteResult:
        """Write an edited memory back; an unchanged one is not touched at all. With
        ``base`` (the bytes the edit started from), refuse if the file changed meanwhile."""
        self.check_write(actor)
        slug = new_slug(memory.slug)
        data = write_checks.utf8(f"{self.name}/{slug}", nt.render(memory.note))

        def make(current: bytes | None) -> bytes:
            if base is not None and current != base:
                raise StoreError(f"{self.name}/{slug}: changed meanwhile; nothing was written")
            if current is not None and current != data:
                write_checks.check_rewritable(path, self.decode(slug, path, current).note)
            return data

        with self._lock():
            path = self._target(slug)
            first, wrote = self._rewrite(path, make, slug=slug)
            return WriteResult(slug=slug, path=path, created=first is None, changed=wrote)

    def update(
        self, slug: str, change: Callable[[Memory], nt.MemoryFile | None], *, actor: str = "direct"
    ) -> WriteResult:
        """Read the memory and write ``change(memory)`` back, both under the store lock, so a
        writer meanwhile is never overwritten and never makes this one fail: ``change`` sees
        the bytes as they are (it may run again on an editor's newer save); None changes nothing."""
        self.check_write(actor)
        with self._lock():
            path = self.resolve(slug)
            slug = self._slug_of(path)

            def make(current: bytes | None) -> bytes | None:
                if current is None:
                    raise self._not_found(slug)
                memory = self.decode(slug, path, current)
                note = change(memory)
                if note is None:
                    return None
                write_checks.check_rewritable(path, memory.note)
                return write_checks.utf8(f"{self.name}/{slug}", nt.render(note))

            _, wrote = self._rewrite(path, make, slug=slug)
            return WriteResult(slug=slug, path=path, created=False, changed=wrote)

    def edit_index(self, change: Callable[[ix.Index], ix.Index], *, actor: str = "direct") -> bool:
        """Apply ``change`` to MEMORY.md under the store lock (policy checked); True if it
        changed anything. ``change`` may run more than once if an editor saves meanwhile."""
        self.check_write(actor)
        with self._lock():
            return self._update_index(change)[0]

    def check_write(self, actor: str = "direct") -> None:
        """Refuse a write the store's policy does not allow (PolicyRefused)."""
        policy.check_write(self.write_policy, actor, store=self.name, where=str(self.root))

    def write_file(
        self, slug: str, data: bytes, *, index_line: str | None = None, actor: str = "direct"
    ) -> WriteResult:
        """Put a whole memory file in place as given (imports keep every byte), and its
        index line. Refuses to overwrite a different existing memory."""
        from kura.text.secrets import refuse_secrets  # here: a reader loads no patterns

        self.check_write(actor)
        slug = new_slug(slug)
        refuse_secrets(f"{self.name}/{slug}", data.decode("utf-8", errors="replace"), index_line or "")
        with self._lock():
            path = self._target(slug)
            self._check_index(adding=slug)

            def make(current: bytes | None) -> bytes | None:
                if current is not None and current != data:
                    raise StoreError(
                        f"{self.name}/{slug}: a different memory with this slug "
                        "exists; nothing was changed — rename one of them"
                    )
                return data

            first, wrote = self._rewrite(path, make, slug=slug)
            created = first is None
            note = self._read(slug, path).note

            def change(index: ix.Index) -> ix.Index:
                if (not created and slug in index.named()) or retired(note.meta):
                    return index  # a person may have edited the line since; a retired memory has none
                return ix.upsert(
                    index,
                    slug,
                    index_line
                    or ix.own_line(index, slug, name=note.name, description=note.description, title=None),
                )

            index_changed, restored = self._update_index(change)
            return WriteResult(slug=slug, path=path, created=created, changed=wrote,
                               index_changed=index_changed, restored=restored)  # fmt: skip

    # -- internals -----------------------------------------------------------------------

    def _remember_locked(
        self,
        slug: str,
        description: str,
        body: str | None,
        type: str | None,
        title: str | None,
        amend: Callable[[nt.MemoryFile], nt.MemoryFile] | None,
    ) -> WriteResult:
        path = self._target(slug)
        self._check_index(adding=slug)  # refuse before the memory is written, not after
        made: list[tuple[nt.MemoryFile, bool, nt.MemoryFile | None]] = []

        def make(old_bytes: bytes | None) -> bytes | None:
            old = None if old_bytes is None else self.decode(slug, path, old_bytes).note
            if old is not None:
                write_checks.check_rewritable(path, old)
                not_superseded(old, f"{self.name}/{slug}", path.name)
            note = remembered(old, slug, description, body, type=type, title=title, amend=current(amend))
            made.append((note, body_kept(old, description, body), old))
            return None if note is old else nt.render(note).encode("utf-8")

        first, changed = self._rewrite(path, make, slug=slug)
        note, kept, was = made[-1]
        try:
            index_changed, restored = self._update_index(
                partial(own_line, slug=slug, note=note, title=title, was=was)
            )
        except StoreError as err:
            if not changed:
                raise
            if first is None and self._wrote.pop(path, None) == identity(path):
                path.unlink(missing_ok=True)  # the file this refused write made: nothing is left
                raise StoreError(f"{self.name}/{slug}: nothing was written: {err}") from err
            done = "created" if first is None else "updated"
            raise StoreError(
                f"{self.name}/{slug}: {path.name} was {done}, index line refused: {err}"
            ) from err
        revived = str(was.meta.get("archived") or "?") if was is not None and was.meta.get("archived") else ""
        return WriteResult(slug=slug, path=path, created=first is None, changed=changed, body_kept=kept,
                           index_changed=index_changed, restored=restored, revived=revived)  # fmt: skip

    def _current(self, slug: str) -> bool:  # a memory file, neither archived nor superseded: it has a line
        return self.contains(f"{slug}.md") and not retired(
            self._read(slug, self.root / f"{slug}.md").note.meta
        )

    def _settled(self, path: Path) -> bytes | None:
        cap = INDEX_CAP if path == self.index_path else MEMORY_CAP
        return settled_bytes(path, ours=self._wrote.get(path), cap=cap)

    def _rewrite(self, path: Path, make: rw.Make, *, slug: str) -> tuple[bytes | None, bool]:
        return rw.rewrite_memory(
            path, make, where=f"{self.name}/{slug}", read=self._settled, wrote=self._note_write
        )

    def _note_write(self, path: Path) -> None:
        self._wrote[path] = identity(path)

    def _update_index(self, change: Callable[[ix.Index], ix.Index]) -> tuple[bool, tuple[str, ...]]:
        """Apply ``change`` to the index (``rewrite``: an editor's save meanwhile is kept and
        ``change`` applied on top of it) — never reading a half-saved file as the whole of
        it, nor writing over an index that lost lines kura did not remove."""
        if self.index_path.is_symlink():
            raise StoreError(
                f"{INDEX_NAME} of store '{self.name}' is a symlink; kura does not write through links — "
                "replace it with the file itself"
            )
        record = self._record()
        wrote, kept, restored = rw.update_index(
            self.index_path,
            change,
            record,
            read=self._settled,
            wrote=self._note_write,
            cache=self._index_cache,
        )
        if kept is not None:
            self._index_cache = kept
            rw.save_record(self.state_dir, kept[1])
        return wrote, restored

    def _check_index(self, *, adding: str) -> None:
        """Refuse a write up front when the index has lost lines, so that nothing is half
        done: no memory written without its line."""
        if self.index_path.is_symlink():
            return  # _update_index says so
        record = self._record()
        before = rw.index_settled(self.index_path, record, self._settled)
        current = ix.parse_bytes(before or b"")
        record.losses(before, current, (*current.named(), adding))

    def _record(self) -> rw.IndexRecord:
        return rw.IndexRecord(
            self.index_path,
            rw.load_record(self.state_dir),
            exists=self._current,
            every=lambda: (slug for slug, _ in self._walk()),
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
        if (twin := slugs.lookalike(self.root, parts)) is not None:
            raise slugs.twin_refused(f"{self.name}/{slug}", twin)
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
            if kind in ("unreadable", "special") or not is_memory_name(rel):
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
        the store or point at non-memories, FIFOs, devices and sockets named like memories,
        folders it could not read, and names no look-up reaches (``slugs.unreachable_name``)."""
        for rel, kind in self._entries():
            where = f"{self.name}/{rel}"
            if kind == "unreadable":
                yield nt.Finding(f"{where}/", 1, _UNREADABLE)
            elif kind == "special" and is_memory_name(rel):
                yield nt.Finding(where, 1, f"{kind_at(self.root / rel)}, not a regular file; {_SPECIAL}")
            elif kind == "link" and is_memory_name(rel) and not self._contained(self.root / rel):
                yield nt.Finding(where, 1, f"{_OUTSIDE}; ignored — replace it with the file itself")
            elif kind != "unreadable" and slugs.unreachable_name(rel):
                yield nt.Finding(f"{self.name}/{rel!r}", 1, slugs.UNREACHABLE_TODO)

    def _slug_of(self, path: Path) -> str:
        return path.relative_to(self.root).with_suffix("").as_posix()

    def contains(self, rel: str) -> bool:
        """Whether a path relative to the store is one of its memories (links resolved)."""
        return is_memory_name(rel) and self._contained(self.root / rel) is not None

    def files(self) -> Iterator[tuple[str, str]]:
        """(slug, path relative to the store) of every memory, unsorted — the walk."""
        return self._walk()

    def _read(self, slug: str, path: Path) -> Memory:
        return self.read(slug, path)[1]

    def read(self, slug: str, path: Path | None = None) -> tuple[bytes, Memory]:
        """A memory's bytes as they are on disk and the memory they make (``path``: where the
        walk found it; else the slug is looked up). Only a regular file inside the store of
        at most ``MEMORY_CAP`` bytes is read, never through a link swapped in since it was
        checked (``kura.store.safe_read``); else the bytes are empty and a finding says why."""
        if path is None:
            path = self.resolve(slug)
            slug = self._slug_of(path)
        got: bytes | Refused | None = Refused(_OUTSIDE, "replace it with the file itself")
        if not path.is_symlink() or self._contained(path) is not None:
            got = read_in(
                self.root, path.relative_to(self.root).as_posix(), cap=MEMORY_CAP, accept=is_memory_name
            )
        if isinstance(got, bytes):
            return got, self.decode(slug, path, got)
        got = got or Refused("removed while kura read the store", "run the command again")
        finding = nt.Finding(f"{self.name}/{slug}.md", 1, f"{got.what}; not read — {got.todo}")
        return b"", Memory(slug, path, nt.MemoryFile(meta={}, body="", findings=(finding,)))

    def decode(self, slug: str, path: Path, data: bytes) -> Memory:
        """A memory from the bytes of its file (for callers that already read them)."""
        return Memory(slug, path, nt.from_bytes(data, f"{self.name}/{slug}.md"))

    def _not_found(self, slug: str) -> NotFound:
        return NotFound(
            f"no memory {slug!r} in store '{self.name}' ({self.root}); `kura list` shows what there is"
        )


_OUTSIDE = "symlink points outside the store (or at something that is not a memory)"
_UNREADABLE = "folder cannot be read; its memories are missing — fix its permissions"
_SPECIAL = f"not read — {SPECIAL_TODO}"


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
