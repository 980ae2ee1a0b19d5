"""Kill -9, then run again: what a killed ``distill run`` and a killed ``weave`` leave.

    python bench/kills.py [KILLS] [DRAFTS] [MEMORIES]    # default: 10 kills, 400, 3000

distill: journals holding DRAFTS requests to remember (20 files); ``kura distill run`` is
started and SIGKILLed once 1–60 more drafts have appeared, KILLS times, then run to the
end. Prints the drafts staged, how many carry a candidate already staged (same quotes),
how many are empty or listed as tampered, and whether the set equals one uninterrupted
pass on a fresh store. Target (issue 15): 0 duplicates, 0 empty, 0 tampered, equal.

weave: a store of MEMORIES memories (a cold weave forks workers past 2,000); ``kura weave
--force`` is started in its own session on a cold ``.kura`` and SIGKILLed as soon as it
has a child, KILLS times; 3 s later, the processes of its session still alive are
counted (and then killed). Target: 0 per kill.

Run it with the kura you want to measure first on ``PYTHONPATH`` (or installed).
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kura.distill import drafts as dr
from kura.store.store import Store, init_store

KURA = [sys.executable, "-m", "kura"]
WORDS = "amber cobalt crimson olive teal violet ochre sable umber jade ivory russet indigo coral".split()


def journals(root: Path, drafts: int) -> Path:
    folder = root / "journals"
    folder.mkdir()
    per = -(-drafts // 20)
    said = (f"{a} {b} {c}" for a in WORDS for b in WORDS for c in WORDS if len({a, b, c}) == 3)
    for f in range(20):
        rows = []
        for i in range(min(per, drafts - f * per)):
            text = f"Remember that the {next(said)} queue drains into the cold store every night."
            rows.append({"type": "user", "sessionId": f"s{f}", "uuid": f"u{f}-{i}",
                         "message": {"role": "user", "content": text}})  # fmt: skip
        (folder / f"s{f:02d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def store_for(root: Path, name: str, folder: Path) -> tuple[Store, list[str]]:
    store, _ = init_store(root / name, name="test")
    config = root / f"{name}.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n\n[stores.test.distill.journals]\nclaude = ["{folder}"]\n'
    )
    return store, [*KURA, "-c", str(config), "distill", "run", "--store", "test"]


def staged(store: Store) -> list[dr.Draft]:
    return [dr.load(store, info.id) for info in dr.drafts(store)]


def distill(kills: int, drafts: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = journals(root, drafts)
        store, command = store_for(root, "killed", folder)
        shelf = store.state_dir / "drafts"
        done = 0
        for k in range(kills):
            target = sum(1 for _ in shelf.glob("*.md")) + 1 + (k * 37) % 60
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while proc.poll() is None and sum(1 for _ in shelf.glob("*.md")) < target:
                time.sleep(0.002)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                done += 1
            proc.wait()
        while subprocess.run(command, capture_output=True).returncode == 0:
            pass
        fresh, again = store_for(root, "fresh", folder)
        subprocess.run(again, capture_output=True, check=True)
        mine = staged(store)
        quotes = collections.Counter(d.evidence for d in mine if d.slug)
        twice = sum(n - 1 for n in quotes.values() if n > 1)
        empty = sum(1 for p in shelf.glob("*.md") if p.stat().st_size == 0)
        tampered = sum(1 for d in mine if d.tampered)

        def seen(s: Store) -> set[tuple[object, ...]]:
            return {(d.id, d.kind, d.title, d.body, d.evidence, d.flags) for d in staged(s)}

        equal = seen(store) == seen(fresh)
        print(f"distill: {done} kills, {len(mine)} drafts, {twice} duplicated, {empty} empty, "
              f"{tampered} tampered; equal to one uninterrupted pass: {equal}")  # fmt: skip


def session(leader: int) -> list[int]:
    alive = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != leader:
            try:
                fields = (Path("/proc") / name / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == leader and fields[0] not in ("Z", "X"):
                alive.append(int(name))
    return alive


def weave(kills: int, memories: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        init_store(root, name="big")
        lines = []
        for i in range(memories):
            text = " ".join(f"word{(i * 7 + k) % 997} detail{k}" for k in range(40))
            (root / f"m{i:05d}.md").write_text(f'---\nname: m{i:05d}\ndescription: "{text}"\n---\n\nbody\n')
            lines.append(f"- [m{i:05d}](m{i:05d}.md) — {text}")
        (root / "MEMORY.md").write_text("# Memory index\n\n" + "\n".join(lines) + "\n")
        left = []
        for _ in range(kills):
            shutil.rmtree(root / ".kura", ignore_errors=True)
            proc = subprocess.Popen([*KURA, "-s", str(root), "weave", "--force"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
            while proc.poll() is None and not session(proc.pid):
                time.sleep(0.002)
            if proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            deadline = time.monotonic() + 3
            while session(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            alive = session(proc.pid)
            left.append(len(alive))
            for pid in alive:
                os.kill(pid, signal.SIGKILL)
        print(f"weave: {len(left)} kills, workers left per kill {left}, {sum(left)} in all")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:4]]
    kills, drafts, memories = [*args, *(10, 400, 3000)[len(args) :]]
    distill(kills, drafts)
    if Path("/proc/self/stat").is_file():
        weave(kills, memories)
