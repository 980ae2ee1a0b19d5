"""``kura recall`` without typer: the command agents and hooks call on every question.

typer's argument parsing imports pydantic, about 0.13 s, which is a quarter of the time a
cold recall may take; so ``kura.cli.entry`` hands plain recall command lines straight to
``recall_command`` and the typer command (``kura.cli.look``) calls the same function for
everything else — one implementation, the same output either way.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from dataclasses import dataclass
from typing import Any

from kura.cli.exit import error_exit
from kura.config import Config, StoreConfig, load_config
from kura.errors import InvalidRequest, KuraError
from kura.life.usage import mark as mark_used
from kura.recall import index_job
from kura.recall.embed import preload
from kura.recall.index_build import HANDED_ON, NOW, ONE_SHOT, Budget, env_budget
from kura.recall.joint import Joint, joined
from kura.recall.recall import Pick, Recall, recall
from kura.recall.search import remote_embedder
from kura.request import RECALL, RecallRequest
from kura.store.state import folder
from kura.text.secrets import redact


def give_back_freed_blocks() -> None:
    """Have glibc return every block of 128 KiB or more to the system when it is freed
    (a fixed ``M_MMAP_THRESHOLD``), for the rest of this one-question process. By default
    the threshold rises to the size of the largest block freed, and blocks below it are
    kept for reuse: a run of the quick embedder makes and frees float32 copies of the model's
    weights (~90 MB, 2.4 MB apiece), so without this each run leaves ~14 MB behind, under
    the next run's own ~90 MB (measured: a cold recall's peak 206 → 190 MB at 500 memories).
    Nothing happens off glibc (a C library without ``mallopt``, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, 128 * 1024)


_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


class ProgressLine:
    """``stage [####  ] done/total  rate/s  ETA m:ss`` redrawn in place on stderr, only when
    stderr is a terminal and the work is big enough to wait for; scripts and logs see nothing."""

    def __init__(self, *, least: int = 200) -> None:
        self.least = least
        self.live = sys.stderr.isatty()
        self.drawn = False
        self.began: dict[str, tuple[float, int]] = {}  # stage: when and at what count it was first heard

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.live or total < self.least:
            return
        import time

        width = 30
        bar = "#" * (width * done // max(total, 1))
        began, first = self.began.setdefault(stage, (time.monotonic(), done))
        rate = (done - first) / max(time.monotonic() - began, 1e-6)
        left = int((total - done) / rate) if rate > 0 else None
        eta = "" if left is None or done >= total else f"  {rate:,.0f}/s  ETA {left // 60}:{left % 60:02d}"
        sys.stderr.write(f"\rkura: {stage:<9} [{bar:<{width}}] {done}/{total}{eta}\x1b[K")
        self.drawn = done < total
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            self.drawn = False


def recall_command(
    chosen: dict[str, str],
    question: str,
    *,
    top: int = RECALL.top,
    hops: int = RECALL.hops,
    chars: int = RECALL.chars,
    explain: bool = False,
    no_model: bool = False,
    as_json: bool = False,
    everything: bool = False,
    spans: bool = False,
    at: str = "",
    thread: str = "",
) -> int:
    """Print what the store recalls about ``question`` (and, inside a project, what the
    person's store beside it recalls, each memory naming its store; ``thread``: what that
    thread's items hold instead); the exit code (2: nothing bears on it)."""
    bar = ProgressLine()
    if thread:
        return _in_thread(chosen, question, thread, top=top, chars=chars, explain=explain, as_json=as_json)
    try:
        if not question.strip():  # a mistake, not a question nothing bears on (as HTTP /recall says)
            raise InvalidRequest("the question is empty; ask about something")
        day = RecallRequest(question, top=top, hops=hops, chars=chars, at=at).checked().day()
        config = load_config(chosen.get("config"))
        store = config.store_config(chosen.get("store"))
        person = config.beside(store)
        asked = _Asked(question, top, hops, chars, explain, everything, no_model, bar, day)
        found = _recalled(config, store, asked)
        joint = None
        if person is not None:
            beside = _recalled(config, person, asked)
            joint = joined((store.open(), person.open()), (found, beside), question, top=top, chars=chars)
        said: tuple[list[Any], list[Any]] = ([], [])
        if spans:
            from kura.recall.spans import evidence

            said = evidence(store.open(), question, [found.context], k=5)
        for where in (store, person):
            used = [p.slug for s, p in _picks(found, joint) if where is not None and s == where.name]
            if where is not None and used:
                mark_used(folder(where.path, store=where.name), used)
    except KuraError as err:
        bar.close()
        return error_exit(err)
    bar.close()
    picks = _picks(found, joint)
    done = 0 if picks or said[0] else 2
    if as_json:
        data = joint.to_dict() if joint is not None else found.to_dict()
        if spans:
            data["spans"] = [s.to_dict(question) for s in said[0]]
            data["spans_left_out"] = [{**s.to_dict(question, words=False), "why": why} for s, why in said[1]]
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
        return done
    _show(found, joint, picks)
    if spans:
        sys.stdout.write(_said(said, question))
    return done


@dataclass(frozen=True, slots=True)
class _Asked:
    question: str
    top: int
    hops: int
    chars: int
    explain: bool
    everything: bool
    no_model: bool
    bar: ProgressLine
    at: dt.date | None = None


def _recalled(config: Config, store: StoreConfig, asked: _Asked) -> Recall:
    """One store's recall, with the models its config gives it."""
    thinker = None if asked.no_model else config.thinker_for(store)
    remote = config.embedder_for(store)
    embedder = None
    if remote is not None:
        embedder = remote_embedder(remote)
    elif thinker is None:  # the embedder will answer: its load overlaps the imports and the walk
        give_back_freed_blocks()
        preload(quick=True)
    building = index_job.running(store.path)  # then it embeds; this recall answers at once
    found = recall(
        store.open(), asked.question, top=asked.top, hops=asked.hops, chars=asked.chars,
        explain=asked.explain, thinker=thinker, progress=asked.bar, quick=True, embedder=embedder,
        everything=asked.everything, budget=NOW if building else env_budget(_first()), at=asked.at,
    )  # fmt: skip
    if not found.whole and not building:  # the rest of the vectors (or headlines), made after this exits
        index_job.start(store.path, config=config.source)
    return found


def _first() -> Budget:
    """How long this recall embeds: briefly when a background build makes the rest."""
    return HANDED_ON if index_job.enabled() else ONE_SHOT


def _in_thread(
    chosen: dict[str, str], question: str, thread: str, *, top: int, chars: int, explain: bool, as_json: bool
) -> int:
    """``kura recall --thread ID``: the thread's items searched as recall searches a store."""
    from kura.recall.in_thread import thread_recall

    try:
        RecallRequest(question, top=top, chars=chars).checked()
        store = load_config(chosen.get("config")).store_config(chosen.get("store")).open()
        found = thread_recall(store, thread, question, top=top, chars=chars, explain=explain, quick=True)
    except KuraError as err:
        return error_exit(err)
    if as_json:
        data = {**found.to_dict(), "thread": thread}
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        _show(found, None, _picks(found, None))
    return 0 if found.picked else 2


def _picks(found: Recall, joint: Joint | None) -> tuple[tuple[str, Pick], ...]:
    return joint.picks if joint is not None else tuple((found.store, p) for p in found.picked)


def _show(found: Recall, joint: Joint | None, picks: tuple[tuple[str, Pick], ...]) -> None:
    """The text answer: how, the picks (one from another store named with it), why not
    better, each explained row, the context."""
    out = sys.stdout.write
    degraded = found.degraded or (joint is not None and joint.second.degraded)
    reason = "; ".join(r for r in (found.reason, joint.second.reason if joint else "") if r)
    how = f"{found.label} — ⚠ degraded: {reason}" if degraded else found.label
    shown = ", ".join(_pick_text(store, p, found, joint) for store, p in picks)
    walked = [slug if store == found.store else f"{slug} [{store}]" for store, slug in _walked(found, joint)]
    also = f"; walked: {', '.join(walked)}" if walked else ""
    when = "" if found.at is None else f" as of {found.at.isoformat()}"
    hint = "" if found.explain else " (--explain lists the nearest and their scores)"
    nothing = f"nothing bears on this{hint}"
    out(f"recall{when} ({how}): {shown or nothing}{also}\n")
    if reason and not degraded:
        sys.stderr.write(f"kura: {redact(reason)[0]}\n")
    for recalled in (found, joint.second) if joint is not None else (found,):
        for unread in recalled.unread:
            sys.stderr.write(f"kura: not searched: {redact(unread)[0]}\n")
        tag = "" if recalled is found else f" [{recalled.store}]"
        for row in recalled.explain:
            _explained(row, tag)
    context = joint.context if joint is not None else found.context
    if context:
        out(f"\n{context}\n")


def _pick_text(store: str, p: Pick, found: Recall, joint: Joint | None) -> str:
    recalled = found if joint is None or store == found.store else joint.second
    named = p.slug if store == found.store else f"{p.slug} [{store}]"
    return (
        (named if p.score is None else f"{named} {p.score:.2f}")
        + (f" (replaces {p.replaces})" if p.replaces else "")
        + ("" if recalled.asserted(p.slug) else " (on record, may be stale)")
    )


def _walked(found: Recall, joint: Joint | None) -> tuple[tuple[str, str], ...]:
    return joint.walked if joint is not None else tuple((found.store, s) for s in found.walked)


def _explained(row: dict[str, Any], tag: str) -> None:
    out = sys.stdout.write
    mark = "*" if row["picked"] else " "
    slug = f"{row['slug']}{tag}"
    if row.get("by") == "thinker":
        out(f" {mark} {slug:<36} picked by the thinker\n")
        return
    cosine = "-" if row["cosine"] is None else f"{row['cosine']:.3f}"
    out(f" {mark} {slug:<36} score {row['score']:.3f}  cosine {cosine}  words {row['lexical']:.3f}\n")


def _said(said: tuple[list[Any], list[Any]], question: str) -> str:
    """Spans as evidence that something was said — never as fact."""
    kept, dropped = said
    if not kept and not dropped:
        return "\nsaid before: no transcript span bears on this (kura ingest FILE indexes one)\n"
    lines = ["", "Said before — evidence that it was said, not that it is true:"]
    lines += [f'- {s.label} [{s.cls}]: "{s.shown(question)}"  ({s.place})' for s in kept]
    lines += [f"  (left out: {s.place} — {why})" for s, why in dropped]
    return "\n".join(lines) + "\n"
