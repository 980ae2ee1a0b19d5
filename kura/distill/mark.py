"""The distiller's mark: an HMAC that tells a draft the distiller wrote from one a person
(or another program) edited afterwards.

The key is 32 random bytes in the store's state folder (``.kura/distill.key``), made once
per store with mode 0600 and never printed: anyone who can read it can forge a mark, so it
is exactly as private as the store's own state. It is built aside and hard-linked into
place, so two processes racing to create it end up sharing whichever key landed first, and
nobody ever reads a half-written key. Deleting it is the way to revoke every staged draft
at once (they then read as tampered).

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
from pathlib import Path
from typing import Any

from kura.errors import StoreError

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
    """The store's distiller key, made on first use."""
    path = state_dir / KEY_NAME
    for _ in range(3):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            _create(path)
            continue
        except OSError as err:
            raise StoreError(f"{path}: cannot read the distiller key ({err.strerror})") from None
        if len(data) != KEY_BYTES:
            raise StoreError(
                f"{path}: the distiller key is damaged; delete it — staged drafts will then "
                "read as tampered and must be distilled again"
            )
        return data
    raise StoreError(f"{path}: could not create the distiller key")  # pragma: no cover


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
