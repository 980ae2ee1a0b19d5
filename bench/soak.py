"""Soak: kura's writers, a person's editor, weave and watch on one store at once.

    python bench/soak.py [SECONDS] [WRITERS] [EACH]     # default: 60 s, 8 writers, 50 each

Copies sample-store/ to a temporary folder, starts ``kura watch --no-model`` on it, and for
SECONDS runs at once:

* WRITERS processes, each making EACH ``remember`` calls spread over the run (a refused
  write is retried, as a person would, after a short pause);
* a person saving MEMORY.md in place every 0.4 s the way many editors do: read it, open it
  for writing (which truncates it), and write the new text 80 ms to 1 s later; each save
  adds one line of its own ("person note N");
* ``kura weave --no-model`` in a loop.

Then it prints what a user would count: **saves lost** (person notes missing from the
final MEMORY.md), **lines lost** (memories kura said it wrote that have no line in the
final index, plus lines of the original index that are gone) and **duplicates** (a memory
with more than one line of its own, or a line repeated), with the counts of writes, saves,
weaves and refusals. All three must be 0.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "sample-store"
ENV = {**os.environ, "KURA_NO_MODEL": "1"}

WRITER = textwrap.dedent(
    """
    import random, sys, time
    from kura.errors import KuraError
    from kura.store.store import Store

    root, me, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seconds, go = float(sys.argv[4]), sys.argv[5]
    while not __import__("os").path.exists(go):
        time.sleep(0.005)
    start = time.monotonic()
    rng = random.Random(me)
    store = Store(root)
    for i in range(each):
        due = start + seconds * (i + rng.random()) / each
        time.sleep(max(0.0, due - time.monotonic()))
        slug = f"w{me}-m{i:02d}"
        for attempt in range(20):
            try:
                store.remember(slug, f"writer {me} memory {i}: written during the soak", type="project")
                print("ok", slug, flush=True)
                break
            except KuraError as err:
                print("refused", slug, str(err).replace(chr(10), " ")[:300], flush=True)
                time.sleep(0.3)
    """
)


def person(index: Path, seconds: float, go: Path) -> subprocess.Popen[str]:
    script = textwrap.dedent(
        """
        import os, random, sys, time
        path, seconds, go = sys.argv[1], float(sys.argv[2]), sys.argv[3]
        while not os.path.exists(go):
            time.sleep(0.005)
        rng, n, end = random.Random(7), 0, time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(0.4)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            if not text.endswith("\\n"):
                continue  # a person sees a half-written file in their editor and waits
            n += 1
            handle = open(path, "w", encoding="utf-8")  # the save begins: the file is empty now
            time.sleep(rng.uniform(0.08, 1.0))
            handle.write(text + f"person note {n}\\n")
            handle.close()
            print(n, flush=True)
        """
    )
    return subprocess.Popen(
        [sys.executable, "-c", script, str(index), str(seconds), str(go)], stdout=subprocess.PIPE, text=True
    )


def weaver(root: Path, seconds: float) -> tuple[int, list[str]]:
    """``kura weave`` in a loop: how many ran, and the errors of those that failed."""
    end, count, failed = time.monotonic() + seconds, 0, []
    while time.monotonic() < end:
        done = subprocess.run([sys.executable, "-m", "kura", "-s", str(root), "weave", "--no-model"],
                              capture_output=True, text=True, env=ENV, check=False)  # fmt: skip
        count += 1
        if done.returncode not in (0, 2):
            failed.append(done.stderr.strip().replace("\n", " ")[:300])
    return count, failed


def main(seconds: float, writers: int, each: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
        index = root / "MEMORY.md"
        original = [line for line in index.read_text(encoding="utf-8").splitlines() if line.strip()]
        go = Path(tmp) / "go"
        watch = subprocess.Popen([sys.executable, "-m", "kura", "-s", str(root), "watch", "--no-model"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)  # fmt: skip
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(root), str(n), str(each), str(seconds), str(go)],
                stdout=subprocess.PIPE,
                text=True,
                env=ENV,
            )
            for n in range(writers)
        ]
        editor = person(index, seconds, go)
        time.sleep(1.0)
        go.touch()
        weaves, failed = weaver(root, seconds)
        outputs = [p.communicate(timeout=seconds + 120)[0] for p in procs]
        saves = len(editor.communicate(timeout=60)[0].split())
        time.sleep(1.0)
        watch.terminate()
        watch.wait(timeout=30)
        report(index, original, outputs, saves, (weaves, failed), writers * each)


def report(
    index: Path,
    original: list[str],
    outputs: list[str],
    saves: int,
    weaves: tuple[int, list[str]],
    asked: int,
) -> None:
    from kura.files.memory_index import parse_index

    text = index.read_text(encoding="utf-8")
    lines = text.splitlines()
    entries = Counter(line.slugs[0] for line in parse_index(text).entries())
    written = {row.split()[1] for out in outputs for row in out.splitlines() if row.startswith("ok ")}
    refusals = [row for out in outputs for row in out.splitlines() if row.startswith("refused ")]
    notes = {f"person note {n}" for n in range(1, saves + 1)}
    saves_lost = len(notes - set(lines))
    lines_lost = len([s for s in written if s not in entries]) + len(
        [ln for ln in original if ln not in lines]
    )
    duplicates = sum(n - 1 for n in entries.values() if n > 1) + sum(
        n - 1 for line, n in Counter(ln for ln in lines if ln.strip()).items() if n > 1
    )
    print(f"kura writes   {len(written)} of {asked} done")
    print(f"person saves  {saves}")
    print(f"weaves        {weaves[0]}, {len(weaves[1])} failed (and kura watch re-weaving throughout)")
    for row in weaves[1][:3]:
        print(f"  {row}")
    print(f"refusals      {len(refusals)} (each retried)")
    for row in refusals[:5]:
        print(f"  {row}")
    print(f"saves lost    {saves_lost}")
    print(f"lines lost    {lines_lost}")
    print(f"duplicates    {duplicates}")


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:]]
    main(
        args[0] if args else 60.0, int(args[1]) if len(args) > 1 else 8, int(args[2]) if len(args) > 2 else 50
    )
