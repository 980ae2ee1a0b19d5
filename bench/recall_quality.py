"""Recall quality on a held-out set: recall@1, recall@5 and MRR per method and query kind.

    python bench/recall_quality.py [--pad N]

Uses bench/eval/store (64 memories of a family bakery and rental flat, not the sample
store) and bench/eval/queries.jsonl (166 questions: 64 lexical, 72 paraphrases that share
no content word with their target, 30 about subjects the store does not hold). Methods:
``lexical`` (FTS5 BM25, the offline fallback), ``dense`` (MiniLM cosine alone) and ``fused``
(cosine + 0.2 × IDF share, what kura uses). For the unrelated questions it reports how
often recall refuses (picks nothing). ``--pad N`` adds N distractor memories generated
from other topics, to see how the numbers hold in a bigger store.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from pathlib import Path

from kura.embed import Unavailable, load_embedder
from kura.recall import recall
from kura.search import SearchIndex
from kura.store import Store

HERE = Path(__file__).parent / "eval"
TOPICS = "kayak harbour violin chess telescope beekeeping pottery marathon origami falconry".split()


def pad(root: Path, n: int) -> None:
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


def main(padding: int) -> None:
    queries = [json.loads(line) for line in (HERE / "queries.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        shutil.copytree(HERE / "store", root, ignore=shutil.ignore_patterns(".kura"))
        pad(root, padding)
        store = Store(root)
        dense = SearchIndex(store)
        dense.update()
        lexical = SearchIndex(store, embedder=Unavailable("measuring the lexical path"))
        lexical.update()
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
        dense.close()
        lexical.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pad", type=int, default=0, help="add this many distractor memories")
    if isinstance(load_embedder(), Unavailable):
        print("the embedder is unavailable; only the lexical figures mean anything")
    main(parser.parse_args().pad)
