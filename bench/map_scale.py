"""The resident map at scale: whole-process timings of weave and prefill.

    python bench/map_scale.py [N ...]          # default: 500 5000 20000
    python bench/map_scale.py --code [N ...]   # every body also holds code (read by markdown-it-py)

For each N a generator writes a synthetic store (realistic lines, four types, sections,
dates spread over a year, some memories dated in their frontmatter and some not), then
copies it with ``cp -a`` so mtimes are kept, as a restore would. Each figure is the wall
time of a fresh ``kura`` process (best of 3 where the run can be repeated):

    weave cold        first weave of the copy (no .kura/ state at all)
    weave unchanged   weave again with nothing changed
    weave one edit    weave after one memory file was edited
    prefill           kura prefill with the map current

Targets (issue 3, 2-core machine): cold ≤ 2 s, unchanged ≤ 0.3 s, one edit ≤ 0.5 s,
prefill ≤ 0.1 s at 20,000 memories.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TYPES = ("user", "feedback", "project", "project", "reference")
WORDS = (
    "deploy staging postgres redis caddy hetzner migration rollback incident runbook oncall "
    "pytest flaky fixture coverage ruff mypy uv lockfile docker compose nightly backup restore "
    "archive disk nvme latency queue worker retry timeout sla ticket routing webhook token"
).split()
NAMES = ("Mika", "Tomasz", "Aiko", "Sam", "Ferrydesk", "GitHub", "Grafana", "Sentry")


def line(rng: random.Random, i: int) -> str:
    words = rng.sample(WORDS, 9)
    return (
        f"{rng.choice(NAMES)} {words[0]} {words[1]} on port {8000 + i % 900} uses {words[2]} "
        f"({rng.randint(2, 64)} GB) because {words[3]} {words[4]} {words[5]}; {words[6]} stays {words[7]}"
    )


def generate(root: Path, n: int, seed: int = 7, *, code: bool = False) -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True)
    year = 365 * 86400
    now = time.time()
    index = ["# Memory index", ""]
    for section in range(max(1, n // 250)):
        index += ["", f"## Area {section}", ""]
        for i in range(section * 250, min(n, (section + 1) * 250)):
            slug = f"m{i:05d}"
            kind = TYPES[i % len(TYPES)]
            text = line(rng, i)
            dated = f"created: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}\n" if i % 3 == 0 else ""
            path = root / f"{slug}.md"
            path.write_text(
                f"---\nname: Memory {i}\ndescription: {text}\ntype: {kind}\n{dated}---\n\n{text}.\n\n"
                f"**Why:** it matters.\n\nRelated: [[m{(i + 1) % n:05d}]]\n"
                + (
                    f"\nIn bash: `[[ -f m{i}.lock ]]`.\n\n```sh\nif [[ -d /srv/{slug} ]]; then ls; fi\n```\n"
                    if code
                    else ""
                )
            )
            stamp = now - rng.random() * year
            os.utime(path, (stamp, stamp))
            index.append(f"- [Memory {i}]({slug}.md) — {text}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


# Measured as installed tools run: with bytecode caching on (some sandboxes switch it off,
# which makes every process recompile kura's modules and says nothing about kura).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def kura(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kura", *args], check=False, capture_output=True, env=ENV)
    return time.perf_counter() - start


def best(runs: int, *args: str) -> float:
    return min(kura(*args) for _ in range(runs))


def measure(n: int, *, code: bool = False) -> None:
    kura("--help")  # compile and cache the modules once
    with tempfile.TemporaryDirectory() as tmp:
        source, copy = Path(tmp) / "gen", Path(tmp) / "copy"
        generate(source, n, code=code)
        subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
        s = str(copy)
        colds = []
        for _ in range(3):
            shutil.rmtree(copy / ".kura", ignore_errors=True)
            colds.append(kura("-s", s, "weave", "--no-model"))
        cold = min(colds)
        unchanged = best(3, "-s", s, "weave", "--no-model")
        edits = []
        for k in range(3):
            target = copy / f"m{(k * 7919) % n:05d}.md"
            target.write_text(target.read_text() + f"\nedit {k}\n")
            edits.append(kura("-s", s, "weave", "--no-model"))
        prefill = best(5, "-s", s, "prefill")
        shutil.rmtree(copy / ".kura")
        print(f"{n:>6} memories  weave cold {cold:6.2f} s   unchanged {unchanged:5.2f} s   "
              f"one edit {min(edits):5.2f} s   prefill {prefill:5.3f} s")  # fmt: skip


if __name__ == "__main__":
    for size in [int(a) for a in sys.argv[1:] if a != "--code"] or [500, 5000, 20000]:
        measure(size, code="--code" in sys.argv[1:])
