"""Recall quality on a held-out set: recall@1, recall@5 and MRR per method and query kind.

    python bench/recall_quality.py [--pad N] [--pad-style realistic|templated] [--floors]

Uses bench/eval/store (64 memories of a family bakery and rental flat, not the sample
store) and bench/eval/queries.jsonl (166 questions: 64 lexical, 72 paraphrases that share
no content word with their target, 30 about subjects the store does not hold). Methods:
``lexical`` (FTS5 BM25, the offline fallback), ``dense`` (MiniLM cosine alone) and ``fused``
(cosine + 0.2 × IDF share, what kura uses). For the unrelated questions it reports how
often recall refuses (picks nothing).

``--pad N`` adds N distractor memories, to see how the numbers hold in a bigger store. By
default they are bench/distractors.py's realistic ones (other subjects written like real
memories, a quarter of them hard negatives close to the bakery and the flat, none about an
unrelated question's subject); ``--pad-style templated`` gives the old filler ("kayak and
chess details number 12").

``--floors`` calibrates ``kura.recall.recall.FLOOR``: the distribution of the best hit's fused
score for unrelated and for answerable questions, then, for absolute floors 0.20 to 0.45
with recall's relative rule (picks within ``RELATIVE`` of the best), how many unrelated
questions are refused and how many answerable ones are wrongly refused (nothing picked).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
from pathlib import Path

import distractors

from kura.recall.embed import Unavailable, load_embedder
from kura.recall.recall import FLOOR, RELATIVE, recall
from kura.recall.search import Hit, SearchIndex
from kura.store.store import Store

HERE = Path(__file__).parent / "eval"
TOPICS = "kayak harbour violin chess telescope beekeeping pottery marathon origami falconry".split()
TOP = 3  # recall's default
GRID = [0.20 + 0.025 * step for step in range(11)]


def pad_templated(root: Path, n: int) -> None:
    rng = random.Random(3)
    for i in range(n):
        a, b = rng.sample(TOPICS, 2)
        (root / f"pad-{i:05d}.md").write_text(
            f"---\nname: {a} note {i}\ndescription: {a} and {b} details number {i} for the club\n"
            f"type: reference\n---\n\nSomething about {a} and {b}, entry {i}.\n"
        )


def ranks(index: SearchIndex, queries: list[dict[str, str]], method: str) -> list[int | None]:
    out: list[int | None] = []
    for query in queries:
        results = index.search(query["q"], k=50)
        hits = list(results.hits)
        if method == "dense":
            hits.sort(key=lambda h: -(h.cosine or 0.0))
        slugs = [h.slug for h in hits]
        out.append(slugs.index(query["target"]) + 1 if query["target"] in slugs else None)
    return out


def summary(found: list[int | None]) -> str:
    n = len(found) or 1
    at1 = sum(1 for r in found if r == 1) / n
    at5 = sum(1 for r in found if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in found if r is not None) / n
    return f"R@1 {at1:.2f}  R@5 {at5:.2f}  MRR {mrr:.2f}"


def picks(hits: tuple[Hit, ...], floor: float) -> list[str]:
    """What recall picks from fused hits with this absolute floor (kura.recall.recall._pick's rule)."""
    if not hits or hits[0].score < floor:
        return []
    bar = max(floor, hits[0].score * RELATIVE)
    return [h.slug for h in hits[:TOP] if h.score >= bar]


def spread(values: list[float]) -> str:
    q = statistics.quantiles(values, n=20, method="inclusive")  # q[i] is the (i + 1) × 5th percentile
    cells = (min(values), q[1], q[4], q[9], q[14], q[17], max(values))
    return "  ".join(f"{v:.3f}" for v in cells)


def floors(index: SearchIndex, queries: list[dict[str, str]]) -> None:
    """The best fused score per question kind, and the refusals each absolute floor would give."""
    hits = {q["q"]: index.search(q["q"], k=max(TOP * 4, 10)).hits for q in queries}
    unrelated = [q for q in queries if q["kind"] == "unrelated"]
    answerable = [q for q in queries if q["kind"] != "unrelated"]
    paraphrase = [q for q in answerable if q["kind"] == "paraphrase"]
    print("  best hit's fused score      min    p10    p25    median p75    p90    max")
    for label, group in (("unrelated", unrelated), ("answerable", answerable), ("  paraphrase", paraphrase)):
        best = [hits[q["q"]][0].score if hits[q["q"]] else 0.0 for q in group]
        print(f"    {label + f' ({len(group)})':<25} {spread(best)}")
    print(f"  absolute floor with RELATIVE {RELATIVE}: unrelated refused | answerable wrongly refused"
          " (of them paraphrase) | target picked")  # fmt: skip
    for floor in GRID:
        refused = sum(1 for q in unrelated if not picks(hits[q["q"]], floor))
        wrong = [q for q in answerable if not picks(hits[q["q"]], floor)]
        wrong_para = sum(1 for q in wrong if q["kind"] == "paraphrase")
        found = sum(1 for q in answerable if q["target"] in picks(hits[q["q"]], floor))
        mark = "  <- kura.recall.recall.FLOOR" if abs(floor - FLOOR) < 1e-9 else ""
        print(f"    {floor:.3f}   {refused:>2}/{len(unrelated)}   |   {len(wrong):>3}/{len(answerable)}"
              f" ({wrong_para:>2}/{len(paraphrase)})   |   {found:>3}/{len(answerable)}{mark}")  # fmt: skip


def quality(store: Store, dense: SearchIndex, lexical: SearchIndex, queries: list[dict[str, str]]) -> None:
    print(f"{len(store.slugs())} memories, {len(queries)} questions")
    for kind in ("lexical", "paraphrase"):
        chosen = [q for q in queries if q["kind"] == kind]
        print(f"  {kind} questions ({len(chosen)}):")
        for method, index in (("lexical", lexical), ("dense", dense), ("fused", dense)):
            print(f"    {method:<8} {summary(ranks(index, chosen, method))}")
    unrelated = [q for q in queries if q["kind"] == "unrelated"]
    refused = sum(1 for q in unrelated if not recall(store, q["q"], hops=0, index=dense).picked)
    answered = [q for q in queries if q["kind"] != "unrelated"]
    found = sum(1 for q in answered if recall(store, q["q"], hops=0, index=dense).picked)
    print(f"  refused {refused}/{len(unrelated)} unrelated questions", end="; ")
    print(f"answered {found}/{len(answered)} others")


def main(padding: int, style: str, calibrate: bool) -> None:
    queries = [json.loads(line) for line in (HERE / "queries.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        shutil.copytree(HERE / "store", root, ignore=shutil.ignore_patterns(".kura"))
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
        quality(store, dense, lexical, queries)
        if calibrate:
            floors(dense, queries)
        dense.close()
        lexical.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pad", type=int, default=0, help="add this many distractor memories")
    parser.add_argument("--pad-style", choices=("realistic", "templated"), default="realistic")
    parser.add_argument("--floors", action="store_true", help="print the score spread and a floor grid")
    if isinstance(load_embedder(), Unavailable):
        print("the embedder is unavailable; only the lexical figures mean anything")
    options = parser.parse_args()
    main(options.pad, options.pad_style, options.floors)
