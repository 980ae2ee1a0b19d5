"""What a memory written through kura may hold: sizes and characters.

Everything a memory says is read into prompts, and its description becomes a line of the
map every agent reads before every turn. So a write is refused (with what to change) when
a description would swamp the map, a body is larger than a memory should be, text carries
control characters that terminals and greps choke on, text contains the map's own fence
markers — a description reading ``<<<END KURA-MAP>>>`` would let the rest of a line
pose as something outside the memory block — or a given title is longer than the index
shows (it would be dropped without a word, and a cut one would read as whole). Hand-edited
files are not refused (they are the user's); doctor and the map deal with them.
"""

from __future__ import annotations

import re
from pathlib import Path

from kura.errors import StoreError
from kura.files.memory_file import MemoryFile
from kura.files.memory_index import TITLE_MAX

MAX_TITLE = 200
MAX_DESCRIPTION = 600
MAX_BODY = 64 * 1024
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # C0 controls and DEL, except \t and \n
_FENCE = re.compile(r"<<<|>>>")  # in a title or description: the map's fence characters
_MARKER = re.compile(r"<<<[^\n]*KURA-MAP|KURA-MAP[^\n]*>>>")  # in a body: only the markers themselves


def check_text(where: str, *, title: str, description: str, body: str) -> None:
    """Raise StoreError naming the field when a memory's text may not be written."""
    for field, text, limit in (("title", title, MAX_TITLE), ("description", description, MAX_DESCRIPTION),
                               ("body", body, MAX_BODY)):  # fmt: skip
        if len(text) > limit:
            fix = "put the detail in the body" if field != "body" else "split it into several memories"
            raise StoreError(f"{where}: the {field} is {len(text)} characters; at most {limit} — {fix}")
        found = _CONTROL.search(text if field == "body" else text.replace("\t", " "))
        if found or (field != "body" and "\n" in text):
            what = "a line break" if not found else f"the control character U+{ord(found.group()):04X}"
            raise StoreError(f"{where}: the {field} holds {what}; remove it")
        if (_MARKER if field == "body" else _FENCE).search(text):
            fence = "'<<<' or '>>>'" if field != "body" else "a KURA-MAP marker"
            raise StoreError(f"{where}: the {field} holds {fence}, which fences the memory map; remove it")


def check_title(where: str, title: str | None) -> None:
    """Refuse a title given for the index that the index could not show: a title over
    ``TITLE_MAX`` characters would be dropped for the description (``index.title_for``),
    and cutting it would make a truncated sentence read as a whole one."""
    given = " ".join((title or "").split())
    if len(given) > TITLE_MAX:
        raise StoreError(
            f"{where}: the title is {len(given)} characters; the index shows a title of at most "
            f"{TITLE_MAX} whole, never a cut one — shorten it (the description carries the rest); "
            "nothing was written"
        )


def utf8(where: str, text: str) -> bytes:
    """Text as UTF-8, or a clear refusal (arguments and pipes can carry stray bytes)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise StoreError(
            f"{where}: the text holds bytes that are not UTF-8 (at character "
            f"{err.start}); nothing was written — re-encode the input as UTF-8"
        ) from None


def check_rewritable(path: Path, note: MemoryFile) -> None:
    """Refuse to rewrite a file kura could only mangle: bytes that are not UTF-8, or a
    frontmatter block that was opened and never closed."""
    if note.raw is None:
        raise StoreError(
            f"{path.name}: not valid UTF-8; kura will not rewrite it and lose bytes — re-save as UTF-8"
        )
    if not note.has_frontmatter and note.body.startswith("---"):
        raise StoreError(
            f"{path.name}:1: the frontmatter is never closed; add the closing --- line, then write again"
        )
