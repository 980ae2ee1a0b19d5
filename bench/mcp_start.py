"""How soon ``kura mcp`` answers a host: wall time from spawning the process, and its CPU.

    python bench/mcp_start.py [--runs 10] [--memories 1000] [--calls] [--store DIR]

Hosts (Claude Code, VS Code, Goose) start an MCP server and give up on one that does not
answer ``initialize`` within a few seconds; Claude Code headless tells the model the server
"is still connecting" if its first turn comes sooner. So the server must answer the
handshake before it opens a store, loads a model or imports what only a tool call needs.

The script writes a synthetic store of ``--memories`` memories (``bench/map_scale.py``'s
generator), weaves it and builds its search index once, as a store in use has them (or uses
``--store DIR`` as it is). Each run spawns ``python -m kura mcp --store S`` and drives it
with the ``mcp`` SDK's own stdio client, as a host does; figures are seconds from the spawn,
p50 and best of the runs:

    initialize      the initialize result has arrived
    tools/list      and the tool list
    first map       and a kura_map answer (with --calls: opens the store)
    first recall    and a kura_recall answer (with --calls: loads the embedding model)

Then one more process, under ``/usr/bin/time -v``, answers initialize and tools/list and is
closed: its user + system CPU seconds, which a loaded machine (2 cores shared by many
processes) inflates far less than the wall time.

Target (issue 28): initialize within 0.5 s wall on a 2-core machine, tools/list soon after.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from map_scale import generate
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# Measured as installed tools run: with bytecode caching on.
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KURA_URL")}


def params(store: Path, home: Path, *wrapper: str) -> StdioServerParameters:
    command = [*wrapper, sys.executable, "-m", "kura", "mcp", "--store", str(store)]
    return StdioServerParameters(
        command=command[0], args=command[1:], env={**ENV, "KURA_HOME": str(home)}, cwd=str(home)
    )


async def one_run(store: Path, home: Path, *, calls: bool) -> list[float]:
    marks: list[float] = []
    start = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params(store, home), quiet) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            marks.append(time.perf_counter() - start)
            await s.list_tools()
            marks.append(time.perf_counter() - start)
            if calls:
                await s.call_tool("kura_map", {})
                marks.append(time.perf_counter() - start)
                await s.call_tool("kura_recall", {"question": "where do the runbooks live"})
                marks.append(time.perf_counter() - start)
    return marks


async def timed_run(store: Path, home: Path) -> str:
    """``/usr/bin/time -v``'s report for one process that answered initialize and tools/list."""
    with tempfile.TemporaryFile("w+") as err:
        server = params(store, home, "/usr/bin/time", "-v")
        async with stdio_client(server, err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            await s.list_tools()
        for _ in range(100):  # the client has closed stdin; time writes when the server exits
            err.seek(0)
            report = err.read()
            if "Exit status" in report:
                return report
            time.sleep(0.05)
        return report


def cpu_seconds(report: str) -> tuple[float, float]:
    found = [re.search(rf"{kind} time \(seconds\): ([0-9.]+)", report) for kind in ("User", "System")]
    user, system = (float(m.group(1)) if m else float("nan") for m in found)
    return user, system


def prepare(root: Path, n: int) -> Path:
    store = root / "store"
    generate(store, n)
    kura = [sys.executable, "-m", "kura", "-s", str(store)]
    subprocess.run([*kura, "weave", "--no-model"], check=False, capture_output=True, env=ENV)
    subprocess.run([*kura, "index"], check=False, capture_output=True, env=ENV)
    return store


def main() -> None:
    ask = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ask.add_argument("--runs", type=int, default=10)
    ask.add_argument("--memories", type=int, default=1000)
    ask.add_argument("--calls", action="store_true", help="also time a first kura_map and kura_recall")
    ask.add_argument("--store", type=Path, help="use this store as it is instead of a generated one")
    args = ask.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        store = args.store.resolve() if args.store else prepare(Path(tmp), args.memories)
        size = sum(1 for p in store.glob("*.md") if p.name != "MEMORY.md")
        results = [anyio.run(lambda: one_run(store, home, calls=args.calls)) for _ in range(args.runs)]
        user, system = cpu_seconds(anyio.run(timed_run, store, home))
    stages = ("initialize", "tools/list", "first map", "first recall")[: len(results[0])]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"kura mcp --store S ({size} memories), {args.runs} runs, seconds from spawn (p50 / best):")
    for i, stage in enumerate(stages):
        column = [r[i] for r in results]
        print(f"  {stage:<13} {statistics.median(column):6.2f} / {min(column):.2f}")
    print(f"  one process, initialize + tools/list: {user:.2f} s user + {system:.2f} s sys CPU")
    print(f"  load average {load} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
