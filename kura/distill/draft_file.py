"""A draft file on disk: written whole or not at all, and told apart from what a stopped
writer left behind.

A distiller pass can be killed at any moment (a closed laptop, a scheduler's timeout,
``kill -9``). Staging a draft used to take its name with an empty file first and fill it
after, so a kill in between left a 0-byte draft that every later listing called
*tampered* — a word that means a person edited a signed draft, which nobody had. Now the
bytes are written and fsynced under a hidden temporary name and hard-linked into place:
``link`` creates the name with the whole file behind it, and fails rather than replace a
draft another process staged meanwhile. A kill leaves at most a hidden ``.tmp`` file.

Where hard links are not supported, the old way remains (take the name, then replace it
with the finished file), so an empty draft can still be left there; and drafts staged by
an older kura may be empty already. Such a file is *incomplete*, not tampered: it is
reported as what it is, and the next pass removes it (an empty file holds nothing) or
moves a cut-short one aside to ``incomplete/`` (its bytes are kept), then stages the
candidate again, because a killed pass never committed the stretch it was drafting from.
The hidden temporary files of a process that is gone are removed by the same sweep.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

from kura.errors import StoreError
from kura.files.finding import Finding
from kura.store import state as st
from kura.store.atomic import fsync_dir

HEAD = "<!-- kura draft"
INCOMPLETE_DIR = "incomplete"
MAX_BYTES = 1 << 20  # a draft is a few KB; anything bigger is not one
_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV, errno.EMLINK}
_AGAIN = "a `kura distill run` was stopped while writing it; the next run writes it again"


def place(folder: Path, stem: str, data: bytes) -> Path:
    """Put ``data`` under the first free name ``stem``, ``stem-2``…, whole; its path."""
    _inside(folder)
    tmp = folder / f".{stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        for n in range(1, 1000):
            path = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
            if _take(tmp, path):
                fsync_dir(folder)
                return path
    except OSError as err:
        raise StoreError(
            f"{folder}: could not stage the draft {stem!r} ({err.strerror or err}); nothing was "
            "staged and the stretch is read again — check the folder's permissions and free space"
        ) from err
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    raise StoreError(f"{folder}: 999 drafts are already staged for {stem!r}; pour or toss some first")


def _inside(folder: Path) -> None:
    """Refuse a drafts folder that is a symbolic link: staging through it, or clearing what
    looks left over in it, would write wherever it points, outside the store."""
    if folder.is_symlink():
        raise StoreError(
            f"{folder}: is a symbolic link; kura stages drafts only inside the store's own "
            "state folder — remove the link (the drafts folder is made again)"
        )


def _take(tmp: Path, path: Path) -> bool:
    """Give ``tmp``'s bytes the name ``path`` unless it is taken; False when it is."""
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError as err:
        if err.errno not in _NO_LINKS:
            raise
    try:  # no hard links here: take the name, then put the finished file over it
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        return False
    os.replace(tmp, path)
    return True


def incomplete(data: bytes) -> str:
    """``"empty"`` or ``"cut short"`` when ``data`` is what a stopped writer left (nothing,
    or the start of a draft whose comment never closed); "" for anything else."""
    if not data.strip():
        return "empty"
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    lines = text.split("\n")
    started = lines[0] == HEAD if len(lines) > 1 else HEAD.startswith(lines[0])
    return "cut short" if started and "-->" not in lines else ""


def problem(path: Path, why: str) -> str:
    """How a listing reports an incomplete draft."""
    return f"{path}:1: {why}: {_AGAIN}"


def sweep(folder: Path) -> list[Finding]:
    """Clear the incomplete drafts out of ``folder`` (see the module docstring), saying so."""
    found: list[Finding] = []
    if not folder.is_dir():
        return found
    _inside(folder)
    for tmp in folder.glob(".*.tmp"):
        if _orphaned(tmp.name):
            with contextlib.suppress(OSError):
                tmp.unlink()
    for path in sorted(folder.glob("*.md")):
        try:
            why = incomplete(read(path))
            if why == "empty":
                path.unlink()
                note = "empty draft left by a `kura distill run` that was stopped; removed"
            elif why:
                target = move(path, INCOMPLETE_DIR)
                note = f"cut-short draft left by a `kura distill run` that was stopped; moved to {target}"
            else:
                continue
        except (OSError, StoreError):
            continue  # another pass took it first, or it cannot be moved: it stays listed
        found.append(Finding(str(path), 1, f"{note}, its candidate is drafted again", "warning"))
    return found


def _orphaned(name: str) -> bool:
    """Whether a hidden ``.NAME.PID.HEX.tmp`` file belongs to a process that is gone."""
    parts = name.split(".")
    pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else 0
    if pid <= 0 or pid == os.getpid() or os.name == "nt":  # Windows' os.kill would end it
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, someone else's
    return False


def move(path: Path, where: str) -> Path:
    """Move a draft into the sub-folder ``where`` (poured, quarantine…) under a free name."""
    target = free_name(path.parent / where, path.name)
    os.replace(path, target)
    return target


def free_name(folder: Path, name: str) -> Path:
    """A name not yet taken in ``folder`` (STORE/.kura/drafts/NAME, made if need be and
    refused when any part of it is a link: nothing is moved outside the store)."""
    st.folder(folder.parents[2], folder.parent.name, folder.name, create=True)
    stem = name.removesuffix(".md")
    for n in range(1, 10_000):
        target = folder / (name if n == 1 else f"{stem}-{n}.md")
        if not target.exists():
            return target
    raise StoreError(f"{folder}: too many drafts with the name {name!r}; clear the folder")


def read(path: Path) -> bytes:
    """A draft's bytes: a regular file (never followed through a symlink, never a FIFO or a
    device, which could hang the reader) of at most ``MAX_BYTES``; OSError otherwise."""
    data, problem = st.plain(path, cap=MAX_BYTES)
    if data is None:
        raise FileNotFoundError(errno.ENOENT, "it is gone") if not problem else OSError(errno.EINVAL, problem)
    return data
