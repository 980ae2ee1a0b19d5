"""The layer cache's columns, packed so a weave after one edit reads them in a few C passes.

A weave after one edit reads the cache of 20,000 lines back. Stored as JSON lists, that
was 100,000 strings and 60,000 numbers for JSON's scanner to make one by one (~18 ms),
then as many type checks. So each column is one string where it can be: the layer and the
kind one letter a line, the slugs, heads and shorts joined by newlines (no index line holds
one: the index is split on them), and whether a line's short is its own text one ``1`` or
``0`` a line; only a line whose links are not just its own slug is listed by number, and
the token counts stay lists of numbers. Still plain JSON, never a format that runs code,
and every column is checked on read: the wrong type, an unknown letter or a count that
does not match the index's lines is a cache that is rebuilt (``kura.map.layers``).
"""

from __future__ import annotations

from itertools import compress, repeat
from typing import Any, NamedTuple

LAYERS = {"p": "pinned", "t": "trigger", "g": "grouped", "o": "other"}
KINDS = {"e": "entry", "g": "group", "h": "heading", "c": "comment", "p": "prose", "b": "blank"}
_LOOKED_UP = frozenset({"pinned", "trigger"})
_COUNTS = ("full", "folded", "bare")


class Layered(NamedTuple):
    """One index line, decided as far as it can be before the fresh window is known."""

    layer: str  # pinned | trigger (fresh if young enough) | grouped | other
    text: str
    short: str  # the trigger-layer text (equal to text when nothing folds)
    slug: str
    kind: str  # the index line's kind, head and slugs, for the postcondition
    head: str
    slugs: tuple[str, ...]
    cost: tuple[int, int, int]  # tokens in full, folded, and cut to the bare link


def pack(lines: list[Layered]) -> dict[str, Any] | None:
    """The columns of ``lines`` (None when a field holds a newline, which no index line can:
    such lines are not cached, only woven again)."""
    shorts = [line.short for line in lines if line.short != line.text]
    columns: dict[str, Any] = {
        "layer": "".join(line.layer[0] for line in lines),
        "kind": "".join(line.kind[0] for line in lines),
        "slug": "\n".join(line.slug for line in lines),
        "head": "\n".join(line.head for line in lines),
        "same": "".join("1" if line.short == line.text else "0" for line in lines),
        "short": "\n".join(shorts),
        "slugs": {str(i): list(ln.slugs) for i, ln in enumerate(lines) if ln.slugs != _links(ln.slug)},
    }
    columns.update((name, [line.cost[i] for line in lines]) for i, name in enumerate(_COUNTS))
    newlines = max(len(lines) - 1, 0) * 2 + max(len(shorts) - 1, 0)
    if sum(columns[name].count("\n") for name in ("slug", "head", "short")) != newlines:
        return None
    return columns


def unpack(columns: dict[str, Any], written: list[str], looked_up: set[str] | Any) -> list[Layered] | None:
    """The cached lines, if every column has the type and range the weave relies on and as
    many rows as the index has lines (``written``: each line's text, never stored, so never
    trusted from the file); None otherwise. ``looked_up``: the memories that exist (pinned
    and trigger lines must name one)."""
    n = len(written)
    layer, kind, same = (_letters(columns.get(name), n, table) for name, table in
                         (("layer", LAYERS), ("kind", KINDS), ("same", {"0": "0", "1": "1"})))  # fmt: skip
    slug, head = _split(columns.get("slug"), n), _split(columns.get("head"), n)
    if layer is None or kind is None or same is None or slug is None or head is None:
        return None
    kept = _split(columns.get("short"), same.count("0"))
    slugs = _slugs(columns.get("slugs"), slug)
    counts = [columns.get(name) for name in _COUNTS]
    if kept is None or slugs is None or not all(_counts(column, n) for column in counts):
        return None
    if not set(compress(slug, map(_LOOKED_UP.__contains__, layer))) <= looked_up:
        return None
    shorts = iter(kept)
    short = [line if flag == "1" else next(shorts) for line, flag in zip(written, same, strict=True)]
    rows = zip(layer, written, short, slug, kind, head, slugs, zip(*counts, strict=True), strict=True)
    # each row is exactly Layered's eight fields (zip of eight columns): made in C, not by _make
    return list(map(tuple.__new__, repeat(Layered), rows))


def _links(slug: str) -> tuple[str, ...]:
    return (slug,) if slug else ()


def _letters(packed: object, n: int, table: dict[str, str]) -> list[str] | None:
    if type(packed) is not str or len(packed) != n or not set(packed) <= table.keys():
        return None
    return list(map(table.__getitem__, packed))


def _split(packed: object, n: int) -> list[str] | None:
    if type(packed) is not str:
        return None
    parts = packed.split("\n") if packed or n else []
    return parts if len(parts) == n else None


def _slugs(listed: object, slug: list[str]) -> list[tuple[str, ...]] | None:
    """Each line's links: its own slug (or none), but where ``listed`` names the line."""
    if type(listed) is not dict:
        return None
    slugs = list(map(_links, slug))
    for key, value in listed.items():
        if not (key.isascii() and key.isdigit() and len(key) < 10) or int(key) >= len(slug):
            return None
        if type(value) is not list:
            return None
        if not all(type(one) is str for one in value):
            return None
        slugs[int(key)] = tuple(value)
    return slugs


def _counts(column: object, n: int) -> bool:
    return (
        type(column) is list
        and len(column) == n
        and set(map(type, column)) <= {int}
        and min(column, default=0) >= 0
    )
