"""The state folder (``.kura/``): where derived state lives, and how it is read.

A store is often a folder inside someone's repository, and ``.gitignore`` is only a
convention: ``.kura/`` can arrive with a clone, holding whatever its author put there. So
everything in it is untrusted input, and every module reaches it through this one:

* **One place decides where state lives.** ``folder`` returns ``STORE/.kura`` (or a folder
  below it) only when it is a real folder inside the store. A ``.kura`` that is a symlink
  — to anywhere, even inside the store — or not a folder is refused with a StoreError that
  names the store and what to do. Nothing is read or written through such a link, so kura
  never writes state outside the store.
* **Reads never follow, block or swallow.** A state file is opened without following a
  link and without blocking, the opened descriptor must be a regular file, and at most a
  cap of bytes is read: a FIFO, a device or a link to ``/dev/zero`` is only "not a file".
* **Damage is rebuilt, and said.** State is a cache of the markdown. A file that is not
  what kura writes is ignored (JSON, text) or set aside (SQLite) and rebuilt, and one line
  on stderr (``notice``) says which file and what kura did instead, once per process.
* **Formats carry data, never code:** JSON, text and SQLite (``trusted_schema`` off, the
  tables' shape checked on open). Nothing here unpickles or evaluates anything.

This module is on the shell-hook path (``kura prefill``), so SQLite is imported only by
the function that opens a database.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import StoreError
from kura.files.slugs import STATE_DIR

if TYPE_CHECKING:
    import sqlite3

MAX_BYTES = 64 << 20  # no state file kura writes comes near this; a bigger one is not read
ASIDE = ".damaged"  # suffix of a database set aside because it was not one
_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
)
_KINDS = {stat.S_IFLNK: "a symlink", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a device",
          stat.S_IFBLK: "a device", stat.S_IFDIR: "a folder", stat.S_IFSOCK: "a socket"}  # fmt: skip
_SQLITE_DAMAGE = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB: what a set-aside and rebuild cures
_said: set[str] = set()
_said_lock = threading.Lock()


def folder(root: Path, *parts: str, store: str = "", create: bool = False) -> Path:
    """``root/.kura`` (or ``root/.kura/PART/…``), refusing any of them that is a symlink or
    not a folder; made (as real folders) when ``create``. StoreError names what to do."""
    path = root / STATE_DIR
    _real_folder(path, root, store, create=create)
    for part in parts:
        path = path / part
        _real_folder(path, root, store, create=create)
    return path


def file_in(root: Path, name: str, *, store: str = "") -> Path:
    """``root/.kura/NAME``, the state folder made when it can be. On a read-only checkout it
    cannot: the path is returned all the same, and opening it fails as in any folder kura may
    not write, so the caller keeps that state in memory (as ``kura.store.catalog.connect``
    does). A ``.kura`` that is a link or not a folder is refused (StoreError)."""
    try:
        folder(root, store=store, create=True)
    except StoreError:
        folder(root, store=store)  # a link or a file is refused; else it only could not be made
    return root / STATE_DIR / name


def _real_folder(path: Path, root: Path, store: str, *, create: bool) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        if create:
            try:
                path.mkdir()
            except FileExistsError:  # made meanwhile by another process: look again
                _real_folder(path, root, store, create=False)
            except OSError as err:
                raise StoreError(f"{path}: cannot create the state folder ({err.strerror})") from None
        return
    except OSError as err:
        raise StoreError(f"{path}: cannot read the state folder ({err.strerror})") from None
    if stat.S_ISDIR(mode):
        return
    name = path.relative_to(root).as_posix()
    where = f"`{name}` in store '{store or root.name}' ({path})"
    why = "kura keeps its derived state only in a real folder inside the store"
    if stat.S_ISLNK(mode):
        raise StoreError(
            f"{where} is a symlink to {_target(path)}; {why} — remove the link (rm {path}) and kura "
            "rebuilds it"
        )
    kind = _KINDS.get(stat.S_IFMT(mode), "a file")
    raise StoreError(
        f"{where} is {kind}, not a folder; {why} — move it away (mv {path} {path}.old) and kura rebuilds it"
    )


def _target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "somewhere"


def notice(message: str) -> None:
    """Say once per process, on one line of stderr, what kura did about damaged state."""
    line = " ".join(message.split())
    with _said_lock:
        if line in _said:
            return
        _said.add(line)
    try:
        sys.stderr.write(f"kura: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # no stderr (a closed pipe, a daemon): nothing to tell
        pass


def read_bytes(path: Path, *, then: str, cap: int = MAX_BYTES, derived: bool = True) -> bytes | None:
    """The bytes of a state file, or None: silently when there is none, with a ``notice``
    (``then``: what kura does instead) when what is there is not a regular file of at most
    ``cap`` bytes. Never follows a link, never blocks, never raises."""
    data, problem = plain(path, cap=cap)
    if problem:
        damaged(path, problem, then, derived=derived)
    return data


def plain(path: Path, *, cap: int = MAX_BYTES) -> tuple[bytes | None, str]:
    """(bytes, "") of a regular file of at most ``cap`` bytes, opened without following a
    link or blocking; (None, "") when there is none; (None, what is wrong) otherwise."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return None, ""
    except OSError as err:
        return None, _refusal(path, err)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"is {_KINDS.get(stat.S_IFMT(info.st_mode), 'not a file')}, not a file"
        chunks = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as err:
        return None, f"cannot be read ({err.strerror})"
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        return None, f"is over {cap >> 20} MiB, more than kura ever writes there"
    return data, ""


def _refusal(path: Path, err: OSError) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = 0
    if stat.S_ISLNK(mode):
        return f"is a symlink (to {_target(path)}), which kura does not follow"
    return f"cannot be opened ({err.strerror})"


def read_text(path: Path, *, then: str, cap: int = MAX_BYTES, derived: bool = True) -> str | None:
    """A state file kura wrote as UTF-8 text (``read_bytes``'s rules), else None."""
    data = read_bytes(path, then=then, cap=cap, derived=derived)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        damaged(path, f"is not UTF-8 text (byte {err.start})", then, derived=derived)
        return None


def read_json(
    path: Path, *, then: str, shape: type = dict, cap: int = MAX_BYTES, derived: bool = True
) -> Any:
    """A state file kura wrote as JSON, if it is JSON of ``shape`` (dict or list), else
    None (with a ``notice`` unless there was no file)."""
    text = read_text(path, then=then, cap=cap, derived=derived)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as err:
        damaged(path, f"is not valid JSON ({str(err).split(':')[0]})", then, derived=derived)
        return None
    if not isinstance(value, shape):
        wrong = f"holds JSON of the wrong shape (not {'an object' if shape is dict else 'a list'})"
        damaged(path, wrong, then, derived=derived)
        return None
    return value


def damaged(path: Path, problem: str, then: str, *, derived: bool = True) -> None:
    """Report a state file whose content a reader found wrong (``then``: what kura does
    instead), in one line on stderr (``notice``)."""
    notice(f"{path}: {problem}; {then}" + (" (it is derived state)" if derived else ""))


def clear(path: Path, *, then: str) -> None:
    """Remove a symlink, FIFO, socket or device at ``path`` (a state file's name) so kura
    can put a plain file there; a link's target is never touched. A regular file, a folder
    or nothing at all is left as it is."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    what = (
        f"is a symlink (to {_target(path)})" if stat.S_ISLNK(mode) else f"is {_KINDS.get(stat.S_IFMT(mode))}"
    )
    try:
        path.unlink()
    except OSError as err:
        raise StoreError(
            f"{path}: {what}, not a file, and cannot be removed ({err.strerror}); remove it"
        ) from None
    damaged(path, f"{what}, not a file", f"removed it, {then}")


def folder_aside(path: Path, *, then: str) -> None:
    """Move a folder at ``path`` (a state file's name: a clone can bring ``NAME/`` with a file in
    it) to ``NAME.damaged`` so kura can make the file, and say so (``then``: what kura does
    next). Nothing in it is deleted; anything but a folder is left as it is (see ``clear``)."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return
    except OSError:
        return
    target = path.with_name(path.name + ASIDE)
    if os.path.lexists(target):
        target = path.with_name(f"{path.name}{ASIDE}-{os.getpid()}")
    try:
        os.rename(path, target)
    except OSError as err:
        damaged(path, f"is a folder, not a file, and could not be moved aside ({err.strerror})", then)
        return
    damaged(path, "is a folder, not a file", f"moved it to {target.name}, {then}")


def database(
    path: Path,
    setup: Callable[[sqlite3.Connection], object],
    tables: Mapping[str, tuple[str, ...]],
    *,
    what: str,
    fts5: tuple[str, ...] = (),
    timeout: float = 30,
    check_same_thread: bool = True,
) -> sqlite3.Connection:
    """A derived SQLite database at ``path``, made ready by ``setup`` (its schema), whose
    tables are exactly ``tables`` (name → columns; ``fts5`` names the full-text ones) and
    nothing that runs on its own (no triggers, no views). Whatever is at the name, or beside
    it (``-wal``, ``-shm``, ``-journal``), that is not a plain file is removed first, so
    SQLite never opens through a link; a file that is not a database, or not this one, is
    set aside as ``NAME.damaged`` and made anew (``what`` names what is rebuilt). Raises
    sqlite3.Error or OSError when not even a new one can be made."""
    import sqlite3

    for attempt in (1, 2):
        for suffix in ("", "-wal", "-shm", "-journal"):
            clear(path.with_name(path.name + suffix), then=f"{what} is rebuilt")
        db = sqlite3.connect(path, timeout=timeout, check_same_thread=check_same_thread)
        try:
            db.execute("PRAGMA trusted_schema = OFF")
            db.execute("PRAGMA journal_mode = WAL")
            setup(db)
            wrong = _wrong_shape(db, tables, fts5)
            if wrong is None:
                return db
            problem = f"is not the database kura keeps there ({wrong})"
        except sqlite3.DatabaseError as err:
            if (getattr(err, "sqlite_errorcode", 0) & 0xFF) not in _SQLITE_DAMAGE or attempt == 2:
                db.close()  # busy, read-only, cannot open: not damage; the caller decides
                raise
            problem = f"is not a usable SQLite database ({err})"
        db.close()
        if attempt == 2:
            raise sqlite3.DatabaseError(f"{path}: {problem}")
        set_aside(path)
        damaged(path, problem, f"set it aside as {path.name}{ASIDE}; {what} is rebuilt")
    raise AssertionError("unreachable")  # pragma: no cover


def set_aside(path: Path) -> None:
    """Move a damaged database to ``NAME.damaged`` (replacing an older one), with its
    sidecar files removed, so the next open makes a new one."""
    os.replace(path, path.with_name(path.name + ASIDE))
    for suffix in ("-wal", "-shm", "-journal"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def _wrong_shape(
    db: sqlite3.Connection, tables: Mapping[str, tuple[str, ...]], fts5: tuple[str, ...]
) -> str | None:
    """What makes the database not kura's, or None."""
    kinds = dict(db.execute("SELECT name, type FROM sqlite_master WHERE type IN ('trigger', 'view')"))
    if kinds:
        name, kind = next(iter(kinds.items()))
        return f"it holds a {kind}, {name!r}"
    for name, columns in tables.items():
        found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({name})"))
        if found != columns:
            return f"table {name} has columns {', '.join(found) or 'none'}"
    for name in fts5:
        row = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
        if row is None or "fts5" not in str(row[0]).lower():
            return f"table {name} is not a full-text table"
    return None
