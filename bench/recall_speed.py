"""Recall speed at scale: the first index build, cold and warm questions, one-memory updates.

    python bench/recall_speed.py [N ...] [--keep DIR]     # default: 500 5000 20000

For each N the store is bench/map_scale.py's synthetic store (same generator, copied with
``cp -a``). Whole-process figures are the wall time of a fresh ``kura`` process, as a hook
or an agent runs it (bytecode caching on); warm figures are taken inside this process:

    index build       first ``kura -s ROOT index`` (embeds every memory), and memories/s
    first recall      the first ``kura recall`` after the build (it saves the vector matrix)
    cold recall       ``kura -s ROOT recall "Q" --no-model``, per question best of 3 and
                      median of 5, over a few questions (the model load is included)
    warm recall       ``kura.recall.recall.recall(store, q, index=index)`` with the index open and the
                      embedder loaded: median and p95 over 50 questions; ``search`` alone too
    refresh one       ``index.refresh([slug])`` after one memory's body changed (10 files)
    update one        ``index.update()`` after one edit: the stamp, catalog and re-embed path
                      (and the next warm recall, which reloads the vector matrix)
    cold after edit   a fresh ``kura recall`` right after one memory changed (re-indexes it)

Every edited file is restored before the next step. The 20,000-memory build embeds every
memory and takes minutes: ``--keep DIR`` keeps each store in DIR/N and reuses it (and its
index) when it is already built. Targets (the recall speed issue, 2-core machine): cold
recall ≤ 0.5 s with the model load, warm ≤ 20 ms a question, one-memory update ≤ 50 ms;
issue 19 adds a build of ≥ 300 memories/s in ≤ 400 MB and a recall's peak RSS ≤ 200 MB
(the largest peak of any cold recall process, read by a small wrapper process).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from map_scale import ENV, WORDS, generate

RUN = time.strftime("%H%M%S")  # edits differ between runs, so a kept store has no vector for them yet
COLD = (
    "How do we restore the nightly postgres backup?",
    "Who is on call when redis starts timing out?",
    "Why is the pytest fixture flaky on staging?",
    "Which port does the caddy webhook listen on?",
)
SHAPES = (
    "How do we {a} the {b} after an incident?",
    "Who is on call when {a} {b} fails?",
    "Which port does the {a} {b} use?",
    "How much disk does {a} need for {b}?",
    "What did we decide about {a} and {b}?",
    "Why does the {a} {b} keep timing out?",
    "Which runbook covers a {a} {b} outage?",
    "When does the nightly {a} {b} run?",
    "How do we roll back a bad {a} {b} change?",
    "What is the latency budget for {a} on {b}?",
)


def questions(count: int, seed: int = 11) -> list[str]:
    """``count`` questions over the generator's vocabulary, every shape in turn."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        a, b = rng.sample(WORDS, 2)
        out.append(SHAPES[i % len(SHAPES)].format(a=a, b=b))
    return out


PEAKS: dict[str, float] = {}  # the largest peak RSS (MB) seen per kind of process
# A child forked from this (large) process starts its life with this process's pages counted
# in its peak RSS; a small wrapper runs ``kura`` and reports the peak of that child alone.
MEASURED = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(done.returncode)"
)


def kura(*args: str, kind: str = "other") -> tuple[float, int, str]:
    """Wall time, exit code and output of one fresh ``kura`` process; its peak RSS is kept
    in ``PEAKS[kind]`` (the largest seen)."""
    start = time.perf_counter()
    command = [sys.executable, "-c", MEASURED, sys.executable, "-m", "kura", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    elapsed = time.perf_counter() - start
    peak = int(done.stderr.strip().splitlines()[-1]) / 1024  # kB on Linux
    PEAKS[kind] = max(PEAKS.get(kind, 0.0), peak)
    return elapsed, done.returncode, done.stdout.strip()


def recall_once(root: Path, question: str, kind: str = "recall") -> tuple[float, int]:
    elapsed, code, _ = kura("-s", str(root), "recall", question, "--no-model", kind=kind)
    return elapsed, code


def p95(values: list[float]) -> float:
    ranked = sorted(values)
    return ranked[math.ceil(0.95 * len(ranked)) - 1]


def ms(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


@contextmanager
def store_for(n: int, keep: Path | None) -> Iterator[tuple[Path, bool]]:
    """The store for N memories and whether its index still has to be built."""
    if keep is not None:
        root = keep / str(n)
        if (root / ".kura" / "search.db").is_file():
            yield root, False
            return
        shutil.rmtree(root, ignore_errors=True)
        fill(root, n, keep / f"{n}.generated")
        yield root, True
        return
    with tempfile.TemporaryDirectory() as tmp:
        fill(Path(tmp) / "copy", n, Path(tmp) / "generated")
        yield Path(tmp) / "copy", True


def fill(root: Path, n: int, scratch: Path) -> None:
    shutil.rmtree(scratch, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    generate(scratch, n)
    subprocess.run(["cp", "-a", str(scratch), str(root)], check=True)
    shutil.rmtree(scratch)


def slug_of(n: int, k: int) -> str:
    return f"m{(k * 7919) % n:05d}"


@contextmanager
def edited(root: Path, slug: str, k: int) -> Iterator[None]:
    """Memory ``slug`` with a different body (a new reason line) until the block ends."""
    path = root / f"{slug}.md"
    original = path.read_bytes()
    a, b, c = random.Random(k).sample(WORDS, 3)
    new = f"**Why:** edit {k} of run {RUN}: the {a} {b} broke during the {c} window."
    path.write_bytes(original.replace(b"**Why:** it matters.", new.encode()))
    try:
        yield
    finally:
        path.write_bytes(original)


def cold(root: Path) -> dict[str, Any]:
    """Per question: best of the first 3 runs and median of 5; exit codes seen."""
    runs: dict[str, list[float]] = {q: [] for q in COLD}
    codes: set[int] = set()
    for _ in range(5):  # rounds, so a noisy moment spreads over every question
        for question in COLD:
            elapsed, code = recall_once(root, question)
            runs[question].append(elapsed)
            codes.add(code)
    best = [min(times[:3]) for times in runs.values()]
    median = [statistics.median(times) for times in runs.values()]
    return {"best": best, "median": median, "codes": sorted(codes)}


def warm(root: Path, n: int) -> dict[str, Any]:
    """In-process figures: warm recall and search, one-memory refresh and update."""
    from kura.recall.recall import recall
    from kura.recall.search import SearchIndex
    from kura.store.store import Store

    store = Store(root)
    index = SearchIndex(store)
    index.update()
    index.embedder  # noqa: B018 - load it now, not inside the first timed question
    asked = questions(52)
    for question in asked[:2]:
        recall(store, question, index=index)
    answers = []
    recall_ms = []
    for question in asked[2:]:
        start = time.perf_counter()
        answers.append(recall(store, question, index=index))
        recall_ms.append((time.perf_counter() - start) * 1000)
    search_ms = [ms(lambda q=question: index.search(q)) for question in asked[2:]]
    refresh_ms = []
    for k in range(1, 11):
        slug = slug_of(n, k)
        with edited(root, slug, k):
            refresh_ms.append(ms(lambda s=slug: index.refresh([s])))
        index.refresh([slug])  # restored: the index follows the file back
    update_ms = []
    for k in range(11, 16):
        with edited(root, slug_of(n, k), k):
            update_ms.append(ms(index.update))
        index.update()
    after = ms(lambda: recall(store, asked[2], index=index))
    index.close()
    picked = sum(1 for found in answers if found.picked)
    return {"recall": recall_ms, "search": search_ms, "refresh": refresh_ms, "update": update_ms,
            "picked": picked, "asked": len(answers), "after": after}  # fmt: skip


def cold_after_edit(root: Path, n: int) -> list[float]:
    times = []
    for k in range(21, 24):
        recall_once(root, COLD[0])  # settle: index and saved matrix current before the edit
        with edited(root, slug_of(n, k), k):
            times.append(recall_once(root, COLD[k % len(COLD)], kind="edited")[0])
    recall_once(root, COLD[0])
    return times


def measure(n: int, keep: Path | None) -> dict[str, Any]:
    kura("--help")  # compile and cache the modules once
    out: dict[str, Any] = {"n": n}
    with store_for(n, keep) as (root, fresh):
        PEAKS.clear()
        elapsed, code, said = kura("-s", str(root), "index", kind="index")
        out["build"] = elapsed if fresh else None
        what = f"build {elapsed:.2f} s ({n / elapsed:.0f} memories/s)" if fresh else f"check {elapsed:.2f} s"
        print(
            f"{n:>6} memories (load average {os.getloadavg()[0]:.2f}); index {what}; exit {code}: {said}",
            flush=True,
        )
        out["first"] = recall_once(root, COLD[0], kind="first")[0]
        say(
            f"first recall after the build {out['first']:.3f} s (saves the vector matrix), "
            f"peak RSS {PEAKS['first']:.0f} MB"
        )
        out["cold"] = cold(root)
        say(f"cold recall best of 3   {seconds(out['cold']['best'])}")
        say(f"cold recall median of 5 {seconds(out['cold']['median'])} (exit codes {out['cold']['codes']})")
        out["warm"] = warm(root, n)
        report_warm(out["warm"])
        out["edit"] = cold_after_edit(root, n)
        say(f"cold recall after one edit {seconds(out['edit'])}")
        out["rss"] = dict(PEAKS)
        say(
            f"peak RSS: index build {PEAKS['index']:.0f} MB, a cold recall {PEAKS['recall']:.0f} MB, "
            f"a cold recall that re-embeds an edited memory {PEAKS['edited']:.0f} MB"
        )
    return out


def say(text: str) -> None:
    print(f"        {text}", flush=True)


def seconds(values: list[float]) -> str:
    return "  ".join(f"{t:.3f}" for t in values) + " s"


def report_warm(warm: dict[str, Any]) -> None:
    labels = {
        "recall": "warm recall",
        "search": "warm search",
        "refresh": "refresh one",
        "update": "update one",
    }
    for key, label in labels.items():
        values = warm[key]
        say(
            f"{label:<11} median {statistics.median(values):7.2f} ms  p95 {p95(values):7.2f} ms"
            f"  max {max(values):7.2f} ms  ({len(values)} runs)"
        )
    say(f"warm questions that picked something: {warm['picked']}/{warm['asked']}")
    say(f"first warm recall after the updates {warm['after']:.2f} ms (the matrix is reloaded)")


def table(rows: list[dict[str, Any]]) -> None:
    """One line per figure, one column per N, the issue's target next to each figure."""
    med = statistics.median
    lines: list[tuple[str, str, Callable[[dict[str, Any]], str]]] = [
        (
            "index build, whole process (s)",
            "",
            lambda r: "reused" if r["build"] is None else f"{r['build']:.1f}",
        ),
        (
            "  memories per second",
            "≥ 300",
            lambda r: "" if r["build"] is None else f"{r['n'] / r['build']:.0f}",
        ),
        ("  peak RSS (MB)", "≤ 400", lambda r: "" if r["build"] is None else f"{r['rss']['index']:.0f}"),
        ("first recall after the build (s)", "", lambda r: f"{r['first']:.3f}"),
        ("cold recall, best of 3 (s)", "≤ 0.5", lambda r: f"{med(r['cold']['best']):.3f}"),
        ("cold recall, median of 5 (s)", "≤ 0.5", lambda r: f"{med(r['cold']['median']):.3f}"),
        ("cold recall after one edit (s)", "≤ 0.5", lambda r: f"{med(r['edit']):.3f}"),
        ("cold recall, peak RSS (MB)", "≤ 200", lambda r: f"{r['rss']['recall']:.0f}"),
        ("  after one edit, peak RSS (MB)", "", lambda r: f"{r['rss']['edited']:.0f}"),
        ("warm recall, median (ms)", "≤ 20", lambda r: f"{med(r['warm']['recall']):.1f}"),
        ("warm recall, p95 (ms)", "≤ 20", lambda r: f"{p95(r['warm']['recall']):.1f}"),
        ("warm search alone, median (ms)", "", lambda r: f"{med(r['warm']['search']):.1f}"),
        ("warm search alone, p95 (ms)", "", lambda r: f"{p95(r['warm']['search']):.1f}"),
        ("refresh one memory, median (ms)", "≤ 50", lambda r: f"{med(r['warm']['refresh']):.1f}"),
        ("refresh one memory, p95 (ms)", "≤ 50", lambda r: f"{p95(r['warm']['refresh']):.1f}"),
        ("update after one edit, median (ms)", "≤ 50", lambda r: f"{med(r['warm']['update']):.1f}"),
        ("next warm recall after update (ms)", "", lambda r: f"{r['warm']['after']:.1f}"),
    ]
    print(f"\n{'':<36}{'target':>8}" + "".join(f"{row['n']:>9}" for row in rows))
    for label, target, cell in lines:
        print(f"{label:<36}{target:>8}" + "".join(f"{cell(row):>9}" for row in rows))
    print("cold figures are the median over the questions (after one edit: over 3 edits)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 5000, 20000])
    parser.add_argument("--keep", type=Path, help="keep the stores in DIR/N and reuse built ones")
    options = parser.parse_args()
    table([measure(size, options.keep) for size in options.sizes])
