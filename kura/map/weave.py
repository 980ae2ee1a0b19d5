"""The weave: MEMORY.md folded into a three-layer cloth that fits the prompt budget.

A blind test settled the shape: detail only pays for things that are still moving, and a
lighter surround makes the standing lines work better. So each entry line becomes one of

* **pinned** — its type is in ``pinned_types`` (feedback, user): kept as written, because
  these are the rules and the people, read every turn;
* **fresh** — the memory changed within ``fresh_days`` (see ``kura.map.age``): as written;
* **trigger** — everything else: its trigger squeezed to about ``trigger_tokens``, by the
  scribe model when one is configured (and only if the result stays grounded in the line),
  else by the mechanical trimmer.

Headings, prose, comments and grouped lines pass through untouched. Over budget, the fresh
window shortens (configured, 7, 3, 1, 0 days); no line is ever dropped, and if nothing fits
the better map is kept and the weight reported. The postcondition is checked before
anything is written: the cloth must name exactly the memories the index names, in the same
order — or nothing is written and the error says what would have been lost or invented.

Work is proportional to change: parses come from the catalog, triggers from the ledger
(keyed by the line, the budget, the trimmer version and the method), and an unchanged
cloth is not rewritten, so prompt caches downstream stay warm.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import compress
from operator import attrgetter, itemgetter, ne, not_
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import StoreError
from kura.files.belief import from_summary
from kura.files.checks import conflict_message, conflicts
from kura.files.memory_index import classify_line, parse_index
from kura.files.slugs import Stats, file_stats, is_memory_name
from kura.map.age import Age, ages, fresh, shared_note
from kura.map.ceiling import LADDER, folds_from
from kura.map.layers import Layered, Layering, layering, marked
from kura.map.record import (
    SECTORS,
    cloth_target,
    fingerprint,
    index_stamp,
    pinned_lines,
    scribe_id,
    stored_map,
    summary_line,
)
from kura.map_settings import MapSettings, header_text, wrap
from kura.store import catalog
from kura.store import state as st
from kura.store.atomic import locked, write_atomic
from kura.store.store import Store
from kura.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.config import ModelConfig

_MARKERS = ("<!--", "-->", "```", "~~~", "\r")
BACKUPS = 3


@dataclass(kw_only=True, frozen=True, slots=True)
class Woven:
    store: str
    text: str
    tokens: int
    budget: int
    fresh_days: float
    over_budget: bool
    weight: dict[str, int]
    layers: dict[str, int]
    written: bool
    parsed: int
    model_calls: int
    path: Path | None = None
    notes: list[str] = field(default_factory=list)
    error: str = ""
    folds: list[tuple[int, int, str]] = field(default_factory=list)  # see kura.map.ceiling
    pinned: list[int] = field(default_factory=list)  # the cloth's pinned lines (0-based), see kura.map.beside

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store, "tokens": self.tokens, "budget": self.budget,
            "fresh_days": self.fresh_days, "over_budget": self.over_budget, "weight": self.weight,
            "layers": self.layers, "written": self.written, "parsed": self.parsed,
            "model_calls": self.model_calls, "path": str(self.path) if self.path else None,
            "notes": self.notes, "error": self.error,
        }  # fmt: skip


def weave(
    store: Store,
    settings: MapSettings,
    *,
    scribe: ModelConfig | None = None,
    today: dt.date | None = None,
    write: bool = True,
    max_model_calls: int = 64,
    max_parse: int | None = None,
    force: bool = False,
    stats: Stats | None = None,
    stamp: str | None = None,
    checked: bool = False,
) -> Woven | None:
    """Weave one store's map (None when ``max_parse`` was exceeded). When nothing it
    depends on changed since the last weave, the stored map is returned as it is. ``stats``
    (from ``slugs.file_stats``, taken before anything was read) saves a caller's second walk,
    and ``stamp`` (``record.fingerprint`` of those stats, for ``today``) a second checksum;
    ``checked``: the caller has just found no stored map for that stamp (``record.stored_map``),
    so it is not read again."""
    today = today or dt.date.today()
    header = header_text(settings, store.name)
    wanted = scribe_id(scribe)
    # Taken before reading anything: a file that changes during the weave leaves a stamp
    # that no longer matches, so the next prefill re-weaves instead of serving stale.
    if stats is None or stamp is None:
        stats = file_stats(store.root) if stats is None else stats
        stamp = fingerprint(store.root, settings, today=today, stats=stats)
    try:
        state: Path | None = st.folder(store.root, store=store.name)
    except StoreError as err:  # a .kura that is a link or a file: weave in memory, save nothing
        state, refused = None, str(err)
    if write and not force and not checked and state is not None:
        kept = _current(store, settings, stamp, wanted)
        if kept is not None:
            return kept
    data, index_text, index_seen = _index(store)
    db = catalog.connect(store)
    try:
        scan = catalog.scan(store, db, max_parse=max_parse, stats=stats, brief=True)
        if scan is None:
            return None
        age = ages(store.root, scan.entries, db)
        woven_lines = layering(
            state, db, data, scan.entries, settings,
            scribe=scribe, max_calls=max_model_calls, force=force, seen=index_seen[0],
            read=(index_text, index_seen[1]),
        )  # fmt: skip
    finally:
        db.close()
    layered = on_record(woven_lines.lines, scan.entries, today)
    days, lines = _fit(layered, age, settings, today, base=estimate_tokens(wrap(store.name, header, "")))
    text = _cloth(layered, lines)
    tokens = estimate_tokens(wrap(store.name, header, text))
    _postcondition(layered, text)
    weight, layers = _weigh(layered, lines)
    notes = [] if tokens <= settings.budget else [_overweight(tokens, settings.budget, weight)]
    # file dates not believed, a layer cache that could not be saved: say why
    notes += [note for note in (shared_note(age), woven_lines.unsaved) if note]
    woven = Woven(
        store=store.name,
        text=text,
        tokens=tokens,
        budget=settings.budget,
        fresh_days=days,
        over_budget=tokens > settings.budget,
        weight=weight,
        layers=layers,
        written=False,
        parsed=scan.parsed,
        model_calls=woven_lines.calls,
        path=None,
        notes=notes,
        folds=_folds(layered, lines, age, today),
        pinned=_where(lines, "pinned"),
    )
    if not write:
        return woven
    if state is None:
        return replace(woven, error=f"could not save the map: {refused}")
    # A scribe that was not asked about every line (the call cap) leaves a map prefill may
    # serve, but that `kura weave` with the scribe must finish.
    recorded = f"partial:{wanted}" if woven_lines.capped else wanted
    try:
        path, written = _store_cloth(
            store, settings, woven, stamp=stamp, scribe=recorded, index=(woven_lines, index_seen)
        )
    except (OSError, StoreError) as err:
        return replace(woven, error=f"could not save the map in {state} ({err}); prefill re-weaves each time")
    return replace(woven, path=path, written=written)


def _read_index(store: Store) -> tuple[bytes, tuple[str, str]]:
    """The index's bytes, and (stat stamp, sha256) of exactly those bytes — the stamp
    taken first, so an index saved meanwhile never matches what was woven."""
    data, _, seen = _index(store)
    return data, seen


def _index(store: Store) -> tuple[bytes, str, tuple[str, str]]:
    """``_read_index``, and the bytes decoded (once: the weave reads them again as text)."""
    path = store.index_path
    try:
        seen = index_stamp(path)
    except FileNotFoundError:
        return b"", "", ("", hashlib.sha256(b"").hexdigest())
    except OSError as err:
        raise StoreError(f"{path}: cannot read the index ({err.strerror})") from err
    data = store.index_bytes()  # a FIFO, a device, a huge file: a StoreError, never a hang
    text = data.decode("utf-8", errors="replace")
    found = conflicts(text, examples=False)
    if found:  # both sides of a merge would be woven into every prompt as one
        raise StoreError(
            f"{path}:{found[0][0]}: {conflict_message(found)}; the map was not woven and the last good "
            "one stays in use — `kura doctor` lists every conflicted file"
        )
    return data, text, (seen, hashlib.sha256(data).hexdigest())


def describe(woven: Woven) -> str:
    """The one-line summary ``kura weave`` prints."""
    return summary_line(woven.to_dict(), written=woven.written)


def _current(store: Store, settings: MapSettings, stamp: str, scribe: str) -> Woven | None:
    """The stored map, when its stamp says nothing it depends on has changed (``stored_map``
    has checked every field's type)."""
    cloth = cloth_target(store.root, settings)
    found = stored_map(store.root, stamp, scribes=(scribe,), cloth=cloth)
    pinned = pinned_lines(found[0], found[1]) if found is not None else None
    if found is None or pinned is None:  # a map.json from before pinned lines were recorded: woven again
        return None
    meta, text = found
    return Woven(
        store=store.name,
        text=text,
        tokens=meta["tokens"],
        budget=meta["budget"],
        fresh_days=meta["fresh_days"],
        over_budget=meta["over_budget"],
        weight=meta["weight"],
        layers=meta["layers"],
        written=False,
        parsed=0,
        model_calls=0,
        path=cloth,
        notes=list(meta["notes"]),
        folds=[(f.line, f.age, f.text) for f in folds_from(meta["folds"], text.count("\n") + 1)],
        pinned=pinned,
    )


def _fit(
    layered: list[Layered], age: dict[str, Any], settings: MapSettings, today: dt.date, *, base: int
) -> tuple[float, list[tuple[str, str]]]:
    """The widest fresh window (configured, 7, 3, 1, 0 days) whose map fits the budget,
    or the smallest map if none does. Lines are never dropped, only folded. A line's cost
    depends on the window only through its age, so each window is priced without building
    its map: a fixed part plus, for each foldable line, full or folded by age."""
    trigger = list(map("trigger".__eq__, map(attrgetter("layer"), layered)))
    costs = list(map(attrgetter("cost"), layered))
    rest = map(not_, trigger)
    fixed = base + len(layered) + sum(map(itemgetter(0), compress(costs, rest)))
    fixed += sum(map(itemgetter(1), compress(costs, trigger)))
    extra: Counter[int] = Counter()  # by age in days: what staying in full costs more than folded
    for (full, short, _), item in zip(compress(costs, trigger), compress(layered, trigger), strict=True):
        day = age[item.slug].day
        if day is not None and full > short:
            extra[(today - day).days] += full - short
    windows = (settings.fresh_days, *(d for d in LADDER if d < settings.fresh_days))
    priced = [(fixed + sum(cost for old, cost in extra.items() if old < days), days) for days in windows]
    fitting = [days for tokens, days in priced if tokens <= settings.budget]
    days = fitting[0] if fitting else min(priced, key=lambda p: (p[0], -p[1]))[1]
    return days, _picked(layered, trigger, age, today, days)


ON_RECORD = " (on record, may be stale)"


def on_record(layered: list[Layered], entries: dict[str, Any], today: dt.date) -> list[Layered]:
    """Lines of memories that are findable but not asserted today (thin or aged evidence,
    a live contradiction), marked so that an agent never reads them as current fact."""
    standing = {slug: entry.standing for slug, entry in entries.items() if entry.standing}
    if not standing:  # no memory has a lifecycle field: every one is asserted
        return layered
    out = []
    extra = estimate_tokens(ON_RECORD)
    for item in layered:
        found = from_summary(item.slug, standing[item.slug], today) if item.slug in standing else None
        if found is not None and not found.asserted and not item.text.endswith(ON_RECORD):
            full, folded, bare = item.cost
            item = item._replace(text=item.text + ON_RECORD, short=item.short + ON_RECORD,
                                 cost=(full + extra, folded + extra, bare + extra))  # fmt: skip
        out.append(item)
    return out


def _folds(
    layered: list[Layered], lines: list[tuple[str, str]], age: dict[str, Age], today: dt.date
) -> list[tuple[int, int, str]]:
    """(line, age in days, folded text) of each line kept in full only because it is fresh:
    what prefill folds, window by window, to bring the map under a host's ceiling without
    weaving again. None at all if the cloth with every one folded would fail the
    postcondition (a ceiling then gets the sector map, never a map that loses a line)."""
    folds = []
    for i in _where(lines, "fresh"):
        item = layered[i]
        day = age[item.slug].day if item.slug in age else None
        if item.short != item.text and day is not None and "\n" not in item.short:
            folds.append((i, (today - day).days, item.short))
    if not folds:
        return []
    smallest = [text for _, text in lines]
    for i, _, short in folds:
        smallest[i] = short
    try:
        _postcondition(layered, "\n".join(smallest) + "\n")
    except StoreError:
        return []
    return folds


def _picked(
    layered: list[Layered], trigger: list[bool], age: dict[str, Age], today: dt.date, days: float
) -> list[tuple[str, str]]:
    """(layer, text) of each line under a fresh window of ``days``: a trigger line is fresh
    (in full) when its memory is young enough, else folded; any other line is as laid out.
    Freshness is asked once per distinct ``Age`` (memories of one day and source share one)."""
    lines: list[tuple[str, str]] = list(map(itemgetter(0, 1), layered))  # (layer, text)
    folding = list(compress(layered, trigger))
    ages = list(map(age.__getitem__, map(attrgetter("slug"), folding)))
    distinct = dict(zip(map(id, ages), ages, strict=True))  # by identity: hashing an Age is a call
    young = {key: fresh(one, today, days) for key, one in distinct.items()}
    at = compress(range(len(lines)), trigger)
    for i, item, full in zip(at, folding, map(young.__getitem__, map(id, ages)), strict=True):
        lines[i] = ("fresh", item.text) if full else ("trigger", item.short)
    return lines


def _where(lines: list[tuple[str, str]], layer: str) -> list[int]:
    """The positions of ``layer``'s lines."""
    return list(compress(range(len(lines)), map(layer.__eq__, map(itemgetter(0), lines))))


def _cloth(layered: list[Layered], lines: list[tuple[str, str]]) -> str:
    return "\n".join(text for _, text in lines) + ("\n" if lines else "")


def _postcondition(layered: list[Layered], text: str) -> None:
    """The cloth must name exactly the index's memories, in order. Lines the weave did not
    change classify as they did in the index unless a comment or fence opened or closed
    differently, so when no changed line holds such a marker only the changed lines are
    read again; otherwise the whole cloth is."""
    woven = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    if len(woven) == len(layered) and _unchanged_entries(layered, woven):
        return
    before = [slug for line in layered for slug in line.slugs]
    after = [slug for line in parse_index(text).lines for slug in line.slugs]
    if before != after:
        lost = sorted(set(before) - set(after))
        invented = sorted(set(after) - set(before))
        raise StoreError(
            f"weave refused: the cloth would not name the same memories as MEMORY.md "
            f"(lost: {lost or 'none'}; invented: {invented or 'none'}; order changed: "
            f"{not lost and not invented}); nothing was written — report this as a bug"
        )


def _unchanged_entries(layered: list[Layered], woven: list[str]) -> bool:
    """Whether each line the weave changed still names what its index line named, with no
    comment or fence marker in any changed line (then the lines it did not change classify
    as before). A few passes in C over 20,000 lines; each line alone when that says no."""
    changed = list(map(ne, map(attrgetter("text"), layered), woven))
    old, new = list(compress(layered, changed)), list(compress(woven, changed))
    # joined by "\n", which no marker holds: a marker in the joined text is a marker in a line
    if marked("\n".join(map(attrgetter("text"), old))) or marked("\n".join(new)):
        return False
    heads = list(map(attrgetter("head"), old))
    folded = (
        all(map("entry".__eq__, map(attrgetter("kind"), old)))
        and all(heads)
        and all(map(str.startswith, new, heads))  # the split lines hold no "\n"
    )
    return folded or all(map(_same_entry, old, new))


def _floor(name: str, settings: MapSettings, layered: list[Layered]) -> int:
    """The fewest tokens any map of this index can cost: every entry cut to its bare link."""
    return estimate_tokens(wrap(name, header_text(settings, name), "")) + sum(
        line.cost[2] + 1 for line in layered
    )


def _same_entry(old: Layered, new: str) -> bool:
    """Whether ``new`` names what ``old`` named. A folded entry keeps the entry's head —
    indent, bullet, link and separator — so it matches the entry grammar at the same
    place; any other change is read again."""
    if old.kind == "entry" and old.head and new.startswith(old.head) and "\n" not in new:
        return True
    return classify_line(new).slugs == old.slugs


def _weigh(layered: list[Layered], lines: list[tuple[str, str]]) -> tuple[dict[str, int], dict[str, int]]:
    """Tokens and lines by layer, each layer in the order its first line comes (a few passes
    in C, one a layer)."""
    names = list(map(itemgetter(0), lines))
    costs = list(map(attrgetter("cost"), layered))
    weight: dict[str, int] = {}
    layers: dict[str, int] = {}
    for layer in dict.fromkeys(names):
        mine = list(map(layer.__eq__, names))
        weight[layer] = sum(map(itemgetter(1 if layer == "trigger" else 0), compress(costs, mine)))
        layers[layer] = sum(mine)
    return weight, layers


def _overweight(tokens: int, budget: int, weight: dict[str, int]) -> str:
    parts = ", ".join(f"{layer} ~{n}" for layer, n in sorted(weight.items(), key=lambda kv: -kv[1]))
    return (
        f"no setting brings the map within budget (~{tokens} tokens, budget {budget}); kept the "
        f"smallest map without dropping a line. Weight by layer: {parts}"
    )


def _store_cloth(
    store: Store,
    settings: MapSettings,
    woven: Woven,
    *,
    stamp: str,
    scribe: str,
    index: tuple[Layering, tuple[str, str]],
) -> tuple[Path | None, bool]:
    """Write the cloth (only if it changed, keeping a few backups), its stamp and digest,
    and the sector map prefill falls back to over the hard limit (so it need not parse the
    index). Raises OSError/StoreError when the state folder cannot be written."""
    path = _cloth_path(store, settings)
    woven_lines, (seen, digest) = index
    state = st.folder(store.root, store=store.name, create=True)
    derived = path.is_relative_to(state)  # a cloth of its own elsewhere is fsynced, as before
    with locked(state / "weave.lock"):
        sectors = f"<!-- {digest} -->\n{woven_lines.sectors}"
        if _read(state / SECTORS) != sectors:
            write_atomic(state / SECTORS, sectors.encode("utf-8"), durable=False)
        old = _read(path)
        changed = old != woven.text
        if changed:
            if old is not None:
                _keep_backup(path, old, durable=not derived)
            write_atomic(path, woven.text.encode("utf-8"), durable=not derived)
        summary = {
            k: v for k, v in woven.to_dict().items() if k not in ("written", "parsed", "model_calls", "path")
        }
        recorded = path.relative_to(store.root).as_posix() if path.is_relative_to(store.root) else str(path)
        meta = {
            "fingerprint": stamp, "scribe": scribe, "cloth": recorded, "settings": settings.key(),
            "cloth_sha": hashlib.sha256(woven.text.encode("utf-8")).hexdigest(),
            "sectors_sha": hashlib.sha256(sectors.encode("utf-8")).hexdigest(),
            "index_stamp": seen, "floor": _floor(store.name, settings, woven_lines.lines),
            "folds": [list(fold) for fold in woven.folds], "pinned": woven.pinned, **summary,
        }  # fmt: skip
        write_atomic(state / "map.json", json.dumps(meta, indent=1).encode(), durable=False)
    return path, changed


def _read(path: Path) -> str | None:
    """A file the weave wrote before (only compared with what it writes now, so anything
    wrong with it only means it is written again)."""
    return st.read_text(path, then="the weave writes it again")


def _cloth_path(store: Store, settings: MapSettings) -> Path:
    path = cloth_target(store.root, settings)
    if not settings.cloth_path:
        return path
    try:
        rel = path.resolve().relative_to(store.root.resolve())
    except ValueError:
        return path
    if is_memory_name(rel) or rel.name == "MEMORY.md":
        raise StoreError(
            f"[prefill] cloth_path = {settings.cloth_path!r} would overwrite a memory or the index "
            f"of store '{store.name}'; put it under .kura/ or outside the store"
        )
    return path


def _keep_backup(path: Path, old: str, *, durable: bool) -> None:
    """Shift map.md.1 → .2 → .3 and put the old cloth in .1; map.md itself is only ever
    replaced atomically, so a reader never finds it missing."""
    for n in range(BACKUPS, 1, -1):
        older = path.with_name(f"{path.name}.{n - 1}")
        if older.exists():
            older.replace(path.with_name(f"{path.name}.{n}"))
    write_atomic(path.with_name(f"{path.name}.1"), old.encode("utf-8"), durable=durable)
