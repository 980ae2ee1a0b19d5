"""Which line of a kura.toml holds a key, so a refusal can say ``kura.toml:12:``.

``tomllib`` gives values, not positions, and a refusal without a line leaves a person
searching a long file for ``[stores.eq.prefill]``. This reads the text once more, line by
line, tracking the current table header (``[a.b]``, ``[[a.b]]``) and dotted keys
(``a.b = …``), and returns the first line that sets the key (or opens the table) — 0
when it cannot tell (a key inside a multi-line inline table, say), and the message goes
without a line.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\[\[?\s*(.+?)\s*\]\]?\s*(?:#.*)?$")
_PART = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)"""
_KEY = re.compile(rf"^({_PART}(?:\s*\.\s*{_PART})*)\s*=")


def located(path: str, text: str, table: str | None, key: str = "") -> str:
    """``path:line`` when ``text`` shows the line that sets ``key`` in ``table``, else ``path``."""
    line = line_of(text, table, key) if text and table is not None else 0
    return f"{path}:{line}" if line else path


def line_of(text: str, table: str, key: str = "") -> int:
    """The 1-based line that sets ``key`` in ``table`` (a dotted path, "" for the top
    level), or opens that table when ``key`` is ""; 0 when not found."""
    target = _path(f"{table}.{key}" if table and key else table or key)
    if not target:
        return 0
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        header = _HEADER.match(stripped)
        if header is not None:
            current = _path(header.group(1))
            if _within(current, target):
                return number
            continue
        found = _KEY.match(stripped)
        if found is None:
            continue
        path = _path(f"{current}.{found.group(1)}" if current else found.group(1))
        if _within(path, target) or ("{" in stripped and target.startswith(path + ".")):
            return number
    return 0


def _within(path: str, target: str) -> bool:
    return path == target or path.startswith(target + ".")


def _path(dotted: str) -> str:
    parts = re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', dotted)
    return ".".join(part.strip().strip("\"'") for part in parts if part.strip())
