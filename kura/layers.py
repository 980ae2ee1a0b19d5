"""The weave's per-line decisions, and their cache keyed by the index's bytes.

Most of a weave's work depends only on MEMORY.md and on which memories exist and are
pinned: parsing the index, finding each entry's short trigger (ledger, trimmer, scribe)
and deciding which lines may fold. Only the choice between a line in full and folded
depends on ages and the budget. So that first part is kept in the state folder, keyed by
the index's digest, the settings, the scribe and the set of pinned and existing memories,
and a weave after an edit to one memory file re-does only the second part. The cache is
an optimisation: a mismatch of any key, a read error or ``force`` rebuilds it.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import sqlite3
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kura import catalog, trim
from kura.atomic import write_atomic
from kura.index import Index, IndexLine, parse_index
from kura.prefill import MapSettings, sector_map
from kura.tokens import estimate_tokens
from kura.workers import parallel_map

if TYPE_CHECKING:
    from kura.config import ModelConfig

CACHE = "layers.pickle"


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


class Layering(NamedTuple):
    lines: list[Layered]
    sectors: str
    calls: int
    capped: bool


def layering(
    state: Path,
    db: sqlite3.Connection,
    data: bytes,
    entries: dict[str, catalog.Entry],
    settings: MapSettings,
    *,
    scribe: ModelConfig | None,
    max_calls: int,
    force: bool,
) -> Layering:
    """The index's lines, layered, from the cache when nothing it depends on changed."""
    key = _key(data, entries, settings, scribe)
    cached = None if force else _load(state / CACHE, key)
    if cached is not None and not (cached.capped and scribe is not None and max_calls > 0):
        return cached
    index = parse_index(data.decode("utf-8", errors="replace"))
    triggers, calls, capped = _triggers(db, index, entries, settings, scribe, max_calls)
    lines = [_layer(line, entries, triggers, settings) for line in index.lines]
    fresh = Layering(lines, sector_map(index), calls, capped)
    _save(state / CACHE, key, fresh)
    return fresh


def _key(
    data: bytes, entries: dict[str, catalog.Entry], settings: MapSettings, scribe: ModelConfig | None
) -> str:
    digest = hashlib.sha256(data)
    pinned = settings.pinned_types
    digest.update("".join(f"{slug}\0{e.type in pinned}\n" for slug, e in entries.items()).encode())
    model = f"{scribe.url}|{scribe.model}" if scribe else ""
    digest.update(f"{settings.key()}\n{model}\n{trim.VERSION}".encode())
    return digest.hexdigest()


def _load(path: Path, key: str) -> Layering | None:
    try:
        stored = pickle.loads(path.read_bytes())
        if stored["key"] != key:
            return None
        lines = [Layered._make(row) for row in stored["lines"]]
        return Layering(lines, stored["sectors"], 0, bool(stored["capped"]))
    except (OSError, ValueError, KeyError, TypeError, EOFError, pickle.UnpicklingError):
        return None


def _save(path: Path, key: str, layering: Layering) -> None:
    rows = [tuple(line) for line in layering.lines]
    blob = {"key": key, "lines": rows, "sectors": layering.sectors, "capped": layering.capped}
    with contextlib.suppress(Exception):  # a cache that cannot be written is only slower
        write_atomic(path, pickle.dumps(blob, protocol=pickle.HIGHEST_PROTOCOL))


def _layer(
    line: IndexLine, entries: dict[str, catalog.Entry], triggers: dict[str, str], settings: MapSettings
) -> Layered:
    full = estimate_tokens(line.text)
    bare = estimate_tokens(line.head) if line.kind == "entry" and line.head else full
    if line.kind != "entry":
        layer = "grouped" if line.kind == "group" else "other"
        return Layered(layer, line.text, line.text, "", line.kind, line.head, line.slugs, (full, full, bare))
    slug = line.slugs[0]
    entry = entries.get(slug)
    if entry is None or entry.type in settings.pinned_types:
        layer = "other" if entry is None else "pinned"
        return Layered(
            layer, line.text, line.text, slug, line.kind, line.head, line.slugs, (full, full, bare)
        )
    short = triggers.get(line.trigger)
    folded = line.text
    if short and short != line.trigger and not marked(line.text) and not marked(short):
        folded = line.text[: line.text.rfind(line.trigger)] + short
    cost = (full, estimate_tokens(folded), bare)
    return Layered("trigger", line.text, folded, slug, line.kind, line.head, line.slugs, cost)


def marked(text: str) -> bool:
    """Whether a line could open or close a comment or fence (or carry a stray CR)."""
    return "<!--" in text or "-->" in text or "```" in text or "~~~" in text or "\r" in text


def _triggers(
    db: sqlite3.Connection,
    index: Index,
    entries: dict[str, catalog.Entry],
    settings: MapSettings,
    scribe: ModelConfig | None,
    max_calls: int,
) -> tuple[dict[str, str], int, bool]:
    """Short form of every trigger that needs one: the scribe's (cached, grounded) where
    there is a scribe, else the trimmer's (cached; a cold start trims on every core)."""
    budget = settings.trigger_tokens
    wanted = sorted({
        ln.trigger for ln in index.lines
        if ln.kind == "entry" and ln.slugs[0] in entries and estimate_tokens(ln.trigger) > budget
        and entries[ln.slugs[0]].type not in settings.pinned_types
    })  # fmt: skip
    mech = {text: _ledger_key(text, budget, "mechanical") for text in wanted}
    model = {text: _ledger_key(text, budget, f"model:{scribe.model}") for text in wanted} if scribe else {}
    known = catalog.ledger_get(db, [*mech.values(), *model.values()])
    out: dict[str, str] = {}
    new: dict[str, str] = {}
    calls = 0
    capped = False
    for text in wanted if scribe is not None else ():
        if model[text] in known:
            out[text] = known[model[text]]
        elif calls >= max_calls:
            capped = True
        else:
            calls += 1
            reply = _model_trigger(scribe, text, budget)  # type: ignore[arg-type]
            if reply is not None:
                out[text] = new[model[text]] = reply
    rest = [text for text in wanted if text not in out]
    todo = [text for text in rest if mech[text] not in known]
    for text, short in zip(todo, parallel_map(partial(_trim_all, budget), todo), strict=True):
        known[mech[text]] = new[mech[text]] = short
    out.update((text, known[mech[text]]) for text in rest)
    catalog.ledger_put(db, new)
    return out, calls, capped


def _trim_all(budget: int, texts: list[str]) -> list[str]:
    return [trim.mechanical(text, budget) for text in texts]


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
