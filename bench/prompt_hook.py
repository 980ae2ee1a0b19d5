"""The UserPromptSubmit hook as a host runs it: latency of a whole ``kura hook prompt`` process.

    python bench/prompt_hook.py [N] [--runs R]        # default: 1000 memories, 30 runs

A synthetic store of N memories (bench/map_scale.py's generator) is made the store of a
project folder (``./memory``), its search index built once (``kura index``), and then
``kura hook prompt`` is run R times with Claude Code's UserPromptSubmit JSON on stdin —
prompts over the generator's vocabulary (which bear on some memories) and prompts that
bear on none. Each figure is the wall time of the fresh process, from start to exit,
with bytecode caching on (as after the first run of an installed kura):

    p50 / p90     over all runs, and for the prompts that printed memories vs nothing;
                  and the CPU seconds (user + system) of each process, which a loaded
                  machine inflates far less than the wall time
    printed       the largest output, in characters (the cap is 1,500)

The issue's target is a fast hook on a warm machine; the load average is printed beside
the figures, since a loaded 2-core machine stretches wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from map_scale import ENV, WORDS, generate

KURA = [sys.executable, "-m", "kura"]
CPU: list[float] = []  # user + system seconds of each hook process
MISSES = (
    "What is the airspeed velocity of an unladen swallow?",
    "Write me a limerick about a cat who loves jazz.",
    "Translate 'good morning' into Portuguese.",
)


def prompts(runs: int) -> list[str]:
    """Half over the store's vocabulary, half bearing on nothing."""
    out = []
    for i in range(runs):
        a, b = WORDS[(3 * i) % len(WORDS)], WORDS[(7 * i + 1) % len(WORDS)]
        out.append(
            f"How do we handle the {a} {b} after an incident?" if i % 2 == 0 else MISSES[i % len(MISSES)]
        )
    return out


def hook(project: Path, prompt: str) -> tuple[float, str]:
    said = {
        "session_id": "bench",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([*KURA, "hook", "prompt"], input=json.dumps(said), cwd=project, env=ENV,
                          capture_output=True, text=True, check=True)  # fmt: skip
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return took, done.stdout


def figures(label: str, times: list[float]) -> str:
    if not times:
        return f"{label:<10} (none)"
    p90 = statistics.quantiles(times, n=10)[8] if len(times) > 1 else times[0]
    p50 = statistics.median(times)
    return f"{label:<10} p50 {p50 * 1000:6.0f} ms   p90 {p90 * 1000:6.0f} ms   n={len(times)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("n", nargs="?", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ENV["KURA_HOME"] = tmp  # the person's own kura.toml does not choose another store
        project = Path(tmp) / "project"
        generate(project / "memory", args.n)
        subprocess.run([*KURA, "-s", str(project / "memory"), "index"], env=ENV, check=True,
                       capture_output=True)  # fmt: skip
        hook(project, "warm-up: how do we deploy?")  # bytecode and the integer model, made once
        hit, miss, printed, wrong = [], [], 0, 0
        for prompt in prompts(args.runs):
            took, out = hook(project, prompt)
            (hit if out else miss).append(took)
            wrong += bool(out) and prompt in MISSES  # a prompt that bears on nothing printed memories
            printed = max(printed, len(out))
    print(f"kura hook prompt, {args.n} memories, {args.runs} runs (load average {os.getloadavg()[0]:.2f})")
    print(figures("all", hit + miss))
    print(figures("printed", hit))
    print(figures("nothing", miss))
    print(figures("cpu", CPU[1:]))  # user + system of each process (the warm-up left out)
    print(f"largest output: {printed} characters; prompts bearing on nothing that printed: {wrong}")


if __name__ == "__main__":
    main()
