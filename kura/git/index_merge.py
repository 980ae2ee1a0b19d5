"""A three-way merge of MEMORY.md that knows what an entry line is.

Two clones that each add a memory both append a line after the same last entry; git's text
merge calls that a conflict and writes ``<<<<<<<`` into the index, and from there into every
prompt. But an entry line (``- [Title](slug.md) — trigger``) belongs to one memory, named by
its link target, so the index can be merged exactly:

* Lines are aligned by a classic diff3 in which an entry is known by its slug, not its
  text: a changed trigger is the same line changed, and a moved entry is the same line
  moved. Regions only one side changed take that side; unchanged regions stay.
* Each memory's line is then decided once, for the whole file: kept when either side has
  it and nobody removed it untouched, its text taken from the side that changed it, and
  when both changed it, from the side whose memory is dated later (``dated``; with no date
  to decide, ours, and the merge says so). A line one side removed and the other changed
  is kept, and said — a change is never dropped silently.
* Where both sides changed the same stretch, the person's lines (headings, prose, comments,
  fences, grouped lines) are merged again on their own, and only where both changed the
  same of them is there a conflict, written as git writes one. Entries never go inside one:
  every entry the region held is put back after the nearest line before it that is in the
  result (ours' first, in ours' order; theirs' new ones after ours' additions there).

Pure: text in, text out, no git and no files; the caller brings the dates. The index's
newline style, byte-order mark and final newline come through (a change one side made to
them wins, as any change does).
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from kura.files.memory_index import Index, IndexLine, parse_index, render_index

Side = Literal["ours", "theirs"]
Dated = Callable[[Side, str], dt.date | None]  # the date of a memory as one side has it
Committed = Callable[[Side, str], int | None]  # when that side last committed it (seconds): breaks a tie


@dataclass(frozen=True, slots=True)
class Merged:
    """The merged index. ``conflicts``: the line numbers of the ``<<<<<<<`` markers left
    where both sides changed the same prose; ``notes``: what the merge decided that a
    person may want to check (a line changed on both sides, …)."""

    text: str
    conflicts: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.conflicts


@dataclass(slots=True)
class _Item:
    """One line of the result (or one conflict block), with the lines of each side it holds."""

    text: str
    slug: str | None
    ours: tuple[int, ...] = ()
    theirs: tuple[int, ...] = ()
    block: tuple[tuple[str, ...], tuple[str, ...]] | None = None


@dataclass(slots=True)
class _Sides:
    base: Index
    ours: Index
    theirs: Index
    keys: dict[object, int] = field(default_factory=dict)

    def side(self, name: Side) -> Index:
        return self.ours if name == "ours" else self.theirs

    def keyed(self, lines: Sequence[IndexLine]) -> list[int]:
        """Lines as numbers a diff compares: an entry by its slug (a negative number),
        anything else by its text."""
        keys = self.keys
        out = []
        for line in lines:
            if line.kind == "entry":
                out.append(keys.setdefault(("entry", line.slugs[0]), -len(keys) - 1))
            else:
                out.append(keys.setdefault(line.text, len(keys)))
        return out


def merge(
    base: str,
    ours: str,
    theirs: str,
    *,
    dated: Dated | None = None,
    committed: Committed | None = None,
    labels: tuple[str, str] = ("ours", "theirs"),
    marker_size: int = 7,
) -> Merged:
    """Merge two versions of MEMORY.md made from ``base``. Never raises for content. A side
    that did not change the file is no side at all: the result is the other, as it is."""
    if ours in (base, theirs) or theirs == base:
        return Merged(theirs if ours == base else ours)
    sides = _Sides(parse_index(base), parse_index(ours), parse_index(theirs))
    when = (dated or (lambda side, slug: None), committed or (lambda side, slug: None))
    decided, notes = _decide_all(sides, when)
    items = _skeleton(sides)
    items = _entries_decided(items, sides, decided)
    lines = _with_missing(items, sides, decided)
    return _render(lines, sides, labels=labels, size=max(marker_size, 1), notes=notes)


# -- which line each memory gets -------------------------------------------------------------


def _first_lines(index: Index) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in index.lines:
        if line.kind == "entry":
            found.setdefault(line.slugs[0], line.text)
    return found


def _decide_all(sides: _Sides, when: tuple[Dated, Committed]) -> tuple[dict[str, str], list[str]]:
    """Each memory's line in the result (a memory absent from the dict has none)."""
    base, ours, theirs = (_first_lines(ix) for ix in (sides.base, sides.ours, sides.theirs))
    decided: dict[str, str] = {}
    notes: list[str] = []
    for slug in dict.fromkeys([*ours, *theirs]):
        b, o, t = base.get(slug), ours.get(slug), theirs.get(slug)
        if o is not None and t is not None:
            decided[slug] = o if o == t or b == t else t if b == o else _by_date(slug, o, t, when, notes)
        elif o is not None or t is not None:
            kept, (here, there) = (o, ("ours", "theirs")) if o is not None else (t, ("theirs", "ours"))
            assert kept is not None
            if b is None:
                decided[slug] = kept  # added on one side
            elif kept != b:
                decided[slug] = kept
                notes.append(f"{slug}: its line was changed in {here} and removed in {there}; kept the "
                             "changed line — remove it if the memory is gone")  # fmt: skip
    return decided, notes


def _by_date(slug: str, ours: str, theirs: str, when: tuple[Dated, Committed], notes: list[str]) -> str:
    """The line of the later-dated memory when both sides changed (or added) it; on a tie,
    the side that committed it later (a rebase replays the person's own edit as "theirs",
    so keeping ours on a tie would drop it); else ours, said."""
    dated, committed = when
    mine, other = dated("ours", slug), dated("theirs", slug)
    if mine is not None and other is not None and mine != other:
        later: Side = "theirs" if other > mine else "ours"
        notes.append(f"{slug}: its line was changed on both sides; kept the line from {later}, "
                     f"whose memory is dated later ({max(mine, other)} over {min(mine, other)})")  # fmt: skip
        return theirs if later == "theirs" else ours
    mine_at, other_at = committed("ours", slug), committed("theirs", slug)
    if mine == other and mine_at is not None and other_at is not None and mine_at != other_at:
        later = "theirs" if other_at > mine_at else "ours"
        dates = f"both memories are dated {mine}" if mine is not None else "neither memory is dated"
        notes.append(f"{slug}: its line was changed on both sides and {dates}; kept the line from {later}, "
                     "committed later — check it")  # fmt: skip
        return theirs if later == "theirs" else ours
    why = "both memories are dated " + str(mine) if mine is not None and mine == other else (
        f"no date decides (ours: {mine or 'none'}, theirs: {other or 'none'})"
    )  # fmt: skip
    notes.append(f"{slug}: its line was changed on both sides and {why}; kept the line from ours — check it")
    return ours


# -- the skeleton: a diff3 in which an entry is known by its slug ------------------------------


def _lcs(a: list[int], b: list[int]) -> dict[int, int]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return {m.a + k: m.b + k for m in matcher.get_matching_blocks() for k in range(m.size)}


def _pairs(a: list[int], b: list[int]) -> dict[int, int]:
    """Which line of ``a`` is which of ``b``: the person's lines first, then entries only
    between the same two of them — so an entry moved across a heading or a blank line
    reads as that entry moved, not as the person's lines moved around it."""
    pa, pb = [i for i, k in enumerate(a) if k >= 0], [j for j, k in enumerate(b) if k >= 0]
    pairs = {pa[x]: pb[y] for x, y in _lcs([a[i] for i in pa], [b[j] for j in pb]).items()}
    lo_a = lo_b = 0
    for i, j in [*sorted(pairs.items()), (len(a), len(b))]:
        ea = [k for k in range(lo_a, i) if a[k] < 0]
        eb = [k for k in range(lo_b, j) if b[k] < 0]
        if ea and eb:
            pairs.update({ea[x]: eb[y] for x, y in _lcs([a[k] for k in ea], [b[k] for k in eb]).items()})
        lo_a, lo_b = i + 1, j + 1
    return pairs


Chunk = tuple[bool, range, range, range]  # (stable, base lines, ours' lines, theirs' lines)


def _diff3(o: list[int], a: list[int], b: list[int]) -> list[Chunk]:
    """The classic diff3 chunks: stable where all three agree, else a change of one or both."""
    ma, mb = _pairs(o, a), _pairs(o, b)
    chunks: list[Chunk] = []
    lo = la = lb = 0
    while True:
        n = 0
        while lo + n < len(o) and ma.get(lo + n) == la + n and mb.get(lo + n) == lb + n:
            n += 1
        if n:
            chunks.append((True, range(lo, lo + n), range(la, la + n), range(lb, lb + n)))
            lo, la, lb = lo + n, la + n, lb + n
            continue
        j = next((j for j in range(lo, len(o)) if j in ma and j in mb), len(o))
        ha, hb = (ma[j], mb[j]) if j < len(o) else (len(a), len(b))
        if lo < j or la < ha or lb < hb:
            chunks.append((False, range(lo, j), range(la, ha), range(lb, hb)))
        if j == len(o):
            return chunks
        lo, la, lb = j, ha, hb


def _skeleton(sides: _Sides) -> list[_Item]:
    lines = (sides.base.lines, sides.ours.lines, sides.theirs.lines)
    o, a, b = (sides.keyed(ls) for ls in lines)
    items: list[_Item] = []
    for stable, ro, ra, rb in _diff3(o, a, b):
        ko, ka, kb = [o[i] for i in ro], [a[i] for i in ra], [b[i] for i in rb]
        if stable or ka == kb:
            items += [_item(lines[1][i], ours=(i,), theirs=(j,)) for i, j in zip(ra, rb, strict=True)]
        elif ka == ko:
            items += [_item(lines[2][j], theirs=(j,)) for j in rb]
        elif kb == ko:
            items += [_item(lines[1][i], ours=(i,)) for i in ra]
        else:
            items += _prose_merged(sides, ro, ra, rb)
    return items


def _item(line: IndexLine, *, ours: tuple[int, ...] = (), theirs: tuple[int, ...] = ()) -> _Item:
    return _Item(line.text, line.slugs[0] if line.kind == "entry" else None, ours, theirs)


def _prose_merged(sides: _Sides, ro: range, ra: range, rb: range) -> list[_Item]:
    """A stretch both sides changed: its prose merged on its own (a conflict only where both
    changed the same lines); its entries are put back afterwards, by ``_with_missing``."""
    po, pa, pb = ([i for i in r if ix.lines[i].kind != "entry"]
                  for r, ix in ((ro, sides.base), (ra, sides.ours), (rb, sides.theirs)))  # fmt: skip
    o, a, b = (sides.keyed([ix.lines[i] for i in p])
               for p, ix in ((po, sides.base), (pa, sides.ours), (pb, sides.theirs)))  # fmt: skip
    ours, theirs = sides.ours.lines, sides.theirs.lines
    items: list[_Item] = []
    for stable, so, sa, sb in _diff3(o, a, b):
        ka, kb, ko = [a[i] for i in sa], [b[j] for j in sb], [o[i] for i in so]
        if stable or ka == kb:
            items += [_item(ours[pa[i]], ours=(pa[i],), theirs=(pb[j],)) for i, j in zip(sa, sb, strict=True)]
        elif ka == ko:
            items += [_item(theirs[pb[j]], theirs=(pb[j],)) for j in sb]
        elif kb == ko:
            items += [_item(ours[pa[i]], ours=(pa[i],)) for i in sa]
        else:
            mine, other = tuple(pa[i] for i in sa), tuple(pb[j] for j in sb)
            block = (tuple(ours[i].text for i in mine), tuple(theirs[j].text for j in other))
            items.append(_Item("", None, mine, other, block))
    return items


# -- entries: each memory's decided line, once ---------------------------------------------


def _entries_decided(items: list[_Item], sides: _Sides, decided: dict[str, str]) -> list[_Item]:
    """Ours' entries as decided: with the decided text, and none for a memory whose line
    was removed. Theirs' are all put back by ``_with_missing`` (a line ours has is placed by
    ours, so a moved line is never there twice; a new one goes after its predecessor)."""
    ours_first, theirs_first = _first_lines(sides.ours), _first_lines(sides.theirs)
    kept: list[_Item] = []
    for item in items:
        slug = item.slug
        if slug is not None:
            if slug not in decided or not item.ours:
                continue
            if item.text in (ours_first.get(slug), theirs_first.get(slug)):
                item.text = decided[slug]  # a second line a person wrote for it stays as written
        kept.append(item)
    return kept


@dataclass(eq=False, slots=True)
class _Node:
    """An entry put back, in the chain of those that follow one line of the result: a chain,
    not a list, so putting a line after another costs the same however many came before
    (two sides that each add 10,000 lines put back 20,000)."""

    item: _Item
    next: _Node | None = None


def _with_missing(items: list[_Item], sides: _Sides, decided: dict[str, str]) -> list[_Item]:
    """Put back every decided memory line the skeleton does not hold, after its predecessor:
    the nearest line before it on its side that is in the result — ours' first, in ours'
    order, then theirs' (after what was put back there, and the entries ours added there)."""
    at: dict[tuple[Side, int], int] = {}
    for k, item in enumerate(items):
        at.update({("ours", i): k for i in item.ours})
        at.update({("theirs", j): k for j in item.theirs})
    heads: dict[int, _Node] = {}  # after item k (-1: the top): the first put back there …
    tails: dict[int, _Node] = {}  # … and the last
    placed: dict[str, tuple[int, _Node | None]] = {
        it.slug: (k, None) for k, it in enumerate(items) if it.slug
    }
    ours_slugs = set(_first_lines(sides.ours))
    ours_new = ours_slugs - set(_first_lines(sides.base)) - set(_first_lines(sides.theirs))
    past_ours = _past_ours_new(items, ours_new)
    sided: tuple[Side, Side] = ("ours", "theirs")
    for side in sided:
        lines = sides.side(side).lines
        for p, line in enumerate(lines):
            slug = line.slugs[0] if line.kind == "entry" else None
            if slug is None or slug in placed or slug not in decided:
                continue
            if side == "theirs" and slug in ours_slugs:
                continue
            new = _Node(
                _Item(decided[slug], slug, (p,) if side == "ours" else (), (p,) if side == "theirs" else ())
            )
            anchor, prior = _predecessor(side, lines, p, at, placed)
            if prior is not None:
                while side == "theirs" and prior.next is not None and prior.next.item.ours:
                    prior = prior.next  # after what ours put back there
                new.next, prior.next = prior.next, new
            else:
                anchor = past_ours[anchor] if side == "theirs" else anchor
                if anchor in tails:
                    tails[anchor].next = new
                else:
                    heads[anchor] = new
            if new.next is None:
                tails[anchor] = new
            placed[slug] = (anchor, new)
    out = _chain(heads.get(-1))
    for k, item in enumerate(items):
        out.append(item)
        out += _chain(heads.get(k))
    return out


def _past_ours_new(items: list[_Item], ours_new: set[str]) -> list[int]:
    """For each line of the result (and -1, at the end of the list), the last of the run of
    entries only ours added that follows it: where a line of theirs goes after them."""
    past = [*range(len(items)), -1]
    for k in range(len(items) - 2, -2, -1):
        if items[k + 1].slug in ours_new:
            past[k] = past[k + 1]
    return past


def _chain(node: _Node | None) -> list[_Item]:
    out = []
    while node is not None:
        out.append(node.item)
        node = node.next
    return out


def _predecessor(
    side: Side,
    lines: tuple[IndexLine, ...],
    p: int,
    at: dict[tuple[Side, int], int],
    placed: dict[str, tuple[int, _Node | None]],
) -> tuple[int, _Node | None]:
    """Where a line goes: after item ``k`` (-1: at the top), or, when its predecessor is an
    entry put back earlier, right after that entry (returned too)."""
    for q in range(p - 1, -1, -1):
        if (side, q) in at:
            return at[side, q], None
        line = lines[q]
        if line.kind == "entry" and line.slugs[0] in placed:
            return placed[line.slugs[0]]
    return -1, None


# -- the text --------------------------------------------------------------------------------


def _render(
    items: list[_Item], sides: _Sides, *, labels: tuple[str, str], size: int, notes: list[str]
) -> Merged:
    text: list[str] = []
    conflicts: list[int] = []
    for item in items:
        if item.block is None:
            text.append(item.text)
            continue
        conflicts.append(len(text) + 1)
        text += [f"{'<' * size} {labels[0]}", *item.block[0], "=" * size, *item.block[1],
                 f"{'>' * size} {labels[1]}"]  # fmt: skip
    base, ours, theirs = sides.base, sides.ours, sides.theirs
    style = Index(
        tuple(IndexLine(line, "prose") for line in text),
        newline=theirs.newline if ours.newline == base.newline else ours.newline,
        bom=theirs.bom if ours.bom == base.bom else ours.bom,
        final_newline=theirs.final_newline
        if ours.final_newline == base.final_newline
        else ours.final_newline,
    )
    return Merged(render_index(style), tuple(conflicts), tuple(notes))
