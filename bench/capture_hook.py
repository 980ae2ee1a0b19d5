"""``kura hook capture`` as Claude Code runs it: how long the host waits for the hook.

    python bench/capture_hook.py [--runs R]        # default: 20 runs

A project folder with its store (``./memory``) and a Claude Code transcript; the hook is
run R times with the ``Stop`` JSON on stdin, each time as a fresh process, and the figure
is its wall time from start to exit (the pass it leaves behind runs on, detached, and is
not counted). Every run waits for the worker it started to finish first, so each firing
starts a worker (the costlier case: a firing that finds one running only leaves a mark).
The CPU seconds (user + system) of each hook process are printed too; a loaded machine
inflates them far less than the wall time. The issue's target: the hook returns within
0.3 s.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KURA = [sys.executable, "-m", "kura"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def settled(state: Path) -> None:
    """Wait until no worker holds the capture lock."""
    fd = os.open(state / "capture.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        ENV["KURA_HOME"] = tmp  # the person's own kura.toml neither chooses the store nor is written
        project = Path(tmp) / "project"
        subprocess.run([*KURA, "init", "main", "--path", str(project / "memory")], env=ENV, check=True,
                       capture_output=True, cwd=tmp)  # fmt: skip
        transcript = Path(tmp) / "t.jsonl"
        for n in range(args.runs + 1):
            row = {"type": "user", "sessionId": "bench", "uuid": f"u{n}", "cwd": str(project),
                   "message": {"role": "user", "content": f"The build number today is b-{n}."}}  # fmt: skip
            with transcript.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            said = {"session_id": "bench", "transcript_path": str(transcript), "cwd": str(project),
                    "hook_event_name": "Stop"}  # fmt: skip
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run([*KURA, "hook", "capture"], input=json.dumps(said), cwd=project, env=ENV,
                           check=True, capture_output=True, text=True)  # fmt: skip
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if n:  # the first run writes the bytecode
                walls.append(wall)
                cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            settled(project / "memory" / ".kura")
    print(f"kura hook capture, {args.runs} runs (load average {os.getloadavg()[0]:.2f})")
    for label, seconds in (("wall", walls), ("cpu", cpus)):
        p50, p90 = statistics.median(seconds), statistics.quantiles(seconds, n=10)[8]
        print(f"{label:<5} p50 {p50 * 1000:5.0f} ms   p90 {p90 * 1000:5.0f} ms")


if __name__ == "__main__":
    main()
