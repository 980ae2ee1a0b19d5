"""Where the fusion loses to one of its parts (issue 30): MRR per kind and half, and the questions.

    python bench/fusion_losses.py [--set bakery|team] [--pad N] [--keep DIR]

bench/recall_quality.py prints each kind's MRR to two places and checks fused >= max(lexical,
dense) only over every answerable question (whole, A, B). This prints, for each kind and for
all answerable questions, the three methods' MRR to three places in the whole and in each half,
``no`` where fused is below the better part, and then every question whose target the fusion
ranks lower than lexical or dense does, with the three ranks (``-``: past 50). The store is
built as recall_quality builds it (same padding, same ``--keep`` reuse), so the figures agree.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import distractors
import recall_quality as rq

from kura.recall.embed import Unavailable
from kura.recall.search import SearchIndex
from kura.store.store import Store


def table(ranked: rq.Ranked, answered: list[dict[str, Any]]) -> None:
    print("  MRR             whole: lexical dense  fused  | A: lex  dense  fused  | B: lex  dense  fused")
    kinds = sorted({q["kind"] for q in answered})
    for kind in [*kinds, "all"]:
        chosen = [q for q in answered if kind in ("all", q["kind"])]
        cells = []
        for which in ("", "A", "B"):
            part = [q for q in chosen if which in ("", rq.half(q["q"]))]
            mrr = {m: rq.mrr(rq.ranks(ranked[m], part)) for m in rq.METHODS}
            low = mrr["fused"] < max(mrr["lexical"], mrr["dense"]) - 1e-9
            cells.append(" ".join(f"{mrr[m]:.3f}" for m in rq.METHODS) + (" no" if low else "   "))
        print(f"    {kind + f' ({len(chosen)})':<17} " + "  |  ".join(cells))


def losses(ranked: rq.Ranked, answered: list[dict[str, Any]]) -> None:
    print("  fused ranks the target below lexical or dense (half, kind, lexical / dense / fused):")
    for query in answered:
        found = {m: rq.ranks(ranked[m], [query])[0] or 51 for m in rq.METHODS}
        if found["fused"] > min(found["lexical"], found["dense"]):
            cells = " / ".join(str(found[m]) if found[m] <= 50 else "-" for m in rq.METHODS)
            print(f"    {rq.half(query['q'])} {query['kind']:<11} {cells:<14} {query['q']}")


def main(which: str, padding: int, keep: Path | None) -> None:
    folder, asked = rq.FOLDERS[which]
    queries = [json.loads(line) for line in asked.read_text().splitlines() if line.strip()]
    answered = [q for q in queries if q["kind"] != "unrelated"]
    with tempfile.TemporaryDirectory() as tmp:
        root = keep or Path(tmp) / "store"
        if not (root / "MEMORY.md").is_file():
            rq.shutil.copytree(folder, root, ignore=rq.shutil.ignore_patterns(".kura"))
            distractors.write(root, padding)
        store = Store(root)
        dense, lexical = SearchIndex(store), SearchIndex(store, embedder=Unavailable("lexical"))
        dense.update()
        lexical.update()
        print(f"{len(store.slugs())} memories, {len(answered)} answerable questions")
        ranked = rq.rankings(dense, lexical, answered)
        table(ranked, answered)
        losses(ranked, answered)
        dense.close()
        lexical.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=tuple(rq.FOLDERS), default="team")
    parser.add_argument("--pad", type=int, default=0, help="add this many realistic distractors")
    parser.add_argument("--keep", type=Path, help="build the (padded) store here, or reuse it")
    options = parser.parse_args()
    main(options.set, options.pad, options.keep)
