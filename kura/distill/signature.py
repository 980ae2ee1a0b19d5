"""The distiller's mark: an HMAC that tells a draft the distiller wrote from one a person
(or another program) edited afterwards.

The key is 32 random bytes in the store's state folder (``.kura/distill.key``), made once
per store with mode 0600 and never printed: anyone who can read it can forge a mark, so it
is exactly as private as the store's own state. It is built aside and hard-linked into
place, so two processes racing to create it end up sharing whichever key landed first, and
nobody ever reads a half-written key. Deleting it is the way to revoke every staged draft
at once (they then read as tampered).

The state folder may come from someone else's clone, key and drafts together, and a key
its author knows would let their drafts pass for the distiller's. Git checks files out
readable by everyone; kura makes its key readable by its owner only. So a key others may
read (where the file system keeps modes at all) is not this store's key, nor is anything
but a plain file of exactly 32 bytes: it is set aside as ``distill.key.damaged``, a new key
is made, and stderr says that staged drafts now read as tampered.

The signed payload is canonical JSON (sorted keys, UTF-8), so the mark does not depend on
how a draft file happens to be laid out — only on what it says.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from functools import cache
from pathlib import Path
from typing import Any

from kura.errors import StoreError
from kura.store import state as st

KEY_NAME = "distill.key"
KEY_BYTES = 32


def sign(state_dir: Path, fields: dict[str, Any]) -> str:
    """The hex HMAC-SHA256 of ``fields`` under the store's key (created on first use)."""
    payload = json.dumps(fields, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hmac.new(key(state_dir), payload, hashlib.sha256).hexdigest()


def matches(state_dir: Path, fields: dict[str, Any], mark: str) -> bool:
    """Whether ``mark`` is the distiller's mark for ``fields`` (constant-time)."""
    return hmac.compare_digest(mark.encode("ascii", "replace"), sign(state_dir, fields).encode("ascii"))


def key(state_dir: Path) -> bytes:
    """The store's distiller key, made on first use (and made anew, said on stderr, when
    what is there is not a key this store made)."""
    path = state_dir / KEY_NAME
    for _ in range(3):
        data, problem = _read(path)
        if data is not None:
            return data
        if problem:
            try:
                os.replace(path, path.with_name(KEY_NAME + st.ASIDE))
            except OSError as err:
                raise StoreError(
                    f"{path}: {problem}, and it cannot be moved aside ({err.strerror})"
                ) from None
            then = f"set it aside as {path.name}{st.ASIDE} and made a new key; "
            st.damaged(path, problem, then + "drafts staged before read as tampered", derived=False)
        _create(path)
    raise StoreError(f"{path}: could not create the distiller key")  # pragma: no cover


def _read(path: Path) -> tuple[bytes | None, str]:
    """(the key, "") — or (None, what is wrong with what is there; "" when nothing is)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None, ""
    except OSError as err:
        return None, f"cannot be opened as a plain file ({err.strerror})"
    try:
        info = os.fstat(fd)
        data = os.read(fd, KEY_BYTES + 1) if stat.S_ISREG(info.st_mode) else b""
    finally:
        os.close(fd)
    if not stat.S_ISREG(info.st_mode) or len(data) != KEY_BYTES:
        return None, f"is not a {KEY_BYTES}-byte key"
    if info.st_mode & 0o077 and _modes_kept(str(path.parent)):
        return (
            None,
            f"can be read by others (mode {stat.S_IMODE(info.st_mode):o}), so kura did not make it here",
        )
    return data, ""


@cache
def _modes_kept(folder: str) -> bool:
    """Whether this folder's file system keeps a file's mode (a FAT or SMB mount does not,
    and there a readable key proves nothing)."""
    probe = os.path.join(folder, f".mode-probe.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        try:
            return not os.stat(probe).st_mode & 0o077
        finally:
            os.unlink(probe)
    except OSError:
        return True


def _create(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as err:
        raise StoreError(f"{path}: cannot create the distiller key ({err.strerror})") from None
    try:
        os.write(fd, secrets.token_bytes(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink()
