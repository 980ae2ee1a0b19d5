"""What a host's hook reads on stdin: its JSON, never waited on forever.

A host writes a few hundred bytes of JSON and closes the pipe; a hook must still return when
stdin is a terminal (a person trying the command), when the host never closes it, or when
something far too big arrives. Every host hook (``session-start``, ``capture``, ``prompt``)
reads through here, so each behaves the same way when the host misbehaves.
"""

from __future__ import annotations

import os
import select
import sys
import time
from typing import BinaryIO

from kura.cli.exit import warn

PAYLOAD_CAP = 1 << 20  # a host's JSON is a few hundred bytes; more is not one
PAYLOAD_WAIT = 2.0  # seconds a host may take to write its JSON before the hook goes without


def host_input(stdin: BinaryIO | None = None, *, hook: str) -> bytes:
    """The bytes on stdin: b"" for a terminal (never waited on), an unreadable stream, or a
    host that wrote nothing within ``PAYLOAD_WAIT`` seconds; more than ``PAYLOAD_CAP`` bytes
    when more came (the caller refuses it)."""
    stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
    try:
        if stream is None or stream.isatty():
            return b""
        return _read(stream.fileno(), hook) if _has_fd(stream) else stream.read(PAYLOAD_CAP + 1)
    except OSError:
        return b""


def _has_fd(stream: BinaryIO) -> bool:
    """Whether ``stream`` is a real file (a pipe, a file): else an in-memory one (a test's)."""
    try:
        stream.fileno()
    except (OSError, ValueError):
        return False
    return True


def _read(fd: int, hook: str) -> bytes:
    """What comes on ``fd`` until it is closed, within the wait and the cap."""
    chunks: list[bytes] = []
    size, deadline = 0, time.monotonic() + PAYLOAD_WAIT
    while size <= PAYLOAD_CAP:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            warn(f"hook {hook}: no JSON from the host within {PAYLOAD_WAIT:g} s; went without it")
            return b""
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)  # over the cap: the caller refuses it
