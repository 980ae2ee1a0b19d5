"""How long a host waits for kura's SessionStart hook: whole-process wall time, before and after.

    python bench/hook_speed.py [--memories N] [--runs R] [--kura PATH]   # default: 1000 memories, 30 runs

A project folder holds a store of N memories in ./memory (``bench/map_scale.py``'s generator),
its map woven, so the map is current as it is on a warm machine. Then, R times each (after
two warm-up runs), as a fresh process with Claude Code's SessionStart JSON on stdin:

    before   the script hooks/claude-code/session-start as it was before `kura hook` (sh, then
             hooks/kura-prefill, then `kura prefill --max-chars 9500`; KURA_STORE names the store,
             as that script could not read the JSON's cwd)
    after    `kura hook session-start` run from another folder, the store chosen from the
             JSON's "cwd" (the front door in kura.cli.entry answers it without typer)

Printed: p50 and p90 wall seconds (time.perf_counter around subprocess.run), the mean CPU
seconds of a run (user + system, every process it started), the characters each printed,
then one run of each under ``/usr/bin/time -v`` (wall, CPU, peak memory).
Target (issue 28): within 0.3 s on a warm machine for 1,000 memories. The load average is
printed too: the machine this runs on is shared.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from map_scale import ENV, generate  # noqa: E402

# hooks/claude-code/session-start and hooks/kura-prefill before `kura hook session-start`
OLD_SESSION_START = """#!/bin/sh
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
exec "$here/../kura-prefill" --max-chars 9500
"""
OLD_PREFILL = """#!/bin/sh
kura="${KURA_BIN:-kura}"
store="${KURA_STORE:-}"
out=""
if command -v "$kura" >/dev/null 2>&1; then
  if [ -n "$store" ]; then
    out=$("$kura" -s "$store" prefill "$@" 2>/dev/null)
  else
    out=$("$kura" prefill "$@" 2>/dev/null)
  fi
  status=$?
  why="'$kura' ran but printed no map (exit $status)."
elif [ -n "${KURA_BIN:-}" ]; then
  why="the command '$kura' was not found or cannot be run."
else
  why="the command 'kura' was not found on PATH."
fi
case "$out" in
  "<<<KURA-MAP"*) printf '%s\\n' "$out" ;;
  *)
    printf 'kura-prefill: %s\\n' "$why" >&2
    printf '<<<KURA-MAP store=%s>>>\\nThe memory map is MISSING, not empty: %s\\n<<<END KURA-MAP>>>\\n' \\
      "${store:-default}" "$why"
    ;;
esac
exit 0
"""


def old_hook(folder: Path) -> Path:
    (folder / "claude-code").mkdir(parents=True)
    for path, text in ((folder / "claude-code" / "session-start", OLD_SESSION_START),
                       (folder / "kura-prefill", OLD_PREFILL)):  # fmt: skip
        path.write_text(text)
        path.chmod(0o755)
    return folder / "claude-code" / "session-start"


def once(argv: list[str], *, cwd: Path, payload: str, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, input=payload, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.stdout


def measure(label: str, argv: list[str], runs: int, **how: object) -> None:
    for _ in range(2):
        once(argv, **how)  # type: ignore[arg-type]
    walls, out = [], ""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        wall, out = once(argv, **how)  # type: ignore[arg-type]
        walls.append(wall)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / runs
    deciles = statistics.quantiles(walls, n=10)
    print(f"{label:<7} wall p50 {statistics.median(walls):.3f} s, p90 {deciles[8]:.3f} s; "
          f"CPU {cpu:.3f} s a run ({runs} runs; {len(out):,} characters printed)")  # fmt: skip


def timed(label: str, argv: list[str], *, cwd: Path, payload: str, env: dict[str, str]) -> None:
    done = subprocess.run(["/usr/bin/time", "-v", *argv], cwd=cwd, input=payload, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    wanted = ("Elapsed (wall clock)", "User time", "System time", "Maximum resident set size")
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith(wanted)]
    print(f"{label}: " + "; ".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--kura", default=str(Path(sys.executable).parent / "kura"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project, elsewhere = Path(tmp) / "project", Path(tmp) / "elsewhere"
        store = project / "memory"
        generate(store, args.memories)
        elsewhere.mkdir()
        env = {k: v for k, v in ENV.items() if not k.startswith("KURA_")}
        env.update(KURA_HOME=str(Path(tmp) / "home"), KURA_BIN=args.kura)
        subprocess.run([args.kura, "-s", str(store), "weave", "--no-model"], env=env, check=True,
                       capture_output=True)  # fmt: skip
        payload = json.dumps({
            "session_id": "bench", "transcript_path": str(Path(tmp) / "t.jsonl"), "cwd": str(project),
            "hook_event_name": "SessionStart", "source": "startup",
        })  # fmt: skip
        before = [str(old_hook(Path(tmp) / "hooks"))]
        after = [args.kura, "hook", "session-start"]
        old_env = {**env, "KURA_STORE": str(store)}
        print(f"{args.memories} memories, map current; load average {os.getloadavg()[0]:.2f}")
        measure("before", before, args.runs, cwd=project, payload=payload, env=old_env)
        measure("after", after, args.runs, cwd=elsewhere, payload=payload, env=env)
        timed("before", before, cwd=project, payload=payload, env=old_env)
        timed("after", after, cwd=elsewhere, payload=payload, env=env)


if __name__ == "__main__":
    main()
