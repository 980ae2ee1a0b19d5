"""Outside git a memory's age depends only on its written date and its file's day, so
``ages`` decides it once per distinct pair instead of once per memory; it must give every
memory the age the rule memory by memory gives (``_one_by_one``, the loop it replaced):
written dates, a day a copy stamped on a fifth of the store (shared), and days of their own."""

from __future__ import annotations

import datetime as dt
import os
import random
from pathlib import Path

from kura.map.age import Age, ages
from kura.store import catalog
from kura.store.store import Store

NOON = dt.datetime(2026, 6, 30, 12).timestamp()


def _one_by_one(entries: dict[str, catalog.Entry], shared: set[dt.date]) -> dict[str, Age]:
    out = {}
    for slug, entry in entries.items():
        day = dt.date.fromtimestamp(entry.mtime_ns // 1_000_000_000)
        if entry.written_text:
            out[slug] = Age(dt.date.fromisoformat(entry.written_text), "written")
        elif day in shared:
            out[slug] = Age(None, "shared", day)
        else:
            out[slug] = Age(day, "mtime")
    return out


def test_ages_outside_git_are_the_ages_memory_by_memory(tmp_path: Path) -> None:
    rng = random.Random(7)
    root = tmp_path / "store"
    root.mkdir()
    copied = NOON - 2 * 86400  # the day a copy stamped on half the store
    for i in range(200):
        dated = f"updated: 2026-06-{rng.randint(1, 29):02d}\n" if i % 5 == 0 else ""
        path = root / f"m{i:03d}.md"
        path.write_text(
            f"---\nname: m{i}\ndescription: memory {i}\ntype: project\n{dated}---\n\nmemory {i}\n"
        )
        stamp = copied if i % 2 else NOON - rng.randint(0, 60) * 86400 - rng.randint(0, 3000)
        os.utime(path, (stamp, stamp))
    store = Store(root)
    entries = catalog.entries(store)
    got = ages(root, entries)
    shared = {a.file_day for a in got.values() if a.source == "shared" and a.file_day}
    assert shared == {dt.date.fromtimestamp(copied)}
    assert got == _one_by_one(entries, shared)
    assert {a.source for a in got.values()} == {"written", "shared", "mtime"}
    one_day = [a for a in got.values() if a.source == "shared"]
    assert len({id(a) for a in one_day}) == 1  # memories of one day and source share one Age
