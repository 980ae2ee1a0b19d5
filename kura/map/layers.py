"""The weave's per-line decisions, and their cache keyed by the index's bytes.

Most of a weave's work depends only on MEMORY.md and on which memories exist and are
pinned: parsing the index, finding each entry's short trigger (ledger, trimmer, scribe)
and deciding which lines may fold. Only the choice between a line in full and folded
depends on ages and the budget. So that first part is kept in the state folder, keyed by
the index's digest, the settings, the scribe and the set of pinned and existing memories,
and a weave after an edit to one memory file re-does only the second part. The cache is
an optimisation: a mismatch of any key, a read error or ``force`` rebuilds it.

The state folder may come from someone else's clone, so the cache is plain JSON (never a
format that can run code), checked field by field on read, and bound to the index it
describes twice over: its key holds the index file's identity on this disk (inode and
times, which no clone reproduces) besides its digest, and its lines must be the index's
lines, byte for byte. Anything else is rebuilt, and said on stderr.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kura.errors import KuraError
from kura.files.memory_index import Index, IndexLine, normalize, parse_index
from kura.map import layer_cache
from kura.map.ceiling import sector_map
from kura.map.layer_cache import Layered as Layered
from kura.map_settings import MapSettings
from kura.store import catalog
from kura.store import state as st
from kura.store.atomic import write_atomic
from kura.store.parallel import parallel_map
from kura.text import triggers
from kura.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.config import ModelConfig

CACHE = "layers.json"
VERSION = 3  # 2: no text column (the index's own lines); 3: columns packed (kura.map.layer_cache)


class Layering(NamedTuple):
    lines: list[Layered]
    sectors: str
    calls: int
    capped: bool
    unsaved: str = ""  # why the cache could not be written ("" when it was, or was not tried)


def layering(
    state: Path | None,
    db: sqlite3.Connection,
    data: bytes,
    entries: dict[str, catalog.Entry],
    settings: MapSettings,
    *,
    scribe: ModelConfig | None,
    max_calls: int,
    force: bool,
    seen: str = "",
    read: tuple[str, str] | None = None,
) -> Layering:
    """The index's lines, layered, from the cache when nothing it depends on changed.
    ``seen``: the index file's stat stamp, taken before ``data`` was read; ``state``: the
    state folder (None: no cache at all); ``read``: ``data`` decoded (with errors replaced)
    and its sha256, when the caller has them."""
    text, digest = read if read is not None else (data.decode("utf-8", errors="replace"), "")
    key = _key(digest or hashlib.sha256(data).hexdigest(), entries, settings, scribe, seen)
    cached = None if force or state is None else _load(state / CACHE, key, text, entries)
    if cached is not None and not (cached.capped and scribe is not None and max_calls > 0):
        return cached
    index = parse_index(text)
    triggers, calls, capped = _triggers(db, index, entries, settings, scribe, max_calls)
    layered = [_layer(line, entries, triggers, settings) for line in index.lines]
    lines = verbatim(layered, settings.verbatim_after)
    fresh = Layering(lines, sector_map(index), calls, capped)
    # a cached line's text is the index's line: saved only when that gives back these lines
    if state is not None and [line.text for line in lines] == _written(text):
        fresh = fresh._replace(unsaved=_save(state / CACHE, key, fresh))
    return fresh


def _key(
    index_sha: str,
    entries: dict[str, catalog.Entry],
    settings: MapSettings,
    scribe: ModelConfig | None,
    seen: str,
) -> str:
    """Binds the cache to the index (its sha256), each memory and whether it is pinned,
    the settings, the scribe and the index file's identity. Made in C passes: 20,000
    memories a weave."""
    digest = hashlib.sha256(f"{index_sha}\n".encode())
    pinned = map(settings.pinned_types.__contains__, map(attrgetter("type"), entries.values()))
    digest.update("\0".join(entries).encode("utf-8", "surrogateescape"))
    digest.update(bytes(pinned))
    model = f"{scribe.url}|{scribe.model}" if scribe else ""
    digest.update(f"\n{settings.key()}\n{model}\n{triggers.VERSION}\n{seen}".encode())
    return digest.hexdigest()


_THEN = "the weave lays out the index again"


def _load(path: Path, key: str, text: str, entries: dict[str, catalog.Entry]) -> Layering | None:
    stored = st.read_json(path, then=_THEN)
    if stored is None:
        return None
    columns, sectors, capped = stored.get("columns"), stored.get("sectors"), stored.get("capped")
    if (
        not isinstance(stored.get("key"), str)
        or not isinstance(columns, dict)
        or not isinstance(sectors, str)
    ):
        st.damaged(path, "holds fields of the wrong type", _THEN)
        return None
    if stored["key"] != key or stored.get("version") != VERSION or not isinstance(capped, bool):
        return None  # made for another index, other memories or settings: not damage, just stale
    lines = layer_cache.unpack(columns, _written(text), entries.keys())
    if lines is None:
        st.damaged(path, "does not describe the index it is keyed to", _THEN)
        return None
    return Layering(lines, sectors, 0, capped)


def _written(decoded: str) -> list[str]:
    """The index's lines (``decoded``: its bytes decoded), as ``parse_index`` splits them."""
    text, _, _ = normalize(decoded)
    return text.split("\n")[:-1] if text.endswith("\n") else ([] if text == "" else text.split("\n"))


def _save(path: Path, key: str, layering: Layering) -> str:
    """Write the cache; "" or why it could not be (a cache that is not written is only slower)."""
    columns = layer_cache.pack(layering.lines)
    if columns is None:
        return ""  # a line no index holds (a newline inside): not cached, only woven again
    blob = {"version": VERSION, "key": key, "columns": columns, "sectors": layering.sectors,
            "capped": layering.capped}  # fmt: skip
    try:
        data = json.dumps(blob, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        write_atomic(path, data, durable=False)  # derived: a torn file fails to parse, and is rebuilt
    except (OSError, KuraError) as err:
        cause = err.__cause__ if isinstance(err.__cause__, OSError) else err
        why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(err)
        return (
            f"the layer cache {path} could not be saved ({why}); every weave re-layers the index until it can"
        )
    return ""


def _layer(
    line: IndexLine, entries: dict[str, catalog.Entry], triggers: dict[str, str], settings: MapSettings
) -> Layered:
    full = estimate_tokens(line.text)
    bare = estimate_tokens(line.head) if line.kind == "entry" and line.head else full
    if line.kind != "entry":
        layer = "grouped" if line.kind == "group" else "other"
        return Layered(layer=layer, text=line.text, short=line.text, slug="", kind=line.kind, head=line.head,
                       slugs=line.slugs, cost=(full, full, bare))  # fmt: skip
    slug = line.slugs[0]
    entry = entries.get(slug)
    if entry is None or entry.type in settings.pinned_types:
        layer = "other" if entry is None else "pinned"
        return Layered(layer=layer, text=line.text, short=line.text, slug=slug, kind=line.kind,
                       head=line.head, slugs=line.slugs, cost=(full, full, bare))  # fmt: skip
    short = triggers.get(line.trigger)
    folded = line.text
    if short and short != line.trigger and not marked(line.text) and not marked(short):
        folded = line.text[: line.text.rfind(line.trigger)] + short
    cost = (full, estimate_tokens(folded), bare)
    return Layered(layer="trigger", text=line.text, short=folded, slug=slug, kind=line.kind, head=line.head,
                   slugs=line.slugs, cost=cost)  # fmt: skip


def verbatim(lines: list[Layered], heading: str) -> list[Layered]:
    """``[prefill] verbatim_after``: from the index line ``heading`` on (an appendix, say),
    every line goes into the map as written, never squeezed to a trigger."""
    start = next((i for i, line in enumerate(lines) if heading and line.text.strip() == heading.strip()), -1)
    if start < 0:
        return lines
    return lines[:start] + [_as_written(line) for line in lines[start:]]


def _as_written(line: Layered) -> Layered:
    if line.layer != "trigger":
        return line
    return line._replace(layer="other", short=line.text, cost=(line.cost[0],) * 3)


def marked(text: str) -> bool:
    """Whether a line could open or close a comment or fence (or carry a stray CR). The
    characters first: one of them absent is a single fast scan, and most text has none."""
    if "<" not in text and ">" not in text and "`" not in text and "~" not in text and "\r" not in text:
        return False
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
    source = {key: text for keys in (mech, model) for text, key in keys.items()}
    # the ledger lives in the state folder: a short form is taken only if it says nothing its line does not
    known = {
        key: short for key, short in catalog.ledger_get(db, list(source)).items()
        if isinstance(short, str) and triggers.grounded(short, source[key]) is None
    }  # fmt: skip
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
    return [triggers.mechanical(text, budget) for text in texts]


def _model_trigger(scribe: ModelConfig, text: str, budget: int) -> str | None:
    prompt = (
        f"Rewrite this memory index line as a recognition trigger of at most {budget} tokens. "
        "Keep proper nouns, numbers with their units, identifiers, ⚠️ markers and the "
        "conclusion. Add nothing the line does not say. Reply with the trigger only.\n\n"
        f"{text}"
    )
    from kura.llm import complete  # here: a weave without a scribe loads no model client

    reply = complete(scribe, "You write short recognition triggers for a memory index.", prompt)
    if reply is None:
        return None
    short = " ".join(reply.strip().strip('"').split())
    return short if triggers.grounded(short, text) is None else None


def _ledger_key(text: str, budget: int, method: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{digest}|{budget}|{triggers.VERSION}|{method}"
