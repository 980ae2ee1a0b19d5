"""Thread ids and item keys as file names, and back: the containment rule of a thread.

A thread is the folder ``threads/<id>/`` of a store; an item is one markdown file in it.
Every name a caller gives is checked here before it touches a path, so the set of files a
name can reach is the thread's own folder and nothing else:

* A **thread id** is one slug part (``kura.files.slugs``): letters, digits, ``-``, ``.``
  and ``_`` (not first), in NFC. ``../other``, ``a/b``, ``/etc``, ``%2e%2e``, ``~`` and
  ``.kura`` are no thread — refused by name, never resolved against the disk.
* A **key** is a slug part too, or several joined by ``:`` (``work:current-project``).
  Each ``:`` becomes a folder (``work/current-project.md``): a person sees the namespaces
  as folders in the notebook, the mapping is reversible, and because a key may hold no
  ``/`` and a file name kura makes holds no ``:``, two keys never share a file.
* Reading is kinder than writing, as for memories: a note a person saved as
  ``My Notes.md`` is read (and listed) as the key ``My Notes``; kura only creates keys of
  the strict form. A part that starts with ``.`` or ``_`` is never an item (``_observations.md``
  is the thread's observation log, and ``.kura`` state).
"""

from __future__ import annotations

import unicodedata

from kura.errors import InvalidRequest
from kura.files.slugs import PART_BYTES, SLUG_MAX, THREADS_DIR, new_part

MAX_THREAD = 120  # characters in a thread id
SEPARATOR = ":"


def thread_id(given: object) -> str:
    """The thread id ``given`` names, in NFC; InvalidRequest for anything that is not one."""
    if not isinstance(given, str) or not new_part(unicodedata.normalize("NFC", given)):
        raise InvalidRequest(
            f"{_shown(given)} is not a thread id: use one name of letters, digits, '-', '.' and '_' "
            "(not first), e.g. support-4711 — no '/', no '..'"
        )
    tid = unicodedata.normalize("NFC", given)
    if len(tid) > MAX_THREAD or tid.lower().endswith(".md"):
        raise InvalidRequest(
            f"{_shown(tid)} is not a thread id: at most {MAX_THREAD} characters, not ending .md"
        )
    return tid


def new_key(given: object) -> str:
    """A key kura may create a file for: slug parts joined by ``:``, in NFC."""
    if not isinstance(given, str):
        raise InvalidRequest(f"{_shown(given)} is not a key: it must be text")
    key = unicodedata.normalize("NFC", given.strip())
    parts = key.split(SEPARATOR)
    if (
        not key
        or len(key) > SLUG_MAX
        or not all(new_part(p) for p in parts)
        or any(p.lower().endswith(".md") for p in parts)
    ):
        raise InvalidRequest(
            f"{_shown(given)} is not a usable key: use letters, digits, '-', '.' and '_' (not first), "
            "with ':' between a namespace and a name, e.g. user-format-preference or work:current-project"
        )
    return key


def lookup_key(given: object) -> list[str] | None:
    """A key's folder parts for a lookup (``a:b`` → ``["a", "b"]``), in the spelling on disk
    a person may have used; None for anything that could name a file outside the thread."""
    if not isinstance(given, str):
        return None
    key = given.removesuffix(".md")
    if not key or any(c in key for c in "/\\\x00") or len(key.encode("utf-8")) > 4 * SLUG_MAX:
        return None
    parts = key.split(SEPARATOR)
    if any(not p or p[:1] in "._" or p != p.strip() or len(p.encode("utf-8")) > PART_BYTES for p in parts):
        return None
    return parts


def file_of(parts: list[str]) -> str:
    """The item's path inside its thread folder: ``["work", "x"]`` → ``work/x.md``."""
    return "/".join(parts) + ".md"


def key_of(rel: str) -> str | None:
    """The key of a file inside a thread folder (``work/x.md`` → ``work:x``); None for a file
    that is no item (not ``.md``, private, or a name a key cannot spell)."""
    if not rel.endswith(".md") or len(rel) <= 3:
        return None
    key = rel[:-3].replace("/", SEPARATOR)
    parts = lookup_key(key)
    return key if parts is not None and file_of(parts) == rel else None


def folder_of(tid: str) -> str:
    """The thread's folder relative to the store."""
    return f"{THREADS_DIR}/{tid}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…'"
