"""What the ladder costs a distiller pass: wall time with and without it, and scratch's size.

    python bench/ladder_speed.py [--sessions S] [--turns T] [--window W] [--runs R]
    # default: 200 sessions × 60 turns, window 2000 tokens, median of 3

Synthetic Claude Code journals, one file per session: every user turn states a specific
fact ("the ferry-12 service listens on port 8012 since 2026-03-04", a fifth of them
repeated from a shared pool so they recur across sessions), every assistant turn is a
paragraph of filler. One rule-based ``run_pass`` (no model) reads all of it into a fresh
store, with the ladder and with ``_climb`` stubbed out; printed: the median wall time of
each, the mentions kept, the items that crossed, and ``.kura/scratch.json``'s size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from kura.distill import run as run_module
from kura.distill.run import journals_for, run_pass
from kura.store.store import init_store

FILLER = "I read the module and the tests around it, and nothing there changes the plan. " * 5


def fact(session: int, turn: int) -> str:
    shared = turn % 5 == 0  # a fifth from a shared pool: these recur across sessions
    n = turn // 5 % 12 if shared else 1000 + session * 100 + turn
    return f"The ferry-{n} service listens on port {8000 + n % 1000} since 2026-03-{1 + n % 28:02d}."


def journal(folder: Path, sessions: int, turns: int) -> None:
    folder.mkdir(parents=True)
    for s in range(sessions):
        sid = f"bench-{s:04d}"
        rows: list[dict[str, Any]] = []
        for t in range(turns):
            for kind, text in (("user", fact(s, t)), ("assistant", FILLER)):
                content: Any = text if kind == "user" else [{"type": "text", "text": text}]
                rows.append({"type": kind, "sessionId": sid, "uuid": f"{sid}-{t}-{kind}",
                             "timestamp": "2026-11-30T08:00:00Z",
                             "message": {"role": kind, "content": content}})  # fmt: skip
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def one(base: Path, journals: Path, *, ladder: bool, window: int) -> tuple[float, dict[str, Any], int]:
    store, _ = init_store(base / f"store-{time.monotonic_ns()}", name="bench")
    found = journals_for({}, {"journals": {"claude": [str(journals)]}}, config_source=None, store="bench")
    saved = run_module._climb
    if not ladder:
        run_module._climb = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        metrics = run_pass(store, found, window_tokens=window)
        took = time.perf_counter() - start
    finally:
        run_module._climb = saved  # type: ignore[assignment]
    scratch = store.state_dir / "scratch.json"
    return took, metrics.to_dict(), scratch.stat().st_size if scratch.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--window", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        journal(base / "journals", args.sessions, args.turns)
        for ladder in (False, True):
            runs = [one(base, base / "journals", ladder=ladder, window=args.window) for _ in range(args.runs)]
            took = statistics.median(r[0] for r in runs)
            _, metrics, size = runs[-1]
            print(
                f"ladder {'on ' if ladder else 'off'}  {args.sessions} sessions × {args.turns} turns: "
                f"pass {took:.2f} s (median of {args.runs}), mentions {metrics['scratch_mentions']}, "
                f"crossed {metrics['crossed']}, drafts {len(metrics['drafts'])}, "
                f"scratch.json {size / 1024:.0f} KiB"
            )


if __name__ == "__main__":
    main()
