"""The distiller's mark: an HMAC that tells a draft the distiller wrote from one a person
(or another program) edited afterwards.

The key is 32 random bytes, made once per user and store with mode 0600 and never printed:
anyone who can read it can forge a mark. It lives in the user's state folder
(``$KURA_HOME/keys/``, else ``$XDG_STATE_HOME/kura/keys/``, else ``~/.local/state/kura/keys/``),
named by a hash of the store's real path — never in the store folder, because everything
there can arrive with a clone: a key committed by a remote checks out as 0600 under
``umask 077``, and a key its author knows would let their drafts pass for the distiller's
and pour. It is built aside and hard-linked into place, so two processes racing to create
it share whichever key landed first, and nobody reads a half-written key. Deleting it is
the way to revoke every staged draft of that store at once (they then read as tampered);
moving the store's folder does the same. A key file others may read (where the file system
keeps modes), or anything but a plain file of exactly 32 bytes, is set aside as
``KEY.damaged`` and a new key is made; stderr says so.

Migration: kura once kept the key in ``.kura/distill.key``. When the user's key for a store
does not exist yet, that old key is adopted (and removed from the store folder) only if it
passes the checks above and git has never carried it — not in the index, not in any commit
of any ref. A key a remote committed is never adopted, even after ``kura sync`` untracked it;
it is left where it is, ignored, and stderr says so once.

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
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from kura.errors import GitError, StoreError
from kura.git.run import READ_SECONDS
from kura.git.run import run as run_git
from kura.store import state as st

KEY_NAME = "distill.key"  # the old place, in the store's state folder: only ever migrated from
KEY_BYTES = 32


def sign(state_dir: Path, fields: dict[str, Any]) -> str:
    """The hex HMAC-SHA256 of ``fields`` under the store's key (created on first use)."""
    payload = json.dumps(fields, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hmac.new(key(state_dir), payload, hashlib.sha256).hexdigest()


def matches(state_dir: Path, fields: dict[str, Any], mark: str) -> bool:
    """Whether ``mark`` is the distiller's mark for ``fields`` (constant-time)."""
    return hmac.compare_digest(mark.encode("ascii", "replace"), sign(state_dir, fields).encode("ascii"))


def key_path(state_dir: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where this user keeps the distiller key of the store whose state folder is ``state_dir``."""
    env = os.environ if env is None else env
    if env.get("KURA_HOME"):
        base = Path(env["KURA_HOME"]).expanduser()
    elif env.get("XDG_STATE_HOME"):
        base = Path(env["XDG_STATE_HOME"]).expanduser() / "kura"
    else:
        base = Path.home() / ".local" / "state" / "kura"
    root = os.path.realpath(state_dir.parent)
    return base / "keys" / (hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".key")


def key(state_dir: Path) -> bytes:
    """The store's distiller key, made on first use (and made anew, said on stderr, when
    what is there is not a key this user made)."""
    path = key_path(state_dir)
    for _ in range(3):
        data, problem = _read(path)
        if data is not None:
            return data
        if problem:
            try:
                os.replace(path, path.with_name(path.name + st.ASIDE))
            except OSError as err:
                raise StoreError(
                    f"{path}: {problem}, and it cannot be moved aside ({err.strerror})"
                ) from None
            then = f"set it aside as {path.name}{st.ASIDE} and made a new key; "
            st.damaged(path, problem, then + "drafts staged before read as tampered", derived=False)
        old = state_dir / KEY_NAME
        adopted = _adopted(old)
        _create(path, adopted)
        if adopted is not None and _read(path)[0] == adopted:  # the store folder keeps no copy
            with contextlib.suppress(OSError):
                old.unlink()
    raise StoreError(f"{path}: could not create the distiller key")  # pragma: no cover


def _adopted(old: Path) -> bytes | None:
    """The key kura kept in the store folder before, if it may become the user's key: a
    private 32-byte file git never carried. None (said once on stderr) for any other."""
    data, _ = _read(old)
    if data is None:
        return None
    carried = _carried_by_git(old)
    if carried:
        st.notice(
            f"{old}: {carried}, so it is not this store's distiller key; kura made a new key in "
            "your state folder — drafts it signed read as tampered; delete the file"
        )
        return None
    return data


def _carried_by_git(path: Path) -> str:
    """Why git may have brought ``path`` ("" when it cannot have): it is in the index or
    in any commit, or git cannot say inside what looks like a repository."""
    try:
        inside = run_git(path.parent, "rev-parse", "--is-inside-work-tree", check=False, timeout=READ_SECONDS)
        if not inside.ok:
            return ""  # not in a repository: nothing git could carry
        name = path.name
        if run_git(path.parent, "ls-files", "--", name, check=False, timeout=READ_SECONDS).text:
            return "git tracks it"
        if run_git(
            path.parent, "log", "--all", "-n1", "--format=%H", "--", name, check=False, timeout=READ_SECONDS
        ).text:
            return "a commit holds it"
        return ""
    except GitError:
        folder = path.resolve().parent
        if any((p / ".git").exists() for p in (folder, *folder.parents)):
            return "it lies in a git repository and git could not be run to tell"
        return ""


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


def _create(path: Path, data: bytes | None = None) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.parent / f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as err:
        raise StoreError(f"{path}: cannot create the distiller key ({err.strerror})") from None
    try:
        os.write(fd, data if data is not None else secrets.token_bytes(KEY_BYTES))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink()
