"""Several processes writing one store at once must never lose a memory or an index line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kura.files.memory_index import parse_index
from kura.store.store import Store, init_store

WORKERS = 8
EACH = 50

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import kura

    root, me, each, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    store = kura.open_store(root)
    for i in range(each):
        store.remember(f"w{me}-m{i:02d}", f"worker {me} memory {i}: written concurrently", type="project")
        store.remember(f"shared-{i % 5}", f"shared memory {i % 5}, last written by worker {me}", type="user")
    """
)


def test_eight_processes_fifty_remembers_each(tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "store")
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(store.root), str(n), str(EACH), str(go)])
        for n in range(WORKERS)
    ]
    time.sleep(0.2)
    go.touch()
    assert [p.wait(timeout=180) for p in procs] == [0] * WORKERS

    expected = {f"w{n}-m{i:02d}" for n in range(WORKERS) for i in range(EACH)} | {
        f"shared-{k}" for k in range(5)
    }
    assert set(store.slugs()) == expected
    index = parse_index((store.root / "MEMORY.md").read_text())
    entries = [line.slugs[0] for line in index.entries()]
    assert sorted(entries) == sorted(expected)  # exactly one line per memory
    for memory in Store(store.root).list():
        assert memory.findings == (), memory.slug
        assert index.line_for(memory.slug).trigger == memory.description
    assert not list(store.root.glob(".*.tmp"))
