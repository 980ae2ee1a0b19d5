"""Recall in the person's language: recall@1 and MRR per language, words alone and fused.

    python bench/lang_quality.py [--lang ja,zh,ko,es,fr,de,pt,ru] [--k 10]

Each set in bench/eval/lang/<code>/ is a small store written in that language
(``memories.jsonl``: slug, name, description, body; twelve memories of an office's ops and
habits, each language phrased its own way) and questions (``questions.jsonl``: ``q``,
``target``, ``kind``): ``lexical`` questions share words with their memory, ``paraphrase``
ones mostly do not, ``unrelated`` ones ask about nothing the store holds. Methods:
``lexical`` (FTS5 BM25 with the ``grams`` column, the offline fallback) and ``fused``
(kura.recall.search with the built-in embedder, whose lexical share reads the same words).
For unrelated questions it prints how many got any lexical hit (words alone cannot refuse)
and the fused score of the best hit beside the answerable questions' median.

Run it against another tree (``PYTHONPATH=/path/to/other/kura python bench/lang_quality.py``)
to compare before and after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kura.recall.embed import Unavailable, load_embedder
from kura.recall.search import SearchIndex
from kura.store.store import Store

HERE = Path(__file__).parent / "eval" / "lang"


def write_store(root: Path, memories: list[dict[str, str]]) -> Store:
    root.mkdir(parents=True)
    lines = []
    for m in memories:
        head = f"name: {json.dumps(m['name'], ensure_ascii=False)}\ndescription: {json.dumps(m['description'], ensure_ascii=False)}"
        (root / f"{m['slug']}.md").write_text(
            f"---\n{head}\ntype: project\n---\n\n{m['body']}\n", encoding="utf-8"
        )
        lines.append(f"- [{m['name']}]({m['slug']}.md) — {m['description']}")
    (root / "MEMORY.md").write_text("# Memory index\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return Store(root)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ranks(
    index: SearchIndex, questions: list[dict[str, Any]], k: int
) -> list[tuple[dict[str, Any], int, float]]:
    """Per question: the target's rank (0 when not in the first ``k``) and the best hit's score."""
    out = []
    for q in questions:
        hits = index.search(q["q"], k=k).hits
        slugs = [hit.slug for hit in hits]
        rank = slugs.index(q["target"]) + 1 if q["target"] in slugs else 0
        out.append((q, rank, hits[0].score if hits else 0.0))
    return out


def figures(found: list[tuple[dict[str, Any], int, float]], kind: str) -> str:
    rows = [rank for q, rank, _ in found if q["kind"] == kind]
    if not rows:
        return ""
    at1 = sum(rank == 1 for rank in rows) / len(rows)
    mrr = sum(1 / rank for rank in rows if rank) / len(rows)
    return f"{kind} n={len(rows)} R@1 {at1:.2f} MRR {mrr:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", default="ja,zh,ko,es,fr,de,pt,ru")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    embedder = load_embedder()
    if isinstance(embedder, Unavailable):
        print(f"no embedder ({embedder.reason}): fused figures are skipped")
    with tempfile.TemporaryDirectory() as tmp:
        for code in args.lang.split(","):
            memories = read_jsonl(HERE / code / "memories.jsonl")
            questions = read_jsonl(HERE / code / "questions.jsonl")
            store = write_store(Path(tmp) / code, memories)
            print(f"== {code}: {len(memories)} memories, {len(questions)} questions")
            methods = [("lexical", Unavailable("words only, for the bench"))]
            if not isinstance(embedder, Unavailable):
                methods.append(("fused", embedder))
            for name, chosen in methods:
                index = SearchIndex(store, embedder=chosen)  # type: ignore[arg-type]
                index.update()
                started = time.perf_counter()
                found = ranks(index, questions, args.k)
                took = time.perf_counter() - started
                index.close()
                answerable = [q for q in questions if q["target"]]
                parts = [figures(found, kind) for kind in ("lexical", "paraphrase")]
                rows = [rank for q, rank, _ in found if q["target"]]
                whole = f"all n={len(answerable)} R@1 {sum(r == 1 for r in rows) / len(rows):.2f} "
                whole += f"MRR {sum(1 / r for r in rows if r) / len(rows):.2f}"
                unrelated = [(score, rank) for q, rank, score in found if not q["target"]]
                best = [score for q, rank, score in found if q["target"]]
                extra = (f"unrelated with a hit {sum(s > 0 for s, _ in unrelated)}/{len(unrelated)}"
                         if name == "lexical" else
                         f"unrelated best score {max(s for s, _ in unrelated):.2f} vs answerable median "
                         f"{statistics.median(best):.2f}")  # fmt: skip
                print(f"  {name:8} {whole} | {' | '.join(p for p in parts if p)} | {extra} ({took:.2f} s)")
    # ruff: noqa: E501


if __name__ == "__main__":
    main()
