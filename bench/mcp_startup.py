"""How soon ``kura mcp`` answers a host: wall time from spawning the process.

    python bench/mcp_startup.py [RUNS]        # default: 5 runs, on a copy of sample-store

Hosts (Claude Code, VS Code, Goose) start an MCP server and give up on one that does not
answer ``initialize`` within a few seconds, so the server must not load a model or open an
index before it is asked to. Each run spawns ``python -m kura mcp`` on a fresh copy of
sample-store (its search index kept, as a store in use has one) and drives it with the
SDK's own stdio client; figures are from the spawn, median and best of RUNS:

    initialize      the initialize result has arrived
    tools/list      and the tool list
    first map       and a kura_map answer (a current map, no model)
    first recall    and a kura_recall answer (loads the embedding model)

Target (issue 5): initialize and tools/list well under 2 s on a 2-core machine; the model
loads on the first recall, never before.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SAMPLE = Path(__file__).resolve().parent.parent / "sample-store"
STAGES = ("initialize", "tools/list", "first map", "first recall")


async def one_run(root: Path) -> list[float]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kura", "-s", str(root / "store"), "mcp"],
        env={"KURA_HOME": str(root / "home")},
        cwd=str(root),
    )
    marks: list[float] = []
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        marks.append(time.perf_counter() - start)
        await session.list_tools()
        marks.append(time.perf_counter() - start)
        await session.call_tool("kura_map", {})
        marks.append(time.perf_counter() - start)
        await session.call_tool("kura_recall", {"question": "where are the runbooks"})
        marks.append(time.perf_counter() - start)
    return marks


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        shutil.copytree(SAMPLE, template)
        (Path(tmp) / "home").mkdir()
        # a store in use has a woven map and a search index: make them once
        kura = [sys.executable, "-m", "kura", "-s", str(template)]
        subprocess.run([*kura, "weave", "--no-model"], check=False, stdout=subprocess.DEVNULL)
        subprocess.run([*kura, "index"], check=False, stdout=subprocess.DEVNULL)
        results = []
        for _ in range(runs):
            shutil.rmtree(Path(tmp) / "store", ignore_errors=True)
            shutil.copytree(template, Path(tmp) / "store")
            results.append(anyio.run(one_run, Path(tmp)))
    print(f"kura mcp, {runs} runs, seconds from spawn (median / best):")
    for i, stage in enumerate(STAGES):
        column = [r[i] for r in results]
        print(f"  {stage:<13} {statistics.median(column):6.2f} / {min(column):.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
