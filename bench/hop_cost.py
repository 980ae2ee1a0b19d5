"""What the second hop adds to a warm recall, in one process (issue 30: ≤ 3 ms at 20,000).

    python bench/hop_cost.py STORE [--runs 30]

Opens STORE's search index once (``cp -a`` a generated store first, e.g. ``python
bench/map_scale.py --write DIR 20000``; the first run embeds it whole), asks every question
once to warm it, then asks ``--runs`` different questions in turn, each twice: the search
recall starts from (``SearchIndex.search``), and the hop alone on its result
(``kura.recall.hop.second_hop``), then the hop again with the words' counts forgotten (as
if every word of the lead were new to the process), then the whole ``recall()`` (its search,
hop, floor and the memories' text). Prints the medians, wall and CPU, and the
load. The questions differ, so no per-question cache makes a figure look better than it is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from kura.recall import headed, hop
from kura.recall.recall import FLOOR, recall
from kura.recall.search import SearchIndex, open_index
from kura.store.store import Store

SUBJECTS = "caddy redis postgres grafana pytest hetzner uv compose nginx sentry token lockfile".split()
ASKS = (
    "which port does the {} runbook use",
    "why did we move the {} migration",
    "how much disk does {} need",
    "what did Sam decide about {}",
    "where does the {} rollback live",
)
TWO_PARTS = (
    "which port does the {} runbook use, and who wrote it",
    "what did Sam change in the {} config that we deployed",
    "the {} migration Sam wrote: why was it moved",
    "how much bigger is the disk for {} than the one for grafana",
    "what broke in the {} service Sam restarted",
)


def questions(runs: int, asks: tuple[str, ...] = ASKS) -> list[str]:
    every = [ask.format(subject) for subject in SUBJECTS for ask in asks]
    return every[:runs]


def timed(call: object) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()  # type: ignore[operator]
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main(root: Path, runs: int) -> None:
    store = Store(root)
    index = open_index(store)
    (memories,) = index.db.execute("SELECT count(*) FROM docs").fetchone()
    for asks, label in ((ASKS, "questions"), (TWO_PARTS, "questions in two parts")):
        asked = questions(runs, asks)
        rows = measure(store, index, asked)
        load = os.getloadavg()[0]
        print(f"{memories} memories, {len(asked)} {label}, load {load:.2f}")
        for row, cells in rows.items():
            wall = statistics.median(c[0] for c in cells) * 1000
            cpu = statistics.median(c[1] for c in cells) * 1000
            print(f"  {row:<22} median {wall:6.2f} ms wall  {cpu:6.2f} ms CPU")
    print("  target: the hop and the asked-first step <= 3 ms")
    index.close()


def measure(store: Store, index: SearchIndex, asked: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Per step, each question's (wall, CPU) seconds, the index warmed on every question first."""
    depth = 12  # what recall() searches for its default top of 3
    for question in asked:  # warm: the matrix in float32, the model loaded, every page cached
        headed.asked_first(
            index,
            question,
            hop.second_hop(index, question, index.search(question, k=depth), depth, least=FLOOR),
        )
    labels = ("search", "hop", "hop, counts forgotten", "asked first", "asked, counts forgotten", "recall()")
    rows: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
    for question in asked:
        wall, cpu, first = timed(lambda q=question: index.search(q, k=depth))
        rows["search"].append((wall, cpu))
        wall, cpu, hopped = timed(lambda q=question, f=first: hop.second_hop(index, q, f, depth, least=FLOOR))
        rows["hop"].append((wall, cpu))
        hop._COUNTS.clear()  # as if every word of the lead were new to this process
        wall, cpu, _ = timed(lambda q=question, f=first: hop.second_hop(index, q, f, depth, least=FLOOR))
        rows["hop, counts forgotten"].append((wall, cpu))
        wall, cpu, _ = timed(lambda q=question, h=hopped: headed.asked_first(index, q, h))
        rows["asked first"].append((wall, cpu))
        hop._COUNTS.clear()
        wall, cpu, _ = timed(lambda q=question, h=hopped: headed.asked_first(index, q, h))
        rows["asked, counts forgotten"].append((wall, cpu))
        wall, cpu, _ = timed(lambda q=question: recall(store, q, index=index))
        rows["recall()"].append((wall, cpu))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    main(options.store, options.runs)
