"""A recall that finds headline vectors missing leaves the background build behind too.

Every memory may have its own vector while headlines are missing (an index an older kura
made before headlines, a build stopped between the two): a one-question recall makes one
chunk of headlines and answers, and its coverage, which counts the memories' own vectors,
says nothing is partial. It must still start the store's one detached build
(``kura.recall.index_job``), which makes the rest and says how far it is. Real processes: a
real ``kura index``, ``kura recall`` and the build it leaves, polled with a deadline.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from kura.recall import headline, index_job
from kura.recall.embed import MODEL_ID

WORDS = "oven starter flour proof crumb crust steam vault tape rota pager deploy ledger invoice".split()
MEMORIES = 300  # more than one chunk of headlines (headline.CHUNK)


def kura(cwd: Path, *args: str, budget: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KURA_INDEX_BUDGET": budget}
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)  # fmt: skip


def headlines(root: Path) -> int:
    db = sqlite3.connect(root / ".kura" / "search.db", timeout=30)
    try:
        key = headline.key(MODEL_ID)
        found = db.execute("SELECT count(*) FROM vectors WHERE model = ? AND length(vec) > 0", (key,))
        return int(found.fetchone()[0])
    finally:
        db.close()


def starts(root: Path) -> int:
    log = root / ".kura" / index_job.LOG_NAME
    return sum(line.endswith(" started") for line in log.read_text().splitlines()) if log.exists() else 0


def until(check: object, what: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"still waiting after {seconds} s for {what}"
        time.sleep(0.1)


def a_store(tmp_path: Path) -> Path:
    """Memories whose body says much more than their headline: each has a headline vector."""
    root = tmp_path / "notes"
    root.mkdir()
    rng = random.Random(3)
    for i in range(MEMORIES):
        body = ". ".join(" ".join(rng.choice(WORDS) for _ in range(9)) for _ in range(4))
        (root / f"n{i:04d}.md").write_text(
            f"---\nname: n{i:04d}\ndescription: note {i} on the {rng.choice(WORDS)}\ntype: project\n---\n\n{body}.\n"
        )
    (tmp_path / "kura.toml").write_text(f'[stores.notes]\npath = "{root}"\n')
    return root


def test_a_recall_short_of_headlines_leaves_the_build_that_makes_them(tmp_path: Path) -> None:
    root = a_store(tmp_path)
    done = kura(tmp_path, "index", budget="")
    assert done.returncode == 0, done.stderr
    assert headlines(root) == MEMORIES
    db = sqlite3.connect(root / ".kura" / "search.db")
    with db:  # the index as an older kura left it: every memory's own vector, no headline
        db.execute("DELETE FROM vectors WHERE model = ?", (headline.key(MODEL_ID),))
        db.execute("DELETE FROM kv WHERE key = 'filled'")
    db.close()
    answered = kura(tmp_path, "recall", "the crumb of the oven", "--no-model", "--json")
    assert answered.returncode == 0, answered.stderr
    said = json.loads(answered.stdout)
    assert (said["how"], said["partial"]) == ("embedded", None)  # every memory has its own vector
    assert headlines(root) < MEMORIES  # one chunk made before answering, not all
    until(lambda: starts(root) >= 1, "the recall's background build to start", 60)
    until(lambda: not index_job.running(root), "the build to end")
    assert headlines(root) == MEMORIES and starts(root) == 1
    built = index_job.progress(root)
    assert built is not None and built.state == "done"
    assert (built.headlines, built.headlines_total) == (MEMORIES - headline.CHUNK,) * 2  # the chunk left
    shown = json.loads(kura(tmp_path, "stores", "--json").stdout)["stores"][0]["index_build"]
    left = MEMORIES - headline.CHUNK
    assert shown["line"] == (
        f"index build done: every memory already had its vector; headline and sentence vectors for {left:,} "
        f"of {left:,} memories made or found not needed"
    )
    again = kura(tmp_path, "recall", "the crumb of the oven", "--no-model", "--json")
    assert json.loads(again.stdout)["partial"] is None
    assert not index_job.running(root) and starts(root) == 1  # a whole index starts no build


def test_kura_index_says_it_made_the_headlines_and_exits_0(tmp_path: Path) -> None:
    """``kura index`` on an index with every memory's own vector and no headline makes them
    all, yet it said "0 memories indexed, 0 embedded" and exited 2, nothing done."""
    root = a_store(tmp_path)
    assert kura(tmp_path, "index", budget="").returncode == 0
    db = sqlite3.connect(root / ".kura" / "search.db")
    with db:  # the index as an older kura left it: every memory's own vector, no headline
        db.execute("DELETE FROM vectors WHERE model = ?", (headline.key(MODEL_ID),))
        db.execute("DELETE FROM kv WHERE key = 'filled'")
    db.close()
    done = kura(tmp_path, "index", budget="")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == (
        f"notes: 0 memories indexed, 0 embedded, {MEMORIES} headline vectors made (name and description "
        f"on their own); {MEMORIES} in the index, {MEMORIES} with vectors, search embedded\n"
    )
    assert headlines(root) == MEMORIES
    said = json.loads(kura(tmp_path, "index", "--json", budget="").stdout)
    assert (said["embedded"], said["headlines_made"], said["headlines"]) == (0, 0, MEMORIES)
