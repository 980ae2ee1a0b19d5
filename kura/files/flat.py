"""distill-kura's flat frontmatter, read without YAML.

distill-kura reads frontmatter as flat ``key: value`` lines, so the stores it writes hold
values with an unquoted ``": "`` (which YAML refuses) in about four memories of ten, and
the type under ``metadata:``. Reading each such key through the pure-Python YAML parser
cost most of a cold scan of 20,000 of them; these lines leave YAML no room for doubt, so
they are read here with the values YAML (or, where it refuses, the key-by-key reading in
``kura.files.frontmatter``) gives — tests/files/test_fast_paths.py holds the two equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

YAML_WORDS = frozenset("yes no true false on off null".split())
_BRACKETS = 32  # a plain value with more flow brackets goes to YAML, which guards its depth

FLAT_LAYOUT = (
    "distill-kura's flat frontmatter: a value holds an unquoted ': ', which YAML refuses; "
    "kura reads it as written — `kura doctor --fix` quotes such values"
)


@dataclass(frozen=True, slots=True)
class Flat:
    """A key's value read without YAML; ``colon``: YAML refuses its line for an unquoted
    ``": "`` in the value (distill-kura's flat layout), so the value is the text as written."""

    value: Any
    colon: bool = False


# a line ``key: value`` whose key YAML reads as that text, with the value's first character
_FLAT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):([ ]+)(.*)$")
_NESTED_LINE = re.compile(r"^([ ]+)([A-Za-z_][A-Za-z0-9_-]*):[ ]+(.*)$")
_OPENS_MAP = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):[ ]*$")
# characters YAML does not read as themselves inside a plain value (a tab, CR, line separator,
# byte-order mark or character its reader refuses): the complement of x20-x7e, xa0-u2027,
# u202a-ud7ff, ue000-ufefe, uff00-ufffd and U00010000-U0010ffff, spelled as the few ranges
# outside them (the negated class compiled 14 times slower, 6 ms of every process that reads a file)
UNPLAIN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_NOT_FIRST = frozenset(" -?:,[]{}#&*!|>'\"%@`+.0123456789<~=")  # indicators, numbers, dates, ~


def flat_value(lines: tuple[str, ...]) -> Flat | None:
    """What ``_span_value`` gives for one key's lines, read without YAML, for the lines
    distill-kura writes: ``key: plain text`` (``# comment`` after it allowed), the same
    with an unquoted ``": "`` in the text (which YAML refuses: the text as written), and
    ``key:`` over indented ``sub: plain text`` lines. None for anything else, which goes to
    YAML as before (tests/files/test_fast_paths.py holds the two readings equal)."""
    match = _FLAT_LINE.match(lines[0])
    if len(lines) == 1:
        return _plain(match.group(3)) if match is not None and _fine_key(match.group(1)) else None
    opened = _OPENS_MAP.match(lines[0])
    if opened is None or not _fine_key(opened.group(1)):
        return None
    nested: dict[str, Any] = {}
    indent = None
    for line in lines[1:]:
        inner = _NESTED_LINE.match(line)
        if inner is None or (indent is not None and inner.group(1) != indent):
            return None
        indent, key = inner.group(1), inner.group(2)
        value = _plain(inner.group(3))
        if value is None or value.colon or key in nested or not _fine_key(key):
            return None
        nested[key] = value.value
    return Flat(nested)


def _fine_key(key: str) -> bool:
    return key.lower() not in YAML_WORDS and len(key) < 1000  # YAML: a key within 1024 characters


def _plain(text: str) -> Flat | None:
    """A value as YAML reads it after ``key: `` on one line, where that is certain."""
    if not text or text[0] in _NOT_FIRST or UNPLAIN.search(text) is not None:
        return None
    if text.count("[") + text.count("{") > _BRACKETS:  # what YAML's depth guard says of it, as before
        return None
    cut = text.find(" #")
    head = text if cut < 0 else text[:cut]
    if ": " in head or head.endswith(":"):  # YAML stops at the colon: the line is not YAML
        return Flat(text.strip(), colon=True)
    value = head.rstrip(" ")
    return None if value.lower() in YAML_WORDS else Flat(value)
