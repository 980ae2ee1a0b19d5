"""The weave: MEMORY.md folded into a three-layer cloth that fits the prompt budget.

A blind test settled the shape: detail only pays for things that are still moving, and a
lighter surround makes the standing lines work better. So each entry line becomes one of

* **pinned** — its type is in ``pinned_types`` (feedback, user): kept as written, because
  these are the rules and the people, read every turn;
* **fresh** — the memory changed within ``fresh_days`` (see ``kura.age``): as written;
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
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura import catalog, trim
from kura.age import ages, fresh
from kura.atomic import locked, write_atomic
from kura.errors import StoreError
from kura.index import Index, IndexLine, parse_index
from kura.prefill import MapSettings, fingerprint, header_text, wrap
from kura.slugs import STATE_DIR, is_memory_name
from kura.store import Store
from kura.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.config import ModelConfig

LADDER = (7, 3, 1, 0)
BACKUPS = 3


@dataclass(frozen=True, slots=True)
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store, "tokens": self.tokens, "budget": self.budget,
            "fresh_days": self.fresh_days, "over_budget": self.over_budget, "weight": self.weight,
            "layers": self.layers, "written": self.written, "parsed": self.parsed,
            "model_calls": self.model_calls, "path": str(self.path) if self.path else None,
            "notes": self.notes,
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
) -> Woven | None:
    """Weave one store's map (None when ``max_parse`` was exceeded)."""
    today = today or dt.date.today()
    header = header_text(settings, store.name)
    scribe_id = f"{scribe.url}|{scribe.model}" if scribe else ""
    # Taken before reading anything: a file that changes during the weave leaves a stamp
    # that no longer matches, so the next prefill re-weaves instead of serving stale.
    stamp = fingerprint(store.root, settings, today=today, scribe=scribe_id)
    db = catalog.connect(store)
    try:
        scan = catalog.scan(store, db, max_parse=max_parse)
        if scan is None:
            return None
        index = store.index()
        age = ages(store.root, scan.entries, db)
        triggers, calls = _triggers(db, index, scan.entries, settings, scribe, max_model_calls)
    finally:
        db.close()
    best: tuple[int, float, list[tuple[str, str]]] | None = None
    for days in (settings.fresh_days, *(d for d in LADDER if d < settings.fresh_days)):
        lines = [_fold(line, scan.entries, age, triggers, settings, today, days) for line in index.lines]
        tokens = estimate_tokens(wrap(store.name, header, _cloth(index, lines)))
        if best is None or tokens < best[0]:
            best = (tokens, days, lines)
        if tokens <= settings.budget:
            break
    assert best is not None
    tokens, days, lines = best
    text = _cloth(index, lines)
    _postcondition(index, text)
    weight, layers = _weigh(lines)
    notes = [] if tokens <= settings.budget else [_overweight(tokens, settings.budget, weight)]
    path, written = None, False
    if write:
        path, written = _store_cloth(store, settings, text, stamp=stamp, scribe=scribe_id, tokens=tokens)
    return Woven(store.name, text, tokens, settings.budget, days, tokens > settings.budget,
                 weight, layers, written, scan.parsed, calls, path, notes)  # fmt: skip


def _fold(
    line: IndexLine,
    entries: dict[str, catalog.Entry],
    age: dict[str, Any],
    triggers: dict[str, str],
    settings: MapSettings,
    today: dt.date,
    days: float,
) -> tuple[str, str]:
    """(layer, text) for one index line."""
    if line.kind != "entry":
        return ("grouped" if line.kind == "group" else "other"), line.text
    slug = line.slugs[0]
    entry = entries.get(slug)
    if entry is None:
        return "other", line.text
    if entry.type in settings.pinned_types:
        return "pinned", line.text
    if fresh(age[slug], today, days):
        return "fresh", line.text
    short = triggers.get(line.trigger)
    if not short or short == line.trigger:
        return "trigger", line.text
    folded = line.text[: line.text.rfind(line.trigger)] + short
    return "trigger", folded if parse_index(folded).lines[0].slugs == line.slugs else line.text


def _triggers(
    db: sqlite3.Connection,
    index: Index,
    entries: dict[str, catalog.Entry],
    settings: MapSettings,
    scribe: ModelConfig | None,
    max_calls: int,
) -> tuple[dict[str, str], int]:
    """Short form of every trigger that needs one, from the ledger first."""
    budget = settings.trigger_tokens
    wanted = {
        ln.trigger for ln in index.lines
        if ln.kind == "entry" and ln.slugs[0] in entries and estimate_tokens(ln.trigger) > budget
        and entries[ln.slugs[0]].type not in settings.pinned_types
    }  # fmt: skip
    method = f"model:{scribe.model}" if scribe else "mechanical"
    keys = {text: _ledger_key(text, budget, method) for text in wanted}
    known = catalog.ledger_get(db, keys.values())
    out: dict[str, str] = {}
    new: dict[str, str] = {}
    calls = 0
    for text in sorted(wanted):
        key = keys[text]
        if key in known:
            out[text] = known[key]
            continue
        short = None
        if scribe is not None and calls < max_calls:
            calls += 1
            short = _model_trigger(scribe, text, budget)
        if short is None:
            short = trim.mechanical(text, budget)
            key = _ledger_key(text, budget, "mechanical")
        out[text] = new[key] = short
    catalog.ledger_put(db, new)
    return out, calls


def _model_trigger(scribe: ModelConfig, text: str, budget: int) -> str | None:
    from kura.models import complete

    prompt = (
        f"Rewrite this memory index line as a recognition trigger of at most {budget} tokens. "
        "Keep proper nouns, numbers with their units, identifiers, ⚠️ markers and the "
        "conclusion. Add nothing the line does not say. Reply with the trigger only.\n\n"
        f"{text}"
    )
    reply = complete(scribe, "You write short recognition triggers for a memory index.", prompt)
    if reply is None:
        return None
    short = " ".join(reply.strip().strip('"').split())
    return short if trim.grounded(short, text) is None else None


def _ledger_key(text: str, budget: int, method: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{digest}|{budget}|{trim.VERSION}|{method}"


def _cloth(index: Index, lines: list[tuple[str, str]]) -> str:
    return "\n".join(text for _, text in lines) + ("\n" if lines else "")


def _postcondition(index: Index, text: str) -> None:
    before = [slug for line in index.lines for slug in line.slugs]
    after = [slug for line in parse_index(text).lines for slug in line.slugs]
    if before != after:
        lost = sorted(set(before) - set(after))
        invented = sorted(set(after) - set(before))
        raise StoreError(
            f"weave refused: the cloth would not name the same memories as MEMORY.md "
            f"(lost: {lost or 'none'}; invented: {invented or 'none'}; order changed: "
            f"{not lost and not invented}); nothing was written — report this as a bug"
        )


def _weigh(lines: list[tuple[str, str]]) -> tuple[dict[str, int], dict[str, int]]:
    weight: dict[str, int] = {}
    layers: dict[str, int] = {}
    for layer, text in lines:
        weight[layer] = weight.get(layer, 0) + estimate_tokens(text)
        layers[layer] = layers.get(layer, 0) + 1
    return weight, layers


def _overweight(tokens: int, budget: int, weight: dict[str, int]) -> str:
    parts = ", ".join(f"{layer} ~{n}" for layer, n in sorted(weight.items(), key=lambda kv: -kv[1]))
    return (
        f"no setting brings the map within budget (~{tokens} tokens, budget {budget}); kept the "
        f"smallest map without dropping a line. Weight by layer: {parts}"
    )


def _store_cloth(
    store: Store, settings: MapSettings, text: str, *, stamp: str, scribe: str, tokens: int
) -> tuple[Path | None, bool]:
    """Write the cloth (only if it changed, keeping a few backups) and its fingerprint."""
    path = _cloth_path(store, settings)
    try:
        with locked(store.root / STATE_DIR / "weave.lock"):
            old = path.read_text(encoding="utf-8") if path.exists() else None
            changed = old != text
            if changed:
                if old is not None:
                    _keep_backup(path, old)
                write_atomic(path, text.encode("utf-8"))
            meta = {
                "fingerprint": stamp,
                "scribe": scribe, "cloth": str(path), "tokens": tokens,
            }  # fmt: skip
            write_atomic(store.root / STATE_DIR / "map.json", json.dumps(meta, indent=1).encode())
    except (OSError, StoreError):
        return None, False  # a read-only store still weaves; it just cannot keep the cloth
    return path, changed


def _cloth_path(store: Store, settings: MapSettings) -> Path:
    if not settings.cloth_path:
        return store.root / STATE_DIR / "map.md"
    path = Path(settings.cloth_path).expanduser()
    path = path if path.is_absolute() else store.root / path
    try:
        rel = path.resolve().relative_to(store.root.resolve())
    except ValueError:
        return path
    if is_memory_name(rel) or rel.name == "MEMORY.md":
        raise StoreError(
            f"[prefill] cloth_path = {settings.cloth_path!r} would overwrite a memory or the index "
            f"of store '{store.name}'; put it under {STATE_DIR}/ or outside the store"
        )
    return path


def _keep_backup(path: Path, old: str) -> None:
    """Shift map.md.1 → .2 → .3 and put the old cloth in .1; map.md itself is only ever
    replaced atomically, so a reader never finds it missing."""
    for n in range(BACKUPS, 1, -1):
        older = path.with_name(f"{path.name}.{n - 1}")
        if older.exists():
            older.replace(path.with_name(f"{path.name}.{n}"))
    write_atomic(path.with_name(f"{path.name}.1"), old.encode("utf-8"))
