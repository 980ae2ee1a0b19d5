"""Recall quality on held-out sets: recall@1, recall@5 and MRR per method and query kind.

    python bench/recall_quality.py [--set bakery|team|conversational|longchat] [--pad N]
        [--pad-style realistic|templated] [--floors] [--keep DIR] [--small N] [--misses]

``--set bakery`` (the default) uses bench/eval/store (64 memories of a family bakery and
rental flat, not the sample store) and bench/eval/queries.jsonl (166 questions: 64 lexical,
72 paraphrases that share no content word with their target, 30 about subjects the store
does not hold). ``--set team`` is measured the same way from bench/eval/team/ (store/ and
questions.jsonl), a set written blind, without looking at recall's rules or tuning on it: 60
memories of a small software team's working memory as a coding agent keeps it for one
developer (deploys, CI, on-call, reviews, people, incidents, where credentials are, customers,
release dates, library choices; two deploy targets, three databases, old and new decisions
side by side) and 140 questions: 40 lexical, 65 paraphrases that share no content word with
their target (a third of them ask two things at once), 10 ``identifier`` questions that name
one exact token (a port, a ticket, a flag, a secret's name) and 25 unrelated. ``--set
conversational`` uses bench/eval/conversational/: 185 short
observations of who said what and when in a year of chats (observations.txt, written into
a store one memory each) and 88 questions (78 answered by one observation, 10 unrelated).
``--set longchat`` uses bench/eval/longchat/, written the same way and harder: 249 short
observations from eight months of chats between two friends, where the same kind of thing
happens many times (a dozen paintings, a dozen runs, four gigs, four vet visits), so often
only a date, a place or a name tells the right one apart, and most share a speaker's name;
123 questions by kind (single fact, temporal "when …", who said, opinion, multi-hop with
every observation it needs in ``targets``) and 15 unrelated. For multi-hop questions the
rank is that of the first target, "all in top 5" counts the questions whose every
target is in the first five, and "best hit is the other target" those whose first hit is the
second target (the bridge): the first can then rank second at best. "MRR of the first target
found" is MRR as usually defined where a question has several relevant memories (the rank of
the first of them); the figure beside the target is the first-named target's.
Methods: ``lexical`` (FTS5 BM25, the offline fallback), ``dense`` (MiniLM cosine alone) and
``fused`` (what kura uses: kura.recall.search). For the unrelated questions it reports how
often recall refuses (picks nothing). Then ``through recall()``: the whole pipeline (the
second hop, dates in questions, the store's own floor: kura.recall.converse), ranked by
recall's own ``explain`` rows, with the refusals it gives and the floor it calibrated.

Every figure is given for the whole kind and for its two halves, A and B (by a hash of the
question): weights and floors were tuned looking at A only, so B is the held-out check.

``--pad N`` adds N distractor memories, to see how the numbers hold in a bigger store. By
default they are bench/distractors.py's realistic ones (other subjects written like real
memories, a quarter of them hard negatives close to the bakery and the flat, none about an
unrelated question's subject); ``--pad-style templated`` gives the old filler ("kayak and
chess details number 12").

``--floors`` calibrates ``kura.recall.recall.FLOOR``: the distribution of the best hit's
cosine for unrelated and for answerable questions, then, for floors 0.20 to 0.45 with
recall's own rule (``_pick``), how many unrelated questions are refused and how many
answerable ones are wrongly refused (nothing picked).

``--small N`` measures small stores instead: N memories drawn at random from the set's
store, 30 times (seeded), each asked the questions whose memory was drawn; lexical, dense and
fused over all of them, and whether fused is at least the better part.

``--misses`` lists every answerable question the fusion does not rank first: its half, kind,
and the target's rank by lexical, dense and fused (what to look at, on the A half, before
tuning).

``--keep DIR`` builds the (padded) store in DIR, or reuses it and its index if DIR holds
one: a 20,000-memory store is embedded once, not on every run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

import distractors

from kura.recall.embed import Unavailable, load_embedder
from kura.recall.recall import FLOOR, RELATIVE, _pick, recall
from kura.recall.search import Hit, SearchIndex
from kura.store.store import Store

HERE = Path(__file__).parent / "eval"
FOLDERS = {  # the sets kept as a store folder and a questions file
    "bakery": (HERE / "store", HERE / "queries.jsonl"),
    "team": (HERE / "team" / "store", HERE / "team" / "questions.jsonl"),
}
CONVERSATIONAL = HERE / "conversational"
LONGCHAT = HERE / "longchat"
TOPICS = "kayak harbour violin chess telescope beekeeping pottery marathon origami falconry".split()
TOP = 3  # recall's default
DRAWS = 30  # --small: stores drawn
TODAY = dt.date(2026, 1, 31)  # the day the sets' chats are read from: after the last of them
GRID = sorted({round(0.20 + 0.025 * step, 3) for step in range(11)} | {FLOOR})


def pad_templated(root: Path, n: int) -> None:
    rng = random.Random(3)
    for i in range(n):
        a, b = rng.sample(TOPICS, 2)
        (root / f"pad-{i:05d}.md").write_text(
            f"---\nname: {a} note {i}\ndescription: {a} and {b} details number {i} for the club\n"
            f"type: reference\n---\n\nSomething about {a} and {b}, entry {i}.\n"
        )


def write_conversational(root: Path, source: Path = CONVERSATIONAL) -> None:
    """A conversational store: one short observation a memory, from ``source``'s lines."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in (source / "observations.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        slug, day, who, said = (part.strip() for part in line.split("|", 3))
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug.replace('-', ' ')}\ndescription: {said}\ntype: user\n---\n\n"
            f"Said by {who} in the chat of {day}: {said}\n"
        )
        lines.append(f"- [{slug.replace('-', ' ')}]({slug}.md) — {said}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")


Ranked = dict[str, dict[str, list[str]]]  # method -> question -> slugs, best first (50 at most)
METHODS = ("lexical", "dense", "fused")


def rankings(dense: SearchIndex, lexical: SearchIndex, queries: list[dict[str, Any]]) -> Ranked:
    """Each question's ranking by each method. ``dense`` is the cosine of the question as
    asked over every memory, lifted by the memory's headline and sentences (kura's embedder
    alone), ``fused`` what kura's search answers."""
    every = dense.coverage().memories
    out: Ranked = {method: {} for method in METHODS}
    for query in queries:
        asked = query["q"]
        out["lexical"][asked] = [h.slug for h in lexical.search(asked, k=50).hits]
        hits = dense.search(asked, k=max(every, 50)).hits
        out["fused"][asked] = [h.slug for h in hits[:50]]
        out["dense"][asked] = [h.slug for h in sorted(hits, key=lambda h: -(h.meant or h.cosine or 0.0))[:50]]
    return out


def ranks(ranked: dict[str, list[str]], queries: list[dict[str, Any]]) -> list[int | None]:
    out: list[int | None] = []
    for query in queries:
        slugs = ranked[query["q"]]
        out.append(slugs.index(query["target"]) + 1 if query["target"] in slugs else None)
    return out


def all_found(ranked: dict[str, list[str]], queries: list[dict[str, Any]]) -> str:
    """How many multi-hop questions have every one of their targets in the first five."""
    found = sum(1 for q in queries if set(q["targets"]) <= set(ranked[q["q"]][:5]))
    return f"all in top 5: {found}/{len(queries)}"


def half(question: str) -> str:
    """A (looked at while tuning) or B (held out), fixed by the question's text."""
    return "AB"[int(hashlib.sha256(question.encode()).hexdigest(), 16) % 2]


def summary(found: list[int | None]) -> str:
    n = len(found) or 1
    at1 = sum(1 for r in found if r == 1) / n
    at5 = sum(1 for r in found if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in found if r is not None) / n
    return f"R@1 {at1:.2f}  R@5 {at5:.2f}  MRR {mrr:.2f}"


def picks(hits: tuple[Hit, ...], floor: float) -> list[str]:
    """What recall picks from the hits with this floor (kura.recall.recall._pick itself)."""
    return [p.slug for p in _pick(hits, "embedded", TOP, floor=floor)]


def spread(values: list[float]) -> str:
    q = statistics.quantiles(values, n=20, method="inclusive")  # q[i] is the (i + 1) × 5th percentile
    cells = (min(values), q[1], q[4], q[9], q[14], q[17], max(values))
    return "  ".join(f"{v:.3f}" for v in cells)


def floors(index: SearchIndex, queries: list[dict[str, Any]]) -> None:
    """The best cosine per question kind, and the refusals each floor would give."""
    hits = {q["q"]: index.search(q["q"], k=max(TOP * 4, 10)).hits for q in queries}
    unrelated = [q for q in queries if q["kind"] == "unrelated"]
    answerable = [q for q in queries if q["kind"] != "unrelated"]
    print("  best hit's cosine           min    p10    p25    median p75    p90    max")
    for label, group in (("unrelated", unrelated), ("answerable", answerable)):
        best = [max((h.cosine or 0.0) for h in hits[q["q"]]) if hits[q["q"]] else 0.0 for q in group]
        print(f"    {label + f' ({len(group)})':<25} {spread(best)}")
    print(f"  floor (RELATIVE {RELATIVE}): unrelated refused (A+B) | answerable refused | target picked")
    for floor in GRID:
        cells = []
        for group in (unrelated, answerable):
            wrong = [q for q in group if not picks(hits[q["q"]], floor)]
            a = sum(1 for q in wrong if half(q["q"]) == "A")
            cells.append(f"{len(wrong):>3}/{len(group)} ({a:>2}+{len(wrong) - a:>2})")
        found = sum(1 for q in answerable if q["target"] in picks(hits[q["q"]], floor))
        mark = "  <- kura.recall.recall.FLOOR" if abs(floor - FLOOR) < 1e-9 else ""
        print(f"    {floor:.3f}   {cells[0]}   |   {cells[1]}   |   {found:>3}/{len(answerable)}{mark}")


def mrr(found: list[int | None]) -> float:
    return sum(1 / r for r in found if r is not None) / (len(found) or 1)


def by_half(found: list[int | None], queries: list[dict[str, Any]], which: str) -> list[int | None]:
    return [r for r, q in zip(found, queries, strict=True) if half(q["q"]) == which]


def quality(
    store: Store,
    dense: SearchIndex,
    lexical: SearchIndex,
    queries: list[dict[str, Any]],
    *,
    listed: bool = False,
    blind: bool = False,
) -> None:
    print(f"{len(store.slugs())} memories, {len(queries)} questions")
    ranked = rankings(dense, lexical, queries)
    answered = [q for q in queries if q["kind"] != "unrelated"]
    if listed:
        misses(ranked, answered)
    fused: dict[str, float] = {}
    for kind in sorted({q["kind"] for q in answered}):
        chosen = [q for q in answered if q["kind"] == kind]
        print(f"  {kind} questions ({len(chosen)}):")
        for method in METHODS:
            found = ranks(ranked[method], chosen)
            if method == "fused":
                fused[kind] = mrr(found)
            parts = [summary(by_half(found, chosen, h)) for h in "AB"]
            both = f"   {all_found(ranked[method], chosen)}" if all("targets" in q for q in chosen) else ""
            print(f"    {method:<8} {summary(found)}   A: {parts[0]}   B: {parts[1]}{both}")
    fused["all"] = verdict(ranked, answered)
    fused["one"] = mrr(ranks(ranked["fused"], [q for q in answered if "targets" not in q]))
    unrelated = [q for q in queries if q["kind"] == "unrelated"]
    refused = sum(1 for q in unrelated if not recall(store, q["q"], hops=0, index=dense).picked)
    found = sum(1 for q in answered if recall(store, q["q"], hops=0, index=dense).picked)
    print(f"  refused {refused}/{len(unrelated)} unrelated questions", end="; ")
    print(f"answered {found}/{len(answered)} others (wrongly refused {len(answered) - found})")
    wrong = len(answered) - found
    targets(len(store.slugs()), fused, refused, len(unrelated), wrong, len(answered), blind=blind)


def misses(ranked: Ranked, answered: list[dict[str, Any]]) -> None:
    """Every answerable question whose target the fusion does not rank first (``--misses``)."""
    print("  not first when fused (half, kind, the target's rank: lexical / dense / fused; - past 50):")
    for query in answered:
        found = {method: ranks(ranked[method], [query])[0] for method in METHODS}
        if found["fused"] != 1:
            cells = " / ".join(str(found[method] or "-") for method in METHODS)
            print(f"    {half(query['q'])} {query['kind']:<14} {cells:<14} {query['q']}")


def verdict(ranked: Ranked, answered: list[dict[str, Any]]) -> float:
    """Every answerable question, each method's MRR (whole, A, B), and whether the fusion is
    at least as good as the better of its parts (issue 30); the fused MRR."""
    print(f"  all answerable questions ({len(answered)}), MRR:   whole   A      B")
    found = {method: ranks(ranked[method], answered) for method in METHODS}
    cells = {m: [mrr(f)] + [mrr(by_half(f, answered, h)) for h in "AB"] for m, f in found.items()}
    for method in METHODS:
        print(f"    {method:<8}                       " + "  ".join(f"{v:.3f}" for v in cells[method]))
    says = []
    for at, label in enumerate(("whole", "A", "B")):
        best = max(cells["lexical"][at], cells["dense"][at])
        says.append(f"{label} {'yes' if cells['fused'][at] >= best - 1e-9 else 'no'}")
    print(f"  fused >= max(parts): {says[0].split()[1]}  ({', '.join(says)})")
    split = [q for q in answered if ranked["lexical"][q["q"]][:1] != ranked["dense"][q["q"]][:1]]
    where = "  ".join(f"{method} {mrr(ranks(ranked[method], split)):.3f}" for method in METHODS)
    print(f"  where lexical and dense disagree on the first hit ({len(split)} questions), MRR: {where}")
    return cells["fused"][0]


def targets(
    size: int,
    fused: dict[str, float],
    refused: int,
    unrelated: int,
    wrong: int,
    answered: int,
    *,
    blind: bool,
) -> None:
    """The targets beside the figures: issue 30's (bakery paraphrases, longchat) and issue 19's
    (refusals on the bakery store; paraphrases with distractors). ``blind``: the team set, no
    rule was fitted on it, so the bakery's bars are printed beside it for comparison only."""
    if "paraphrase" in fused:
        big = size > 1000
        goal = 0.60 if big else 0.85
        where = "with distractors" if big else f"the {size}-memory store"
        print(f"  {'the bakery' + chr(39) + 's bars, for comparison' if blind else 'targets'} ({where}):")
        # three places: 0.8495 printed as 0.85 was read as the target met
        print(f"    paraphrase MRR, fused        {fused['paraphrase']:.3f}  target >= {goal:.2f}")
        if not big:  # two thirds refused, at most 3 % wrongly refused: 20/30 and 4/136 on the bakery
            least, most = f"{-(-2 * unrelated // 3)}/{unrelated}", f"{int(0.03 * answered)}/{answered}"
            print(f"    unrelated refused            {refused:>2}/{unrelated}   target >= {least}")
            print(f"    answerable wrongly refused   {wrong:>2}/{answered}  target <= 3 % ({most})")
    if "who" in fused:  # the longchat set: MRR over every answerable question (multi-hop: first target)
        print("  targets:")
        print(f"    MRR, fused, all answerable   {fused['all']:.3f}  target >= 0.88 as kura recall answers,")
        print("                                        with the second hop: 'through recall()' below")
        print(f"    MRR, fused, but multi-hop    {fused['one']:.3f}  target >= 0.88")


def small(source: Path, size: int, queries: list[dict[str, Any]]) -> None:
    """Stores of ``size`` memories drawn at random from ``source`` (``DRAWS`` draws, seeded),
    each asked the questions whose memory was drawn: the three methods over all of them."""
    slugs = sorted(path.stem for path in source.glob("*.md") if path.name != "MEMORY.md")
    found: dict[str, list[int | None]] = {method: [] for method in METHODS}
    for draw in range(DRAWS):
        chosen = set(random.Random(draw).sample(slugs, size))
        with tempfile.TemporaryDirectory() as tmp:
            for slug in chosen:
                shutil.copy(source / f"{slug}.md", Path(tmp) / f"{slug}.md")
            store = Store(Path(tmp))
            dense, lexical = SearchIndex(store), SearchIndex(store, embedder=Unavailable("lexical"))
            dense.update()
            lexical.update()
            mine = [q for q in queries if q["kind"] != "unrelated" and q["target"] in chosen]
            ranked = rankings(dense, lexical, mine)
            for method in METHODS:
                found[method] += ranks(ranked[method], mine)
            dense.close()
            lexical.close()
    print(f"stores of {size} memories drawn {DRAWS} times, {len(found['fused'])} questions, MRR:")
    print("    " + "  ".join(f"{method} {mrr(found[method]):.3f}" for method in METHODS))
    best = max(mrr(found["lexical"]), mrr(found["dense"]))
    print(f"  fused >= max(parts): {'yes' if mrr(found['fused']) >= best - 1e-9 else 'no'}")


def through_recall(store: Store, index: SearchIndex, queries: list[dict[str, Any]]) -> None:
    """The whole ``recall()`` pipeline (the second hop, dates in questions, the store's own
    floor): the rank of each target in recall's ranking (its ``explain`` rows), and what it
    picks for the unrelated questions. Dated questions resolve against the bench's ``--today``."""
    ranking = {q["q"]: recall(store, q["q"], hops=0, index=index, explain=True, today=TODAY) for q in queries}
    print("  through recall() (hop, dates, floor):")
    for kind in sorted({q["kind"] for q in queries} - {"unrelated"}):
        chosen = [q for q in queries if q["kind"] == kind]
        order = {q["q"]: [row["slug"] for row in ranking[q["q"]].explain] for q in chosen}
        found = [_rank(order[q["q"]], q["target"]) for q in chosen]
        parts = [summary([r for r, q in zip(found, chosen, strict=True) if half(q["q"]) == h]) for h in "AB"]
        both = ""
        if all("targets" in q for q in chosen):
            whole = sum(1 for q in chosen if set(q["targets"]) <= set(order[q["q"]][:5]))
            other = sum(1 for q in chosen if order[q["q"]][:1] == q["targets"][1:2])  # the bridge led
            anyone = [_first(order[q["q"]], q["targets"]) for q in chosen]
            both = f"   all in top 5: {whole}/{len(chosen)}   best hit is the other target: {other}"
            both += f"   MRR of the first target found (either): {mrr(anyone):.2f}"
        print(f"    {kind:<13} {summary(found)}   A: {parts[0]}   B: {parts[1]}{both}")
    unrelated = [q for q in queries if q["kind"] == "unrelated"]
    answered = [q for q in queries if q["kind"] != "unrelated"]
    every = [_rank([row["slug"] for row in ranking[q["q"]].explain], q["target"]) for q in answered]
    halves = "   ".join(f"{h}: MRR {mrr(by_half(every, answered, h)):.3f}" for h in "AB")
    print(f"    all answerable ({len(answered)}) MRR {mrr(every):.3f}   {halves}   (longchat target >= 0.88)")
    if any("targets" in q for q in answered):  # a question with several: either target found counts
        order = {q["q"]: [row["slug"] for row in ranking[q["q"]].explain] for q in answered}
        either = [_first(order[q["q"]], q.get("targets", [q["target"]])) for q in answered]
        print(f"    all answerable, MRR of the first target found (either; the usual MRR) {mrr(either):.3f}")
    refused = [q for q in unrelated if not ranking[q["q"]].picked]
    wrong = [q for q in answered if not ranking[q["q"]].picked]
    cells = [f"{sum(1 for q in g if half(q['q']) == h)}" for g in (refused, wrong) for h in "AB"]
    print(f"    unrelated refused {len(refused)}/{len(unrelated)} (A {cells[0]} + B {cells[1]}); ", end="")
    print(f"answerable wrongly refused {len(wrong)}/{len(answered)} (A {cells[2]} + B {cells[3]})")
    calibrated = _calibration(index)
    if calibrated:
        print(f"    store floor: {calibrated}")


def _calibration(index: SearchIndex) -> str:
    """The store's own floor (kura.recall.floor), when this kura has one."""
    try:
        from kura.recall.floor import calibration
    except ImportError:  # measuring a kura from before the per-store floor
        return ""
    found = calibration(index)
    if found is None:
        return ""
    short = getattr(found, "short", 1.0)  # a kura from before the share of question-sized memories: all
    own = f"p10 of the memories' own margins {found.p10:.3f}, question-sized {short:.2f}"
    return f"margin {found.margin:.3f} ({own})"


def _first(order: list[str], targets: list[str]) -> int | None:
    """The rank of whichever of ``targets`` comes first in ``order``."""
    return min((rank for target in targets if (rank := _rank(order, target))), default=None)


def _rank(order: list[str], target: str) -> int | None:
    return order.index(target) + 1 if target in order else None


def main(
    which: str,
    padding: int,
    style: str,
    calibrate: bool,
    keep: Path | None,
    size: int = 0,
    listed: bool = False,
) -> None:
    source = LONGCHAT if which == "longchat" else CONVERSATIONAL
    folder, asked = FOLDERS.get(which, (None, source / "questions.jsonl"))
    queries = [json.loads(line) for line in asked.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        root = keep or Path(tmp) / "store"
        if not (root / "MEMORY.md").is_file():  # a kept store is reused, its .kura/ index too
            if folder:
                shutil.copytree(folder, root, ignore=shutil.ignore_patterns(".kura"))
            else:
                write_conversational(root, source)
            if style == "templated":
                pad_templated(root, padding)
            else:
                distractors.write(root, padding)
        store = Store(root)
        dense = SearchIndex(store)
        dense.update()
        lexical = SearchIndex(store, embedder=Unavailable("measuring the lexical path"))
        lexical.update()
        if padding:
            print(f"padded with {padding} {style} distractors")
        if size:
            small(root, size, queries)
        else:
            quality(store, dense, lexical, queries, listed=listed, blind=which == "team")
            through_recall(store, dense, queries)
        if calibrate:
            floors(dense, queries)
        dense.close()
        lexical.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=(*FOLDERS, "conversational", "longchat"), default="bakery")
    parser.add_argument("--pad", type=int, default=0, help="add this many distractor memories")
    parser.add_argument("--pad-style", choices=("realistic", "templated"), default="realistic")
    parser.add_argument("--floors", action="store_true", help="print the score spread and a floor grid")
    parser.add_argument("--keep", type=Path, help="build the padded store here, or reuse it (and its index)")
    parser.add_argument("--small", type=int, default=0, help=f"measure stores of N memories ({DRAWS} draws)")
    parser.add_argument("--misses", action="store_true", help="list the questions fused does not rank first")
    options = parser.parse_args()
    if isinstance(load_embedder(), Unavailable):
        print("the embedder is unavailable; only the lexical figures mean anything")
    main(
        options.set,
        options.pad,
        options.pad_style,
        options.floors,
        options.keep,
        options.small,
        options.misses,
    )
