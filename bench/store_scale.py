"""How the store scales with the number of memories: prints seconds per operation.

    python bench/store_scale.py [N ...]        # default: 1000 5000 20000

Writes N synthetic memories (and their MEMORY.md) into a temp folder, then times a walk
(slugs only), a full read (parse every file), ``kura list``'s listing from the catalog
(cold: the catalog is built; warm: nothing changed), one lookup, one update through
``remember`` (memory file + index line under the lock) and a doctor pass.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kura.files.memory_index import entry_text
from kura.health.doctor import diagnose
from kura.store import catalog
from kura.store.store import Store, init_store

MEMORY = (
    "---\nname: Memory {i}\ndescription: fact number {i} about service-{s} on port {p}\n"
    "type: {t}\n---\n\nBody of memory {i}. Related: [[m{j:05d}]]\n"
)
TYPES = ("user", "feedback", "project", "reference")


def build(root: Path, n: int) -> Store:
    store, _ = init_store(root)
    lines = []
    for i in range(n):
        text = MEMORY.format(i=i, s=i % 97, p=8000 + i % 1000, t=TYPES[i % 4], j=(i + 1) % n)
        (root / f"m{i:05d}.md").write_text(text)
        lines.append(entry_text(f"m{i:05d}", f"Memory {i}", f"fact number {i}"))
    (root / "MEMORY.md").write_text("# Memory index\n\n" + "\n".join(lines) + "\n")
    return store


def timed(label: str, call: Callable[[], object]) -> None:
    start = time.perf_counter()
    call()
    print(f"  {label:<28} {time.perf_counter() - start:8.3f} s")


def run(store: Store, n: int) -> None:
    middle = f"m{n // 2:05d}"
    print(f"{n} memories")
    timed("walk (slugs)", store.slugs)
    timed("read all (list)", store.list)
    timed("listing, catalog cold", lambda: catalog.listing(store))
    timed("listing, catalog warm", lambda: catalog.listing(store))
    timed("show one", lambda: store.show(middle))
    timed("remember (update one)", lambda: store.remember(middle, "changed fact"))
    timed("remember (new one)", lambda: store.remember("brand-new", "a new fact", type="user"))
    timed("doctor", lambda: diagnose(store))


def main(sizes: list[int]) -> None:
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            run(build(Path(tmp) / "store", n), n)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 5000, 20000])
