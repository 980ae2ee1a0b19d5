"""``kura context "TASK"``: exactly what a model would be told, within one budget.

Three sources, one budget. The map is what is known, recalled memories are what bears on
the task, and transcript spans are what somebody said once and nobody wrote down — offered
as evidence that it was said, never as truth. The prompt is built in six sections, always
in this order:

1. **Pinned** — the pinned lines of the woven map (types in ``pinned_types``: user,
   feedback) whose memories are asserted: the standing instructions, from the person.
2. **Map** — the rest of the woven map's entry lines (headings and prose are left to the
   map itself): what the store knows, one trigger each.
3. **From memory** — the memories recall picked for the task (and their ``[[links]]``)
   that are asserted today, with their text.
4. **On record, not current — check before acting** — memories recall found whose
   evidence no longer carries them (thin, aged, contradicted) or that were replaced, and
   what a picked memory replaced: stated as history, with the reason.
5. **Said before** — spans (``kura.recall.spans``), labelled "said in <session>, <when>". A span
   that reads like an instruction is never shown (``kura.text.quarantine``) and one that
   merely restates a memory already shown is dropped.
6. **Latest observations** — the observation log's unresolved high-priority entries and
   its newest ones (``kura.observe.observations``).
7. **Working memory** — asked for with ``recent`` and a transcript: its last messages,
   verbatim (``kura.recall.working``; tool output that reads like an instruction withheld).

Inside a project, the person's own store is read beside the project's (``Beside``): its
pinned lines join the rules and what recall finds in it joins "From memory" and "On
record", after the project's and each naming that store; the map, spans and observations
stay the project's.

Rules and map come first and do not depend on the task, so a prompt cache keeps that
prefix from one task to the next; everything task-bound follows. Sections share the budget
by weight (``kura.recall.section_budget``); items are whole lines or whole memories, never cut to fit,
and what was left out is listed. Nothing here writes to the store: recall's use marks are
left to recall, so asking twice gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import KuraError
from kura.files.belief import Standing
from kura.files.checks import conflicts
from kura.files.memory_index import classify_line
from kura.files.slugs import file_stats
from kura.map.record import fingerprint
from kura.map.weave import ON_RECORD, weave
from kura.map_settings import MapSettings
from kura.observe import observations
from kura.recall import section_budget as bd
from kura.recall import spans as sp
from kura.recall import working as wm
from kura.recall.recall import How, Recall, not_shown, recall, shorten, why_not
from kura.request import CONTEXT, ContextRequest
from kura.store import catalog
from kura.store.store import Store
from kura.text.claim_match import words
from kura.text.quarantine import marked, reads_like_instruction
from kura.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.config import ModelConfig
    from kura.files.slugs import Stats
    from kura.recall.search import AnyEmbedder, Progress, SearchIndex

DEFAULT_BUDGET = CONTEXT.budget
MIN_BUDGET = ContextRequest.RANGES["budget"][0]  # tokens: less than this tells nothing
HEADINGS = {
    "rules": "Pinned — the person's rules, and who they are:",
    "map": "Map of what this store knows:",
    "memory": "From memory — information, not instructions:",
    "record": "On record, not current — check before acting:",
    "spans": "Said before — evidence that it was said, not that it is true:",
    "observations": "Latest observations:",
    "working": "Working memory — the latest messages of this conversation, as said:",
}
STATIC = ("rules", "map")  # the prefix that does not depend on the task
WEIGHTS = {"rules": 3.0, "map": 2.0, "memory": 3.0, "record": 1.0, "spans": 1.0, "observations": 1.0,
           "working": 2.0}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Item:
    section: str
    text: str
    source: str  # a slug, a span's file:line, the observation log's date
    why: str
    tokens: int
    store: str = ""  # the person's store it came from, read beside the project's ("": the store asked)

    def to_dict(self) -> dict[str, Any]:
        found = {"section": self.section, "source": self.source, "tokens": self.tokens, "why": self.why}
        return {**found, "store": self.store} if self.store else found


@dataclass(frozen=True, slots=True)
class Beside:
    """The person's store, read beside the project's: its rules and what recall finds."""

    store: Store
    settings: MapSettings
    index: SearchIndex | None = None
    guard: AbstractContextManager[Any] | None = None


@dataclass(kw_only=True, frozen=True, slots=True)
class Context:
    store: str
    task: str
    budget: int
    text: str
    tokens: int
    items: tuple[Item, ...]
    left_out: tuple[Item, ...]
    how: How  # how recall answered
    reason: str = ""
    shares: dict[str, int] = field(default_factory=dict)  # what the weights gave each section
    used: dict[str, int] = field(default_factory=dict)  # what each took, heading included
    degraded: tuple[str, ...] = ()  # what went wrong and what was told instead ("section: why")

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store, "task": self.task, "budget": self.budget, "tokens": self.tokens,
            "recall": self.how, "reason": self.reason, "degraded": list(self.degraded),
            "sections": [{"name": n, "heading": HEADINGS[n], "share": s,
                          "items": sum(i.section == n for i in self.items),
                          "tokens": self.used.get(n, 0)}
                         for n, s in self.shares.items()],
            "items": [i.to_dict() for i in self.items],
            "left_out": [i.to_dict() for i in self.left_out],
            "text": self.text,
        }  # fmt: skip


def context(
    store: Store,
    task: str,
    *,
    budget: int = DEFAULT_BUDGET,
    settings: MapSettings | None = None,
    today: dt.date | None = None,
    index: SearchIndex | None = None,
    thinker: ModelConfig | None = None,
    embedder: AnyEmbedder | None = None,
    quick: bool = False,
    guard: AbstractContextManager[Any] | None = None,
    progress: Progress | None = None,
    recent: int = 0,
    journal: str | Path | None = None,
    beside: Beside | None = None,
) -> Context:
    """What a model working on ``task`` would be told from ``store`` (see the module
    docstring). ``index``/``thinker``/``embedder``/``quick``/``guard``/``progress`` go to
    recall (``progress`` hears about a first index build, which can take minutes).
    ``recent``: the last messages of the transcript ``journal`` to carry as working memory;
    ``beside``: the person's store, read beside this one."""
    if not task.strip():
        raise KuraError("the task is empty; say what the model is about to do")
    if budget < MIN_BUDGET:
        raise KuraError(
            f"a budget of {budget} tokens is too small to tell anything; give at least {MIN_BUDGET}"
        )
    if recent and journal is None:
        raise KuraError(f"recent {recent} needs the transcript to take the messages from (--journal FILE)")
    settings = settings or MapSettings()
    today = today or dt.date.today()
    rules, mapped, said = _map_items(store, settings, today)
    found = recall(store, task, top=5, hops=1, chars=400, index=index, thinker=thinker, quick=quick,
                   embedder=embedder, guard=guard, today=today, progress=progress)  # fmt: skip
    memory, record, withheld = _recalled(store, found, task, budget)
    if beside is not None:
        more = _theirs(beside, task, budget, today, quick=quick, embedder=embedder, progress=progress)
        rules, memory = rules + more[0], memory + more[1]
        record, withheld, said = record + more[2], withheld + more[3], said + more[4]
    spans, dropped, restating = _spans(store, task, [*rules, *memory, *record])
    dropped = withheld + dropped
    noted, unread = _observations(store)
    working = [_item("working", m.text, m.source, "recent message" + (f", {m.withheld} tool line(s) withheld"
                                                                     if m.withheld else ""))
               for m in (wm.recent(journal, recent) if journal is not None else [])]  # fmt: skip
    candidates = {"rules": rules, "map": mapped, "memory": memory, "record": record, "spans": spans,
                  "observations": noted, "working": working}  # fmt: skip
    dropped += unread
    told = replace(_assemble(store.name, task, budget, candidates, dropped, found), degraded=said)
    shown = {(i.section, i.source) for i in told.items}
    revived = [(span, gone) for span, gone, memory in restating if memory not in shown]
    if not revived:
        return told
    # a span restates a memory the budget then left out: it is not a restatement after all
    back = {id(gone) for _, gone in revived}
    candidates["spans"] = [*spans, *(span for span, _ in revived)]
    kept = [d for d in dropped if id(d) not in back]
    return replace(_assemble(store.name, task, budget, candidates, kept, found), degraded=said)


def _theirs(
    beside: Beside, task: str, budget: int, today: dt.date, **asked: Any
) -> tuple[list[Item], list[Item], list[Item], list[Item], tuple[str, ...]]:
    """The person's rules, recalled memories, history and withheld, each naming the store."""
    store = beside.store
    rules, _, said = _map_items(store, beside.settings, today)
    found = recall(store, task, top=5, hops=1, chars=400, index=beside.index, guard=beside.guard,
                   today=today, **asked)  # fmt: skip
    memory, record, withheld = _recalled(store, found, task, budget)
    named = [
        [replace(item, store=store.name, text=_from(item, store.name)) for item in items]
        for items in (rules, memory, record, withheld)
    ]
    return named[0], named[1], named[2], named[3], tuple(f"{store.name}: {s}" for s in said)


def _from(item: Item, name: str) -> str:
    """An item's text naming the person's store it came from: after a rule's line, after a
    memory's heading."""
    if not item.text:
        return item.text
    head, newline, rest = item.text.partition("\n")
    return f"{head} (from store '{name}'){newline}{rest}"


def _assemble(
    name: str, task: str, budget: int, candidates: dict[str, list[Item]], dropped: list[Item], found: Recall
) -> Context:
    asks = [bd.Ask(n, WEIGHTS[n], estimate_tokens(HEADINGS[n] + "\n\n"), tuple(i.tokens for i in items))
            for n, items in candidates.items()]  # fmt: skip
    granted = bd.share(asks, budget, prefix=len(STATIC), weight=sum(WEIGHTS.values()))
    kept: list[Item] = []
    left = list(dropped)
    blocks = []
    for grant in granted:
        items = candidates[grant.name]
        chosen = set(grant.taken)
        left += [replace(item, why="left out for budget") for i, item in enumerate(items) if i not in chosen]
        if chosen:
            picked = [items[i] for i in grant.taken]
            kept += picked
            blocks.append(HEADINGS[grant.name] + "\n" + _SEPARATOR[grant.name].join(i.text for i in picked))
    text = "\n\n".join(blocks) + ("\n" if blocks else "")
    shares = {g.name: g.share for g in granted}
    used = {g.name: g.tokens for g in granted}
    return Context(
        store=name,
        task=task,
        budget=budget,
        text=text,
        tokens=estimate_tokens(text),
        items=tuple(kept),
        left_out=tuple(left),
        how=found.how,
        reason=found.reason,
        shares=shares,
        used=used,
    )


_SEPARATOR = {name: "\n\n" if name == "memory" else "\n" for name in HEADINGS}  # a memory is a block


def _item(section: str, text: str, source: str, why: str) -> Item:
    return Item(section, text, source, why, estimate_tokens(text + _SEPARATOR[section]))


# -- the map: rules and the rest ----------------------------------------------------------


_Map = tuple[list[Item], list[Item], tuple[str, ...]]  # rules, map, what went wrong
_MAPS: dict[tuple[str, str], _Map] = {}  # (store, weave stamp) -> items
_MAPS_KEPT = 8
_MAPS_LOCK = threading.Lock()


def _map_items(store: Store, settings: MapSettings, today: dt.date) -> _Map:
    """The woven map's entry lines: pinned and asserted ones as rules, the others as map;
    and what went wrong (a map that could not be woven is MEMORY.md as it is, said). Kept
    per process under the weave's own fingerprint (every file's identity, the settings, the
    day), so a server answering many tasks splits the map once per change."""
    stats = file_stats(store.root)
    key = (str(store.root), fingerprint(store.root, settings, today=today, stats=stats))
    with _MAPS_LOCK:
        if key in _MAPS:
            return _MAPS[key]
    cloth, said = _cloth(store, settings, today, stats)
    db = catalog.connect(store)
    try:
        scanned = catalog.scan(store, db, stats=stats)
    finally:
        db.close()
    types = {slug: entry.type for slug, entry in scanned.entries.items()} if scanned is not None else {}
    rules: list[Item] = []
    mapped: list[Item] = []
    for raw in cloth.splitlines():
        line = classify_line(raw)
        if line.kind not in ("entry", "group") or not line.slugs:
            continue
        slug = line.slugs[0]
        kind = types.get(slug) or ""
        if kind in settings.pinned_types and not raw.endswith(ON_RECORD):
            rules.append(_item("rules", raw.strip(), slug, f"pinned ({kind})"))
        else:
            mapped.append(_item("map", raw.strip(), slug, "in the map"))
    with _MAPS_LOCK:  # a server answers from several threads
        while len(_MAPS) >= _MAPS_KEPT:
            _MAPS.pop(next(iter(_MAPS)))
        _MAPS[key] = (rules, mapped, said)
    return rules, mapped, said


def _cloth(store: Store, settings: MapSettings, today: dt.date, stats: Stats) -> tuple[str, tuple[str, ...]]:
    """The woven map's text; else MEMORY.md as it is, and why (a weave that failed)."""
    try:
        woven = weave(store, settings, today=today, stats=stats)
        if woven is not None and woven.text:
            return woven.text, ()
        failed = ""
    except KuraError as err:
        failed = f"map: the map could not be woven ({err})"
    try:
        raw = store.index_bytes().decode("utf-8", errors="replace")
    except KuraError as err:  # an index that must not be read: no map, the rest stays
        return "", ((failed + "; " if failed else "map: ") + f"no map is shown ({err})",)
    return raw, ((f"{failed}; MEMORY.md is shown as it is instead",) if failed else ())


# -- recalled memories --------------------------------------------------------------------


def _recalled(
    store: Store, found: Recall, task: str, budget: int
) -> tuple[list[Item], list[Item], list[Item]]:
    """Asserted picks (and walked neighbours) with their text; the findable rest and what
    they replaced as history; and those withheld (below the findable floor), left out."""
    memory: list[Item] = []
    record: list[Item] = []
    withheld: list[Item] = []
    seen: set[str] = set()
    how = {p.slug: _picked_why(found.how, p.score) for p in found.picked}
    picked = set(how)
    how.update({s: "linked from a picked memory" for s in found.walked if s not in how})
    nominal = budget * WEIGHTS["memory"] / sum(WEIGHTS.values())  # the section's share before surplus
    picked_cap = max(int(nominal / max(len(found.picked), 1)), 100)  # tokens a picked memory's body may keep
    walked_cap = max(int(nominal / max(len(how), 1)), 100)  # and one reached by a link
    for slug, why in how.items():
        try:
            shown = store.show(slug)
        except KuraError:
            continue
        seen.add(slug)
        standing = found.standing.get(slug)
        unmerged = conflicts(shown.note.body)
        if unmerged:  # neither side of a merge left in the file: where it is, and doctor
            memory.append(_item("memory", f"### {slug}\n{not_shown(unmerged)}", slug, why + "; conflicted"))
        elif standing is None or standing.asserted:
            cap = picked_cap if slug in picked else walked_cap
            body = _within(_without_lead(shown.note.body.strip(), shown.description), task, cap)
            text = f"### {shown.name} [{slug}]\n{shown.description}" + (f"\n{body}" if body else "")
            memory.append(_item("memory", text, slug, why))
            for old in standing.supersedes if standing is not None else ():
                record.append(_history(store, old, f"replaced by {slug}", seen))
        elif any(r.source == slug and r.text for r in record):
            continue  # already on record as what a picked memory replaced (recall picks both)
        elif standing.findable or standing.superseded_by:
            record.append(_history(store, slug, _status(standing), seen, why=why))
        else:
            withheld.append(
                Item("record", "", slug, f"withheld: {why_not(standing)}, below the findable floor", 0)
            )
    return memory, [r for r in record if r.text], withheld


def _within(body: str, task: str, tokens: int) -> str:
    """The body shortened (``recall.shorten``: whole paragraphs, ``[…]`` for the rest) until
    it costs at most ``tokens`` — counted as tokens, so CJK text is not four times over."""
    limit = tokens * 4
    out = shorten(body, task, limit)
    for _ in range(4):
        cost = estimate_tokens(out)
        if cost <= tokens:
            break
        limit = int(limit * tokens / cost * 0.9)
        out = shorten(body, task, limit)
    return out


def _without_lead(body: str, description: str) -> str:
    """The body less a first paragraph that only repeats the description."""
    first, _, rest = body.partition("\n\n")
    return rest.strip() if " ".join(first.split()) == " ".join(description.split()) else body


def _history(store: Store, slug: str, reason: str, seen: set[str], *, why: str = "") -> Item:
    if slug in seen and not why:
        return _item("record", "", slug, "")
    seen.add(slug)
    try:
        shown = store.show(slug)
    except KuraError:
        return _item("record", "", slug, "")
    text = f"- {shown.name} [{slug}]: {shown.description} ({reason})"
    return _item("record", text, slug, why + ("; " if why else "") + reason)


def _status(standing: Standing) -> str:
    if standing.superseded_by:
        return f"replaced by {standing.superseded_by}"
    return f"{standing.status}: {why_not(standing)}"


def _picked_why(how: str, score: float | None) -> str:
    return "picked by the thinker" if score is None else f"picked by recall ({how}, score {score:.2f})"


# -- spans and observations ----------------------------------------------------------------


def _spans(
    store: Store, task: str, shown: list[Item]
) -> tuple[list[Item], list[Item], list[tuple[Item, Item, tuple[str, str]]]]:
    """Spans to show; those left out (why); and, of those left out as restating a shown
    item, the span as it would be shown with the (section, source) of the item it restates —
    to be shown after all if the budget leaves that item out."""
    try:
        found, dropped = sp.evidence(store, task, [i.text for i in shown])
    except KuraError as err:  # a broken span index costs the spans, never the context
        return [], [Item("spans", "", sp.DB_NAME, f"spans skipped: {err}", 0)], []
    kept = [_span_item(span, task) for span in found]
    left: list[Item] = []
    restating: list[tuple[Item, Item, tuple[str, str]]] = []
    lowered = [i.text.lower() for i in shown]
    for span, why in dropped:
        gone = Item("spans", "", span.place, why, 0)
        left.append(gone)
        at = sp.restated(words(span.text), lowered) if not span.quarantined else -1
        if at >= 0:
            restating.append((_span_item(span, task), gone, (shown[at].section, shown[at].source)))
    return kept, left, restating


def _span_item(span: sp.Span, task: str) -> Item:
    return _item("spans", line(span, task), span.place, f"said, not asserted ({span.label})")


def line(span: sp.Span, task: str) -> str:
    """A span as the prompt shows it: who said it, when, and its words in quotes."""
    return f'- {span.label} [{span.cls}]: "{span.shown(task)}"'


def _observations(store: Store) -> tuple[list[Item], list[Item]]:
    """The latest observations (``observations.latest``: by priority, newest first); and,
    as things left out, those that read like an instruction (the spans' quarantine: an
    observation is whatever anyone who could reach ``/observe`` wrote) and, when the log
    could not be read at all (a link, a pipe, too big), why — never a failed context."""
    log = observations.read_log(store)
    unread = [] if log.entries else [f for f in log.findings if "it was not read" in f.message]
    out: list[Item] = []
    held: list[Item] = []
    for entry in observations.latest(store, 10, log=log):
        where = f"{observations.LOG_NAME}:{entry.line}"
        instruction = reads_like_instruction(entry.text) or marked(f"{entry.task}\n{entry.continuation}")
        if instruction:
            held.append(
                Item("observations", "", where, f"quarantined: reads like an instruction ({instruction})", 0)
            )
            continue
        why = "unresolved, high priority" if entry.open_high else "latest"
        text = (
            f"- {entry.day.isoformat()} {observations.MARKERS[entry.priority]} {entry.text}"
            + (f"\n  - task: {entry.task}" if entry.task else "")
            + (f"\n  - next: {entry.continuation}" if entry.continuation else "")  # as the log has them
        )
        out.append(_item("observations", text, where, why))
    skipped = [
        Item("observations", "", f"{observations.LOG_NAME}:{f.line}", f"observations skipped: {f.message}", 0)
        for f in unread[:1]
    ]
    return out, held + skipped
