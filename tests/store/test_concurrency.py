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


# -- fairness: waiters are served in the order they came (issue 29, item 15) ------------------

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from kura.store.atomic import locked

    lock, held, release = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    with locked(lock):
        held.touch()
        deadline = time.monotonic() + 120
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
    """
)
WAITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from kura.store.atomic import locked

    lock, me, order = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    (order.parent / f"ready-{me}").touch()
    with locked(lock):
        with order.open("a") as out:
            out.write(me + "\\n")
    """
)


def _until(check: object, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.005)
    return False


def _tickets(lock: Path) -> int:
    queue = lock.with_name("lock.queue")
    return len([n for n in queue.iterdir() if not n.name.startswith(".")]) if queue.is_dir() else 0


def _hold(tmp_path: Path, lock: Path) -> tuple[subprocess.Popen[bytes], Path]:
    held, release = tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(held), str(release)])
    assert _until(held.exists), "the holder never took the lock"
    return holder, release


def test_store_lock_waiters_are_served_in_the_order_they_came(tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "store")
    lock, order = store.state_dir / "lock", tmp_path / "order"
    holder, release = _hold(tmp_path, lock)
    waiters = []
    for n in range(7):
        waiters.append(subprocess.Popen([sys.executable, "-c", WAITER, str(lock), str(n), str(order)]))
        assert _until((tmp_path / f"ready-{n}").exists)
        _until(lambda n=n: _tickets(lock) == n + 2, seconds=2)  # its ticket is in the queue
    release.touch()
    assert [p.wait(timeout=120) for p in (holder, *waiters)] == [0] * 8
    assert order.read_text().split() == [str(n) for n in range(7)]
    assert _tickets(lock) == 0  # every ticket left with its writer


def test_a_killed_waiter_never_blocks_the_queue(tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "store")
    lock, order = store.state_dir / "lock", tmp_path / "order"
    holder, release = _hold(tmp_path, lock)
    doomed = subprocess.Popen([sys.executable, "-c", WAITER, str(lock), "doomed", str(order)])
    assert _until(lambda: _tickets(lock) == 2)
    queue = lock.with_name("lock.queue")
    dead = max(n.name for n in queue.iterdir() if not n.name.startswith("."))
    doomed.kill()  # SIGKILL: its ticket stays in the folder, its flock goes with it
    doomed.wait(timeout=30)
    assert (queue / dead).exists()
    after = subprocess.Popen([sys.executable, "-c", WAITER, str(lock), "after", str(order)])
    assert _until(lambda: not (queue / dead).exists() and _tickets(lock) == 2)  # cleared; its own in
    release.touch()
    assert (holder.wait(timeout=60), after.wait(timeout=60)) == (0, 0)
    assert order.read_text().split() == ["after"]


def test_a_waiter_that_gives_up_says_what_it_saw(tmp_path: Path) -> None:
    from kura.errors import StoreError
    from kura.store.atomic import locked

    store, _ = init_store(tmp_path / "store")
    lock = store.state_dir / "lock"
    holder, release = _hold(tmp_path, lock)
    try:
        try:
            with locked(lock, timeout=1):
                raise AssertionError("took a lock another process holds")
        except StoreError as err:
            said = str(err)
    finally:
        release.touch()
        holder.wait(timeout=60)
    assert said == (
        f"{lock}: waited 1s for the store lock and 1 writer(s) were still ahead of it in the queue "
        f"(the first, process {holder.pid}, still running); try again, or look at that process"
    )
