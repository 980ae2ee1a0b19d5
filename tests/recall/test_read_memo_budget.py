"""A warm server keeps the memory files it read while they are unchanged (``ReadMemo``), at
most ``LIMIT`` files — but a store may hold many memories near the 4 MiB a memory may be (a
clone's, say), and the server kept every one it read: 40 memories of 2 MiB held 80 MiB for
the life of the process, 2,048 of them 8 GiB. Now at most ``BUDGET`` bytes are kept; a file
past it is read again when asked for, with the same answer.

Real files read through a real store."""

from __future__ import annotations

from pathlib import Path

from kura.recall.read_memo import BUDGET, ReadMemo
from kura.store.store import Store

BIG = 2 << 20


def test_the_files_kept_stay_within_the_byte_budget(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    count = BUDGET // BIG + 8
    filler = ("tape backup vault rotation " * (BIG // 27 + 1))[:BIG]
    for i in range(count):
        (root / f"m{i:03d}.md").write_text(
            f"---\nname: m{i}\ndescription: big {i}\ntype: project\n---\n{filler}\n"
        )
    (root / "MEMORY.md").write_text("".join(f"- [m{i}](m{i:03d}.md) — big {i}\n" for i in range(count)))
    store, memo = Store(root), ReadMemo()
    over = memo.over(store)
    for i in range(count):
        assert over.read(f"m{i:03d}")[1].name == f"m{i}"
    kept = sum(len(data) for _, data, _ in memo._kept.values())
    assert 0 < kept <= BUDGET, kept
    reads = memo.reads
    assert (
        over.read(f"m{count - 1:03d}")[1].name == f"m{count - 1}" and memo.reads == reads
    )  # the newest: kept
    assert over.read("m000") == store.read("m000") and memo.reads == reads + 1  # the oldest: read again
