"""Is kura ready on Claude Code's first turn? The real CLI, headless, a few sessions.

    python bench/claude_first_turn.py [--runs N] [--kura PATH]   # default: 5 runs, this kura

A fresh git project is wired for kura by ``kura setup claude-code`` (with ``--kura``, its
``.mcp.json`` then runs that kura's ``mcp``) and given one memory; then ``claude -p`` runs N times against
the scripted endpoint of tests/hosts, in a tmp home. Printed per run: what the first
request to the model said of kura's MCP server — ``ready`` (its tools are named), or
``connecting`` (Claude Code told the model the server is "still connecting"), or
``absent`` — whether the map was there, and the wall seconds of the whole session. Claude
Code does not wait for an MCP server before the first turn; a server slow to answer
``initialize`` is "still connecting" then, and the model must go through ToolSearch (which
waits) to reach it. ``--kura`` measures another install (an older kura, for a before/after).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "hosts")]

from anthropic_server import AnthropicServer, said, text  # noqa: E402
from claude_cli import INSTALL, KURA, git_project, run_claude, setup  # noqa: E402
from conftest import make_store  # noqa: E402


def first_turn(told: str) -> str:
    if "mcp__kura__kura_recall" in told:
        return "ready"
    if "still connecting" in told and "kura" in told.split("still connecting", 1)[1][:400]:
        return "connecting"
    return "absent"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kura", default=KURA, help="the kura command to wire in (default: this checkout's)")
    args = parser.parse_args()
    if shutil.which("claude") is None:
        print(f"no `claude` on PATH: {INSTALL}", file=sys.stderr)
        return 1
    # the capture pass Claude Code's hooks start may still be writing when the runs are done
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        base = Path(tmp)
        project = git_project(base / "project")
        make_store(project / "memory", [("deploys", "project", "Deploys go out from a bastion", None)])
        setup(project, base / "home")
        mcp = project / ".mcp.json"
        mcp.write_text(mcp.read_text().replace(json.dumps(KURA), json.dumps(args.kura)))
        states = []
        for run in range(1, args.runs + 1):
            server = AnthropicServer([[text("ok")]])
            start = time.monotonic()
            try:
                run_claude(project, base / "home", server, "hello", cache=base / "cache")
                told = said(server.turns()[0])
            finally:
                server.close()
            state = first_turn(told)
            states.append(state)
            mapped = "map" if "<<<KURA-MAP" in told else "no map"
            print(f"run {run}: kura {state:10} {mapped:6}  {time.monotonic() - start:5.2f} s wall")
        print(f"ready on the first turn in {states.count('ready')} of {len(states)} runs ({args.kura})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
