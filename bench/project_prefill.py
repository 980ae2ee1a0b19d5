"""What ``kura prefill`` costs inside a project, where kura walks up to the git root for the
project's store and reads the person's store beside it.

    python bench/project_prefill.py [--runs 20] [--source DIR]

Makes, in a temp folder: a person's store (a copy of ``sample-store``) named as the default
of a user-level kura.toml (``KURA_HOME``), and a git project whose ``memory/`` is another
copy of it; weaves both, then runs ``python -m kura prefill`` ``--runs`` times as a process
from ``src/deep/`` inside the project (the map current), and prints the median and the
fastest wall time, the median and least CPU time (user + system, which a busy machine
disturbs less), and which store the block names. ``--source`` puts another copy of
kura's package first on ``PYTHONPATH`` (an older kura, for a before/after); the same
interpreter runs both.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kura(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--source", type=Path, default=ROOT, help="the folder that holds kura/")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home, project = base / "home", base / "project"
        home.mkdir()
        shutil.copytree(ROOT / "sample-store", home / "me", ignore=shutil.ignore_patterns(".kura"))
        (home / "kura.toml").write_text(f'[stores.me]\npath = "{home / "me"}"\n', encoding="utf-8")
        shutil.copytree(ROOT / "sample-store", project / "memory", ignore=shutil.ignore_patterns(".kura"))
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        deep = project / "src" / "deep"
        deep.mkdir(parents=True)
        env = {**os.environ, "KURA_HOME": str(home), "PYTHONPATH": str(args.source)}
        env = {k: v for k, v in env.items() if k not in ("KURA_STORE", "KURA_CONFIG", "KURA_DIR")}
        kura(["-s", str(home / "me"), "weave", "--no-model"], deep, env)
        kura(["weave", "--no-model"], deep, env)
        first = kura(["prefill"], deep, env)  # weaves whatever is still stale
        times, cpu = [], []
        for _ in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = kura(["prefill"], deep, env)
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        head = first.stdout.splitlines()[0] if first.stdout else first.stderr.strip()
        print(f"kura from {args.source}: {args.runs} runs of `kura prefill` from {deep.relative_to(base)}")
        print(f"  wall: median {statistics.median(times) * 1000:.1f} ms, fastest {min(times) * 1000:.1f} ms")
        print(
            f"  CPU (user+sys): median {statistics.median(cpu) * 1000:.1f} ms, least {min(cpu) * 1000:.1f} ms"
        )
        print(f"  block: {head}  ({len(done.stdout)} characters, exit {done.returncode})")


if __name__ == "__main__":
    main()
