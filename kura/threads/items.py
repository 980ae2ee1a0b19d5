"""A thread's keyed items: one markdown file each, in the thread's folder of its store.

Talon keeps an agent's structured memory (facts, summaries, observations, notes, each under
a key) in a table only the agent can see. Here each item is a file a person can open::

    threads/support-4711/work/current-project.md
    ---
    key: work:current-project
    namespace: fact
    updated: '2026-12-01T21:04:05Z'
    ---
    Building A2A protocol for Talon

so the thread's notebook and its items are one folder: any markdown a person saves there is
an item too (its key from its name, namespace ``note`` when it says none), and a hand edit
is exactly what the next read returns — kura keeps no copy to disagree with. The file's
name decides its key (``kura.threads.names``); the ``key`` line is for the person reading.

Writes go through the same machinery as memories: under the store's lock, atomic, over a
person's editor's save without losing it (``kura.store.rewrite``), unchanged bytes left
alone, secrets refused (``kura.text.secrets``), and no write through a symlinked folder. A
``frozen`` store refuses them; ``distiller-only`` does not (it guards memories, as for the
observation log). Reads open one folder at a time without following links
(``kura.store.safe_read``), so nothing outside the thread's folder is ever read. A delete
keeps the file's last bytes in ``.kura/threads/<id>/deleted/`` first: nothing a person
wrote is lost to an agent's call.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from kura.errors import InvalidRequest, NotFound, PolicyRefused, StoreError
from kura.files import memory_file as nt
from kura.store import rewrite as rw
from kura.store import write_checks
from kura.store.atomic import locked, settled_bytes, write_atomic
from kura.store.safe_read import MEMORY_CAP, Refused, read_in
from kura.store.state import folder as state_folder
from kura.store.store import Store
from kura.text.secrets import refuse_secrets
from kura.threads.names import file_of, folder_of, key_of, lookup_key, new_key, thread_id


class Unsafe(StoreError, PolicyRefused):
    """A thread folder, a folder on the way or an item that kura will not read or write
    through (a symlink, a FIFO, a file over the cap): the store's state, said with its reason
    — a 4xx at the edges, never a server error — and nothing read or written."""


Namespace = Literal["fact", "summary", "observation", "note"]
NAMESPACES: tuple[str, ...] = get_args(Namespace)
DEFAULT_NAMESPACE = "note"
MAX_ITEMS = 10_000  # files a listing reads at most: a folder that grows without end costs this much
MAX_UPDATES = 100  # keys one update call may write


@dataclass(frozen=True, slots=True)
class Item:
    """One keyed item as its file says now. ``path`` is relative to the store."""

    thread: str
    key: str
    namespace: str
    value: str
    updated: str
    path: str

    def to_dict(self) -> dict[str, Any]:
        return {"thread": self.thread, "key": self.key, "namespace": self.namespace,
                "value": self.value, "updated": self.updated, "path": self.path}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Written:
    """What a write did: ``created`` a file, ``changed`` its bytes (False: it said this already)."""

    item: Item
    created: bool
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.item.to_dict(), "created": self.created, "changed": self.changed}


@dataclass(frozen=True, slots=True)
class Thread:
    """The thread ``id`` of ``store``: its folder is ``threads/<id>/``. Every key given to a
    method is checked before any path is made from it."""

    store: Store
    id: str

    @classmethod
    def of(cls, store: Store, given: object) -> Thread:
        return cls(store, thread_id(given))

    @property
    def rel(self) -> str:
        return folder_of(self.id)

    @property
    def root(self) -> Path:
        return self.store.root / self.rel

    # -- reading ---------------------------------------------------------------------------

    def read(self, key: str) -> Item:
        """The item ``key`` names, as its file says now; NotFound when there is none."""
        parts = lookup_key(key)
        if parts is None:
            raise self._no_item(key)
        item = self._read(file_of(parts))
        if item is None:
            raise self._no_item(key)
        return item

    def list(self, namespace: str | None = None) -> tuple[Item, ...]:
        """Every item (or those of one namespace), sorted by key."""
        if namespace is not None:
            _namespace(namespace)
        found = (self._read(rel, listing=True) for rel in self._files())
        return tuple(
            sorted((i for i in found if i and namespace in (None, i.namespace)), key=lambda i: i.key)
        )

    def exists(self) -> bool:
        return self.root.is_dir() and not self.root.is_symlink()

    def reachable(self) -> bool:
        """Whether the thread's folder exists and every folder down to it is a real one (no link)."""
        return self.exists() and self._plain_folders(self.root)

    def _read(self, rel: str, *, listing: bool = False) -> Item | None:
        """The item in file ``rel``; a file that must not be read (a link out of the thread, a
        FIFO, too big) is a StoreError saying why — or, in a listing, left out."""
        key = key_of(rel)
        if key is None:
            return None
        got = read_in(self.store.root, f"{self.rel}/{rel}", cap=MEMORY_CAP, accept=self._inside)
        if got is None or (listing and isinstance(got, Refused)):
            return None
        if isinstance(got, Refused):
            what = "a symlink out of this thread" if got.what.startswith("a symlink") else got.what
            raise Unsafe(f"{self._where(key)}: {what}; not read — {got.todo}")
        return self._item(key, rel, got)

    def _item(self, key: str, rel: str, data: bytes) -> Item:
        note = nt.from_bytes(data, self._where(key))
        given = str(note.meta.get("namespace") or "").strip()
        updated = note.meta.get("updated")
        if not updated:
            try:
                updated = _stamp(os.stat(self.root / rel).st_mtime)
            except OSError:
                updated = ""
        return Item(self.id, key, given if given in NAMESPACES else DEFAULT_NAMESPACE,
                    note.body.strip("\n"), str(updated), f"{self.rel}/{rel}")  # fmt: skip

    def _inside(self, target: str) -> bool:
        """Whether a symlink's target (relative to the store) is an item of this thread."""
        prefix = self.rel + "/"
        return target.startswith(prefix) and key_of(target[len(prefix) :]) is not None

    def _files(self) -> Iterator[str]:
        """Paths of the thread's markdown files, relative to its folder: never through a
        symlinked folder, never into ``.``/``_`` names, at most ``MAX_ITEMS``."""
        if not self._plain_folders(self.root):
            return
        stack, seen = [""], 0
        while stack and seen < MAX_ITEMS:
            prefix = stack.pop()
            try:
                entries = list(os.scandir(self.root / prefix if prefix else self.root))
            except OSError:
                continue
            for entry in entries:
                if entry.name[:1] in "._":
                    continue
                rel = f"{prefix}/{entry.name}" if prefix else entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                elif entry.name.endswith(".md"):
                    seen += 1
                    yield rel

    def _plain_folders(self, path: Path) -> bool:
        """Whether every folder from the store down to ``path`` is a real folder, not a link."""
        here = self.store.root
        for part in path.relative_to(self.store.root).parts:
            here = here / part
            try:
                if not stat.S_ISDIR(os.lstat(here).st_mode):
                    return False
            except OSError:
                return False
        return True

    # -- writing -----------------------------------------------------------------------------

    def write(self, key: str, value: str, namespace: str | None = None) -> Written:
        """Create or replace the item ``key`` with ``value`` (``namespace``: None keeps the
        item's, ``note`` for a new one). Unknown frontmatter lines a person added are kept;
        an item that already says this is not touched."""
        key = new_key(key)
        where = self._where(key)
        if namespace is not None:
            _namespace(namespace)
        if not isinstance(value, str):
            raise InvalidRequest(f"{where}: the value must be text")
        refuse_secrets(f"thread '{self.id}' of store '{self.store.name}', the key", key)
        refuse_secrets(where, value)
        write_checks.utf8(where, value)
        write_checks.check_text(where, title="", description="", body=value)
        self._check_write()
        rel = file_of(key.split(":"))
        with locked(self.store.state_dir / "lock"):
            path = self._target(rel, where)
            first, changed = rw.rewrite_memory(
                path, lambda old: _made(old, key, value, namespace, where), where=where,
                read=_settled, wrote=_nothing,
            )  # fmt: skip
            item = self._read(rel)
        assert item is not None
        return Written(item, first is None, changed)

    def update(self, updates: Mapping[str, object], namespace: str = "fact") -> tuple[Written, ...]:
        """``memoryUpdates``: each key of the map written with its value, in one call. Every
        key and value is checked before the first is written, so a bad one writes none."""
        if not isinstance(updates, Mapping) or not updates:
            raise InvalidRequest(
                'the updates must be a map of key to value, e.g. {"work:current-project": "…"}'
            )
        if len(updates) > MAX_UPDATES:
            raise InvalidRequest(f"{len(updates)} updates in one call; at most {MAX_UPDATES}")
        _namespace(namespace)
        checked: dict[str, str] = {}
        for given, value in updates.items():
            key = new_key(given)
            if not isinstance(value, str):
                raise InvalidRequest(
                    f"{self._where(key)}: the value must be text, got {type(value).__name__}"
                )
            refuse_secrets(f"thread '{self.id}' of store '{self.store.name}', the key", key)
            refuse_secrets(self._where(key), value)
            write_checks.check_text(self._where(key), title="", description="", body=value)
            checked[key] = value
        return tuple(self.write(key, value, namespace) for key, value in checked.items())

    def delete(self, key: str) -> Path:
        """Remove the item ``key`` after keeping its bytes in the state folder (returned);
        NotFound when there is none."""
        parts = lookup_key(key)
        if parts is None:
            raise self._no_item(key)
        rel = file_of(parts)
        self._check_write()
        with locked(self.store.state_dir / "lock"):
            path = self.root / rel
            if not self._plain_folders(path.parent) or path.is_symlink():
                raise Unsafe(f"{self._where(key)}: {_LINKED}; nothing was deleted — {_REPLACE}")
            item = self._read(rel)
            data = _settled(path) if item is not None else None
            if data is None:
                raise self._no_item(key)
            kept = state_folder(
                self.store.root, "threads", self.id, "deleted", store=self.store.name, create=True
            )
            copy = _kept_copy(kept, rel)
            write_atomic(copy, data)
            os.unlink(path)
        return copy

    def _check_write(self) -> None:
        if self.store.write_policy == "frozen":
            self.store.check_write()

    def make_folder(self) -> Path:
        """The thread's folder, made as a real folder (StoreError when a link is on the way)."""
        self._folders(self.root, f"{self.store.name}/{self.rel}")
        return self.root

    def _target(self, rel: str, where: str) -> Path:
        """Where an item's file goes: folders made as needed, none of them a link."""
        path = self.root / rel
        self._folders(path.parent, where)
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise Unsafe(
                f"{where}: {path.name} is not a plain file (a symlink?); kura does not write through links"
            )
        return path

    def _folders(self, folder: Path, where: str) -> None:
        if not self.store.root.is_dir():
            raise StoreError(f"store '{self.store.name}': {self.store.root} is not a directory")
        here = self.store.root
        for part in folder.relative_to(self.store.root).parts:
            here = here / part
            try:
                here.mkdir(exist_ok=True)
                plain = stat.S_ISDIR(os.lstat(here).st_mode)
            except OSError as err:
                raise StoreError(f"{where}: cannot be written here ({err.strerror})") from None
            if not plain:
                raise Unsafe(f"{where}: {here.name} on the way is not a folder; {_LINKED} — {_REPLACE}")

    def _where(self, key: str) -> str:
        return f"{self.store.name}/{self.rel} key {key!r}"

    def _no_item(self, key: object) -> NotFound:
        shown = repr(key) if len(repr(key)) <= 80 else repr(key)[:79] + "…'"
        return NotFound(
            f"thread '{self.id}' of store '{self.store.name}' has no item {shown}; "
            "listing the thread shows its keys"
        )


def _made(old: bytes | None, key: str, value: str, namespace: str | None, where: str) -> bytes | None:
    """The item's new bytes from its old ones (None: they say this already)."""
    body = value.strip("\n") + "\n"
    if old is None:
        meta = {"key": key, "namespace": namespace or DEFAULT_NAMESPACE, "updated": _stamp(time.time())}
        return nt.render(nt.new_note(meta, body)).encode("utf-8")
    note = nt.from_bytes(old, where)
    said = str(note.meta.get("namespace") or "")
    kept = said if said in NAMESPACES else DEFAULT_NAMESPACE
    wanted = namespace or kept
    if note.has_frontmatter and note.body.strip("\n") == value.strip("\n") and said == wanted:
        return None
    meta = {**note.meta, "key": key, "namespace": wanted, "updated": _stamp(time.time())}
    return nt.render(dataclasses.replace(note, meta=meta, body=body)).encode("utf-8")


_LINKED = "a symlink (or no folder) on the way, and kura does not read or write through links"
_REPLACE = "replace the link with a real folder or file"


def _kept_copy(folder: Path, rel: str) -> Path:
    """A name no other kept copy has: the time to the microsecond, then the item's path
    with ``%`` and ``~`` escaped before ``/`` becomes ``~`` (so keys ``a~b`` and ``a:b``
    differ), and a number when two deletes still meet (under the store's lock)."""
    now = datetime.now(UTC)
    name = rel.replace("%", "%25").replace("~", "%7E").replace("/", "~")
    stamp = f"{now.strftime('%Y%m%dT%H%M%S')}.{now.microsecond:06d}"
    copy, n = folder / f"{stamp}-{name}", 2
    while os.path.lexists(copy):
        copy, n = folder / f"{stamp}-{n}-{name}", n + 1
    return copy


def _namespace(namespace: object) -> str:
    if namespace not in NAMESPACES:
        raise InvalidRequest(f"namespace {namespace!r} is not one of {', '.join(NAMESPACES)}")
    return str(namespace)


def _settled(path: Path) -> bytes | None:
    return settled_bytes(path, cap=MEMORY_CAP)


def _nothing(path: Path) -> None:
    return None


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
