"""How soon ``kura mcp`` answers the way Claude Code 2.1.332 opens it, beside ``initialize``.

    python bench/mcp_discover.py [--runs 5] [--kura PATH]

Claude Code 2.1.332 does not open a stdio server with ``initialize``: it sends
``server/discover`` (protocol version 2026-07-28, client info in ``_meta``) and then
``tools/list`` at once (seen on the wire by tests/hosts' harness). Each run spawns ``kura mcp
--store S --writable`` on an empty store and writes raw JSON-RPC lines to it, as a host does;
printed per run, seconds from the spawn until each answer arrived, for the 2026-07-28 opening
and for the classic one (``initialize``, ``notifications/initialized``, ``tools/list``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KURA = shutil.which("kura", path=str(Path(sys.executable).parent)) or "kura"
CLIENT = {"name": "claude-code", "version": "2.1.332"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": CLIENT,
    "io.modelcontextprotocol/clientCapabilities": {},
}
DISCOVER = [
    {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": META}},
]
CLASSIC = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]  # fmt: skip


def answers(kura: str, store: Path, opening: list[dict[str, Any]]) -> list[float]:
    """Seconds from the spawn to each answer, sending each request once the one before it
    is answered (a notification goes straight after)."""
    start = time.monotonic()
    server = subprocess.Popen(
        [kura, "mcp", "--store", str(store), "--writable"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    times = []
    try:
        for message in opening:
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
            if "id" in message:
                server.stdout.readline()
                times.append(time.monotonic() - start)
    finally:
        server.kill()
        server.wait()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kura", default=KURA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "memory"
        store.mkdir()
        (store / "MEMORY.md").write_text("# Memory index\n")
        for run in range(1, args.runs + 1):
            found, listed = answers(args.kura, store, DISCOVER)
            started, classic = answers(args.kura, store, CLASSIC)
            print(f"run {run}: server/discover {found:.2f} s, tools/list {listed:.2f} s   |   "
                  f"initialize {started:.2f} s, tools/list {classic:.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
