"""One distiller pass over a store's journals: read → spot → gate → novelty → compose → stage.

The pass is a straight line per source, and its order is what keeps it honest:

    reserve a stretch (watermark) → classed segments → spotters (rules always; the brain
    model too when there is one) → gate (against the store's own text, so an echo is not
    new material) → novelty (covered by a memory: dropped; extends one: staged as its
    extension; new) → composer (the scribe model, else a template) → the final-surface
    floor → stage a draft → commit the watermark

With no model every step still runs: the rule-based spotter, a mechanical novelty check
(``kura.distill.novelty``) and the template composer. Models are optional helpers
(``kura.distill.model_steps``) whose every output passes the same gate and floor.

The watermark is committed only after every draft of the stretch is staged, and released
if anything fails before that, so a crash costs a re-read, never a lost stretch. A re-read
stages nothing twice: a pass killed half-way through a stretch left some of its drafts
staged, and the candidate whose draft is already there (same source, same quotes:
``kura.distill.drafts.key``) is recognised and passed over, so the watermark and the
drafts never have to move together. Each draft lands whole (``kura.distill.draft_file``),
and what an older, killed writer left half-made is cleared at the start of a pass. Since a
reservation is exclusive (``kura.transcripts.journals``), two passes running at once never
read the same stretch, so no candidate is staged twice. The spotter sees one stretch at a
time: a failure and its fix that straddle two stretches are not paired — a missed scar, not
a wrong one.

A person's explicit request to remember, in a store that takes direct writes, is poured as
soon as its draft is staged (the person asked; no scribe need judge it), through the same
verified door as every pour; a pass stopped between the two leaves the draft staged, and
the next pass, finding it already staged, pours it instead of passing over it.

Ideas are never staged: they go to the seed file (``kura.distill.seeds``), and a kept
candidate graduates the seeds its topic matches. Every
decision is counted in ``Metrics`` — segments by class, candidates, kept, dropped with
their reasons, drafts, findings — because a pass that stages nothing must still say why.
``nothing`` is its own outcome: no source had a new line, which a scheduler tells apart
from "read something, kept nothing".
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from kura.distill import drafts as dr
from kura.distill import ladder, novelty, seeds
from kura.distill.candidate import Candidate
from kura.distill.compose import compose
from kura.distill.contradict import disagreements
from kura.distill.draft_file import sweep
from kura.distill.final_check import violations
from kura.distill.gate import judge
from kura.distill.model_steps import FIRM, Minds, describe, merge, write
from kura.distill.model_steps import spot as brain_spot
from kura.distill.rules import forgets, spot
from kura.errors import KuraError
from kura.files.belief import retired
from kura.files.finding import Finding
from kura.files.witness import Kind, Witness, lead_quote, parse_when, said_in
from kura.life.lifecycle import archive, reinforce
from kura.life.purge import buried, tombstones
from kura.recall import spans
from kura.store.store import Memory, Store
from kura.text.claim_match import revised
from kura.text.moves import moved
from kura.text.secrets import redact
from kura.transcripts import journals as jr
from kura.transcripts.segments import CLASSES, Segment

Progress = Callable[[str, int, int], None]  # stage, done, total


class Stage(Protocol):
    def __call__(
        self,
        store: Store,
        *,
        slug: str,
        kind: str,
        title: str,
        description: str,
        body: str,
        evidence: Sequence[Segment],
        source: str,
        flags: Sequence[str] = (),
        extends: str | None = None,
    ) -> Path: ...


@dataclass(kw_only=True, frozen=True, slots=True)
class Metrics:
    """What one pass did; ``nothing`` when no source had anything new to read."""

    sources: int = 0
    segments: dict[str, int] = field(default_factory=dict)
    candidates: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    drafts: tuple[Path, ...] = ()
    ideas: int = 0
    findings: tuple[Finding, ...] = ()
    nothing: bool = False
    extends: int = 0
    models: str = "rules only"
    usage: dict[str, Any] = field(default_factory=dict)
    reinforced: int = 0
    waiting: int = 0  # mentions the ladder added to scratch (``kura.distill.ladder``)
    crossed: int = 0  # scratch items that crossed into drafts (or memories) this pass
    held_back: dict[str, int] = field(default_factory=dict)  # crossings refused, by reason
    poured: int = 0  # drafts of a person's request, poured at once (a direct-allowed store)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nothing": self.nothing,
            "sources": self.sources,
            "segments": {cls: self.segments.get(cls, 0) for cls in CLASSES},
            "candidates": self.candidates,
            "kept": self.kept,
            "dropped": dict(self.dropped),
            "drafts": [str(p) for p in self.drafts],
            "ideas": self.ideas,
            "extends": self.extends,
            "reinforced": self.reinforced,
            "scratch_mentions": self.waiting,
            "crossed": self.crossed,
            "crossings_refused": dict(self.held_back),
            "poured": self.poured,
            "findings": [str(f) for f in self.findings],
            "models": self.models,
            "tokens_in": self.usage.get("tokens_in", 0),
            "tokens_out": self.usage.get("tokens_out", 0),
            "model_calls": self.usage.get("calls", 0),
            "tokens_estimated": bool(self.usage.get("estimated", False)),
        }

    def line(self) -> str:
        """The one-line summary a pass prints."""
        if self.nothing:
            return "distill: nothing new to read"
        classes = " ".join(f"{cls}={self.segments.get(cls, 0)}" for cls in CLASSES)
        reasons = "; ".join(f"{n}× {why}" for why, n in sorted(self.dropped.items()))
        return (
            f"distill: {self.sources} source(s), segments {classes}, candidates {self.candidates}, "
            f"kept {self.kept}, dropped {sum(self.dropped.values())}"
            + (f" ({reasons})" if reasons else "")
            + f", drafts {len(self.drafts)}"
            + (f" ({self.poured} poured as asked)" if self.poured else "")
            + (f" ({self.extends} extending a memory)" if self.extends else "")
            + (
                f", {self.reinforced} memor{'ies' if self.reinforced != 1 else 'y'} reinforced"
                if self.reinforced
                else ""
            )
            + f", ideas {self.ideas}"
            + (f", scratch +{self.waiting} crossed {self.crossed}" if self.waiting or self.crossed else "")
            + f", {self.models}"
            + f", {self._tokens()}"
        )

    def _tokens(self) -> str:
        approx = "~" if self.usage.get("estimated") else ""
        used_in, used_out = self.usage.get("tokens_in", 0), self.usage.get("tokens_out", 0)
        return f"tokens in {approx}{used_in} out {approx}{used_out}"


@dataclass(kw_only=True, slots=True)
class _Tally:
    sources: int = 0
    segments: Counter[str] = field(default_factory=Counter)
    candidates: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    drafts: list[Path] = field(default_factory=list)
    ideas: int = 0
    findings: list[Finding] = field(default_factory=list)
    extends: int = 0
    reinforced: int = 0
    waiting: int = 0
    crossed: int = 0
    held_back: Counter[str] = field(default_factory=Counter)
    poured: int = 0

    def freeze(self, minds: Minds) -> Metrics:
        return Metrics(
            sources=self.sources,
            segments=dict(self.segments),
            candidates=self.candidates,
            kept=self.kept,
            dropped=dict(self.dropped),
            drafts=tuple(self.drafts),
            ideas=self.ideas,
            findings=tuple(self.findings),
            nothing=self.sources == 0,
            extends=self.extends,
            models=describe(minds),
            usage=minds.usage.to_dict(),
            reinforced=self.reinforced,
            waiting=self.waiting,
            crossed=self.crossed,
            held_back=dict(self.held_back),
            poured=self.poured,
        )


def journals_for(distill: Mapping[str, Any], store_distill: Mapping[str, Any], *,
                 config_source: Path | None, store: str) -> jr.Journals:  # fmt: skip
    """The journals a store reads, relative roots taken from the config file's folder."""
    base = config_source.parent if config_source is not None else None
    return jr.journal_settings(distill, store_distill, base=base, store=store, config=config_source)


def store_text(memories: Iterable[Memory]) -> str:
    """The store's own words, for echo detection: every memory's name, description, body."""
    return "\n\n".join(f"{m.name}\n{m.description}\n{m.note.body}" for m in memories)


def run_pass(
    store: Store,
    journals: jr.Journals,
    *,
    stage: Stage | None = None,
    progress: Progress | None = None,
    max_bytes: int = 0,
    minds: Minds | None = None,
    window_tokens: int = ladder.WINDOW_TOKENS,
) -> Metrics:
    """One pass over every journal of ``store`` (see the module docstring); ``minds`` are
    the models it may ask (none: rules and templates only); ``window_tokens`` is the working
    window the ladder's TIDE is measured against."""
    minds = minds if minds is not None else Minds()
    stage = stage or dr.stage
    sources, found = jr.discover(journals, store.root)
    tally = _Tally(findings=[*found, *sweep(dr.drafts_dir(store))])
    journals_read = {s.key: s.fmt for s in sources}  # what a scratch witness may cite
    cited = {s.key: s.shared for s in sources}  # how a memory names each (never a local path)
    listed = store.list()  # read once a pass: the drafts a pass stages do not change the store
    own = store_text(listed)
    for number, source in enumerate(sources, start=1):
        claim = jr.reserve(store.state_dir, source, max_bytes=max_bytes)
        if claim is None:
            continue
        try:
            stretch = claim.read()
            tally.findings.extend(stretch.findings)
            _keep_spans(store, source, stretch.segments, tally)
            if claim.token:
                tally.sources += 1
                _distil(store, source, stretch.segments, (listed, own), stage, tally, progress, minds)
                _climb(
                    store,
                    claim,
                    stretch.segments,
                    (listed, own),
                    stage,
                    tally,
                    (window_tokens, journals_read, cited),
                )
        except BaseException:
            jr.release(store.state_dir, claim)
            raise
        if not jr.commit(store.state_dir, claim):
            note = "the reservation expired before this pass finished; the stretch will be read again"
            tally.findings.append(Finding(source.key, claim.raw.start.line + 1, note, "warning"))
        if progress is not None:
            progress("sources", number, len(sources))
    return tally.freeze(minds)


def _keep_spans(store: Store, source: jr.Source, segments: Sequence[Segment], tally: _Tally) -> None:
    """Index what was read as spans (``kura.recall.spans``): evidence of what was said, kept even
    when nothing in it becomes a memory."""
    try:
        spans.add(store, source.key, segments, fallback_when=spans.file_day(source.path))
    except sqlite3.Error as err:
        tally.findings.append(Finding(source.key, 1, f"could not index the spans read: {err}", "warning"))


def _distil(
    store: Store,
    source: jr.Source,
    segments: Sequence[Segment],
    known: tuple[Sequence[Memory], str],
    stage: Stage,
    tally: _Tally,
    progress: Progress | None,
    minds: Minds,
) -> None:
    tally.segments.update(s.cls for s in segments)
    if progress is not None:
        progress("spotting", 0, len(segments))
    listed, own = known
    current = [m for m in listed if not retired(m.note.meta)]
    live = [(m.slug, f"{m.name}. {m.description}", m.type or "project") for m in current]
    brained, malformed = brain_spot(minds, segments)
    candidates = merge(brained, merge(spot(segments), disagreements(segments, live)), firm=FIRM)
    if progress is not None:
        progress("spotting", len(segments), len(segments))
    tally.candidates += len(candidates) + malformed
    if malformed:
        tally.dropped["malformed candidate from the brain"] += malformed
    slugs = store.slugs()
    memories = [(m.slug, m.name, f"{m.description}\n{m.note.body}") for m in current]
    staged = [d for d in dr.staged(store) if not d.incomplete]
    taken = set(slugs) | {d.slug for d in staged}
    before, met = Counter(dr.key_of(d) for d in staged), Counter[dr.Key]()
    graves = tombstones(store)
    _asked_to_forget(store, segments, memories, tally)
    for candidate, verdict in zip(candidates, judge(candidates, segments, own), strict=True):
        if verdict.verdict == "idea":
            why = _field(candidate, "why")
            seeds.add(store, topic=_field(candidate, "topic"), why=why, source=source.key)
            tally.ideas += 1
            continue
        if verdict.verdict != "kept":
            tally.dropped[verdict.reason.split(" (", 1)[0]] += 1
            continue
        if buried([novelty.statement(candidate), *(seg.text for seg in verdict.evidence)], graves):
            tally.dropped["purged before (a tombstone matches)"] += 1
            continue
        same = dr.key(source.shared, verdict.evidence)
        met[same] += 1
        if met[same] <= before[same]:  # this stretch was read before, by a pass that stopped
            tally.dropped["already staged by a pass that was stopped"] += 1
            left = next((d for d in staged if dr.key_of(d) == same), None)
            if left is not None and _asked(store, candidate):  # stopped before it poured
                _pour_asked(store, left.path, tally)
            continue
        replaces = _replaces(candidate, verdict.evidence, live)
        seen = _witness(candidate, verdict.evidence, replaces, source)
        near = novelty.neighbours(candidate, memories)
        new = novelty.Novelty("new") if replaces else _novelty(candidate, near, minds)
        if new.verdict == "covered":
            tally.dropped[f"already covered by a memory ({new.slug})"] += 1
            _reinforce(store, new.slug, seen, tally)
            continue
        linkable = [n.slug for n in near]
        composed = write(minds, candidate, verdict, taken=taken, store_slugs=slugs, near=linkable) or compose(
            candidate, verdict, taken=taken, store_slugs=slugs
        )
        text = "\n\n".join((composed.title, composed.description, composed.body)) if composed else ""
        if composed is None or violations(text, verdict.evidence, slugs):
            tally.dropped["no sentence of fact passed the final-surface floor"] += 1
            continue
        extends = new.slug if new.verdict == "extends" else None
        path = stage(store, slug=composed.slug, kind=composed.kind, title=composed.title,
                     description=composed.description, body=composed.body, evidence=verdict.evidence,
                     source=source.shared, flags=(*composed.flags, *_flags(seen, replaces)),
                     extends=extends)  # fmt: skip
        tally.extends += extends is not None
        taken.add(composed.slug)
        if _asked(store, candidate) and extends is None:
            _pour_asked(store, path, tally)
        seeds.graduate(store, _field(candidate, "topic"), path.stem)  # later evidence confirms an idea
        tally.kept += 1
        tally.drafts.append(path)


def _climb(store: Store, claim: jr.Claim, segments: Sequence[Segment], known: tuple[Sequence[Memory], str],
           stage: Stage, tally: _Tally,
           reading: tuple[int, dict[str, str], dict[str, str]]) -> None:  # fmt: skip
    """The ladder (``kura.distill.ladder``): statements said in passing wait in scratch, and
    those with witnesses enough cross, through the same gate and floor."""
    listed, own = known
    live = [(m.slug, m.name, f"{m.description}\n{m.note.body}") for m in listed if not retired(m.note.meta)]
    fallback = spans.file_day(claim.source.path)
    compacted = ladder.compactions(claim.raw.data, claim.raw.start.line + 1)
    added, ready = ladder.read(store, claim.source.key, segments, window_tokens=reading[0], live=live,
                               graves=tombstones(store), fallback_when=fallback,
                               compacted=compacted)  # fmt: skip
    done = ladder.cross(store, ready, stage=stage, own=own, live=live, journals=reading[1], cited=reading[2])
    tally.waiting += added
    tally.crossed += len(done.crossed)
    tally.kept += len(done.crossed)
    tally.drafts.extend(Path(p) for p in done.crossed)
    tally.held_back.update(done.dropped)


def _asked(store: Store, candidate: Candidate) -> bool:
    """A person's explicit request to remember, in a store that takes direct writes: the
    person asked, so it needs no scribe to become a memory."""
    return candidate.get("rule") == "remember" and store.write_policy == "direct-allowed"


def _pour_asked(store: Store, path: Path, tally: _Tally) -> None:
    """Pour a requested memory's draft at once, through the verified door every pour takes
    (mark, final-surface floor, secrets, policy, atomic write, index line, witnesses); a
    refusal leaves it staged, with the reason."""
    poured = dr.pour(store, path.stem)
    if poured.poured:
        tally.poured += 1
    else:
        tally.findings.append(
            Finding(str(path), 1, f"asked to remember, left staged: {poured.reason}", "warning")
        )


def _replaces(candidate: Candidate, evidence: Sequence[Segment], live: Sequence[tuple[str, str, str]]) -> str:
    """The live memory a candidate in the human's words revises ("" for none)."""
    if not any(seg.cls == "USER" for seg in evidence):
        return ""
    named = str(candidate.get("replaces") or "")
    if named in {slug for slug, _, _ in live}:
        return named
    said, claims = novelty.statement(candidate), [(slug, claim) for slug, claim, _ in live]
    return revised(said, claims) or moved(said, claims) or ""


def _witness(candidate: Candidate, evidence: Sequence[Segment], replaces: str, source: jr.Source) -> Witness:
    """What kind of evidence the candidate is (a revision in the human's words is a FIX), and
    the session and day it was said in: the transcript's timestamp, else the journal file's
    day, never the day it is read."""
    rule = candidate.get("rule")
    by_rule: dict[str, Kind] = {"remember": "SAID", "correction": "FIX", "scar": "SCAR"}
    kind: Kind = "FIX" if replaces else by_rule.get(str(rule), "INFERRED")
    fallback = parse_when(spans.file_day(source.path)) or dt.date.today()
    session, day = said_in(evidence, fallback)
    return Witness(kind=kind, when=day, session=session, source=source.shared, quote=lead_quote(evidence))


def _asked_to_forget(
    store: Store, segments: Sequence[Segment], memories: Sequence[tuple[str, str, str]], tally: _Tally
) -> None:
    """ "Forget that X" is a request to forget, never a memory saying X. In a direct-allowed
    store the memory that says X is archived at once, as a request to remember pours at once
    (the person asked): off the index, still on disk, its reason quoting the request.
    Elsewhere it is named, with the command that archives it (the person's to run)."""
    for asked in forgets(segments):
        found = novelty.covers(asked, memories)
        if found.verdict != "covered":
            continue
        said = redact(asked)[0][:120]
        where = f"{store.name}/{found.slug}"
        if store.write_policy == "direct-allowed":
            try:
                archive(store, found.slug, f"the user asked to forget it: {said!r}", actor="distiller")
            except KuraError as err:
                tally.findings.append(
                    Finding(where, 1, f"the user asked to forget this; not archived: {err}", "warning")
                )
                continue
            tally.findings.append(
                Finding(where, 1, f"archived: the user asked to forget this ({said!r})", "warning")
            )
            continue
        note = f"the user asked to forget this ({said!r}); `kura forget {found.slug}` archives it"
        tally.findings.append(Finding(where, 1, note, "warning"))


def _flags(seen: Witness, replaces: str) -> tuple[str, ...]:
    out = [f"witness:{seen.kind}"]
    if seen.session:
        out.append(f"session:{seen.session}")
    if seen.when:
        out.append(f"when:{seen.when.isoformat()}")
    if replaces:
        out.append(f"replaces:{replaces}")
    return tuple(out)


def _reinforce(store: Store, slug: str, seen: Witness, tally: _Tally) -> None:
    """A restatement reinforces the memory it restates: one more witness, no new memory."""
    try:
        if reinforce(store, slug, seen, actor="distiller").changed:
            tally.reinforced += 1
    except KuraError as err:
        tally.findings.append(Finding(slug, 1, f"could not add the restatement as a witness: {err}", "note"))


def _novelty(candidate: Candidate, near: Sequence[novelty.Neighbour], minds: Minds) -> novelty.Novelty:
    """Mechanically covered, else the brain's verdict, else new."""
    found = novelty.mechanical(candidate, near)
    model = minds.usable(minds.brain)
    if found.verdict != "new" or model is None:
        return found
    judged = novelty.ask_novelty(model, minds.charter, candidate, near, usage=minds.usage)
    if judged is None:
        minds.failed("brain", model)
        return found
    return judged


def _field(candidate: Candidate, name: Literal["topic", "why"]) -> str:
    return str(candidate.get(name) or "")
