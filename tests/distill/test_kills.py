"""Killed with SIGKILL, then run again: a distiller pass drafts nothing twice and never
leaves an empty draft; a weave leaves no worker processes behind. Every kill here is a
real ``kill -9`` of a real ``kura`` process."""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli

from kura.distill import drafts as dr
from kura.distill.run import journals_for, run_pass
from kura.store.store import Store, init_store

FILES, PER_FILE = 6, 10  # 60 requests to remember, so 60 drafts
COLOURS = "amber cobalt crimson olive teal violet ochre sable".split()
ANIMALS = "heron otter lynx badger falcon marten ibis stoat wren plover egret vole newt gecko tapir".split()


def turn(kind: str, content: Any, session: str, uuid: str) -> dict[str, Any]:
    return {"type": kind, "sessionId": session, "uuid": uuid, "message": {"role": kind, "content": content}}


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six Claude Code sessions of ten requests to remember each (made once)."""
    root = tmp_path_factory.mktemp("journals")
    said = iter(itertools.product(COLOURS, ANIMALS))
    for f in range(FILES):
        rows = []
        for i in range(PER_FILE):
            colour, animal = next(said)
            text = f"Remember that the {colour} {animal} queue drains into the cold store every night."
            rows.append(turn("user", text, f"s{f}", f"u{f}-{i}"))
            rows.append(turn("assistant", [{"type": "text", "text": "Noted."}], f"s{f}", f"a{f}-{i}"))
        (root / f"s{f}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return root


KURA = [sys.executable, "-m", "kura"]


def distilling(tmp_path: Path, journals: Path, name: str = "store") -> tuple[Store, list[str]]:
    """A fresh store reading ``journals``, and the arguments of its ``kura distill run``."""
    store, _ = init_store(tmp_path / name, name="test")
    config = tmp_path / f"{name}.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\nwrite_policy = "distiller-only"  # requests stay drafts\n\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    return store, ["-c", str(config), "distill", "run", "--store", "test"]


def listing(run: list[str], *more: str) -> Any:
    """``kura distill drafts`` for the store ``run`` distils (in-process)."""
    return Cli()(*run[:2], "-s", "test", "distill", "drafts", *more)


def uninterrupted(tmp_path: Path, journals: Path) -> set[tuple[Any, ...]]:
    """What one pass with no kill stages, on a fresh store."""
    store, _ = distilling(tmp_path, journals, "fresh")
    store = Store(store.root, name="test", write_policy="distiller-only")
    source = {"journals": {"claude": [str(journals)]}}
    run_pass(store, journals_for({}, source, config_source=None, store="test"))
    return contents(store)


def contents(store: Store) -> set[tuple[Any, ...]]:
    """Every staged draft, all it says but when it was written."""
    staged = [dr.load(store, info.id) for info in dr.drafts(store)]
    return {(d.id, d.slug, d.kind, d.title, d.description, d.body, d.evidence, d.source, d.flags, d.extends)
            for d in staged}  # fmt: skip


def drafts_folder(store: Store) -> Path:
    return store.root / ".kura" / "drafts"


def count(folder: Path) -> int:
    try:
        return sum(1 for entry in os.scandir(folder) if entry.name.endswith(".md"))
    except FileNotFoundError:
        return 0


def to_the_end(run: list[str]) -> None:
    """Run the pass again, uninterrupted; then there is nothing new to read (exit 2)."""
    done = subprocess.run([*KURA, *run], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done
    assert Cli()(*run).code == 2


def assert_whole(store: Store, expected: set[tuple[Any, ...]]) -> None:
    """No candidate twice, every draft non-empty and verified, the set of one clean pass."""
    listed = dr.drafts(store)
    staged = [dr.load(store, info.id) for info in listed if info.slug]
    twice = Counter(d.evidence for d in staged)  # every quote in the journals is said once
    assert [quotes for quotes, n in twice.items() if n > 1] == []
    assert [p.name for p in drafts_folder(store).glob("*.md") if p.stat().st_size == 0] == []
    assert [d.problem for d in listed if d.tampered or d.problem] == []
    assert contents(store) == expected


def test_a_pass_killed_at_many_moments_then_run_again_drafts_nothing_twice(
    tmp_path: Path, journals: Path
) -> None:
    store, run = distilling(tmp_path, journals)
    folder = drafts_folder(store)
    kills = 0
    for step in (3, 11, 19):  # kill once this many more drafts have appeared
        target = count(folder) + step
        proc = subprocess.Popen([*KURA, *run], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while proc.poll() is None and count(folder) < target and time.monotonic() < deadline:
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
    assert kills == 3  # the pass was really cut short each time
    to_the_end(run)
    assert_whole(store, uninterrupted(tmp_path, journals))


KILLED_WHILE_WRITING = """
import os, signal, sys
from pathlib import Path
real, seen = os.fsync, []
def fsync(fd):
    real(fd)
    where = os.readlink(f"/proc/self/fd/{fd}")
    if "/drafts/" in where:
        seen.append(where)
        if len(seen) == int(sys.argv[1]):  # this draft's bytes are on disk, not yet in place
            os.kill(os.getpid(), signal.SIGKILL)
os.fsync = fsync
from kura.cli.commands import app
app(sys.argv[2:], prog_name="kura")
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see which file is fsynced")
def test_a_pass_killed_while_writing_a_draft_leaves_no_empty_draft(tmp_path: Path, journals: Path) -> None:
    store, run = distilling(tmp_path, journals)
    for nth in (5, 1):  # the fifth draft of a first pass, the first new one of the next
        killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_WRITING, str(nth), *run],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        assert killed.returncode == -signal.SIGKILL, killed
        shown = [(d["id"], d["tampered"], d["problem"]) for d in json.loads(listing(run, "--json").out)]
        assert [d for d in shown if d[1] or d[2]] == []
    to_the_end(run)
    assert_whole(store, uninterrupted(tmp_path, journals))


def test_an_empty_draft_left_by_an_old_crash_is_reported_plainly_and_made_again(
    tmp_path: Path, journals: Path
) -> None:
    expected = uninterrupted(tmp_path, journals)
    store, run = distilling(tmp_path, journals)
    folder = drafts_folder(store)
    folder.mkdir(parents=True)
    empty = folder / "amber-heron-queue-drains-into-cold.md"  # where the old writer had got to
    empty.touch()
    torn = folder / "amber-otter-queue-drains-into-cold.md"
    torn.write_text("<!-- kura draft\nslug: amber-otter-queue-drains-into-cold\nwhen: 2026-")
    listed = listing(run)
    assert listed.code == 0 and "TAMPERED" not in listed.out, listed
    assert listed.out.splitlines() == [
        f"amber-heron-queue-drains-into-cold  ?    INCOMPLETE: {empty}:1: empty: a `kura distill run` was "
        "stopped while writing it; the next run writes it again",
        f"amber-otter-queue-drains-into-cold  ?    INCOMPLETE: {torn}:1: cut short: a `kura distill run` "
        "was stopped while writing it; the next run writes it again",
    ]
    assert not dr.pour(store, empty.stem).quarantined  # not someone's edit: nothing to quarantine
    again = subprocess.run([*KURA, *run], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again
    assert again.stderr.splitlines()[:2] == [
        f"kura: {empty}:1: empty draft left by a `kura distill run` that was stopped; removed, "
        "its candidate is drafted again",
        f"kura: {torn}:1: cut-short draft left by a `kura distill run` that was stopped; moved to "
        f"{folder / 'incomplete' / torn.name}, its candidate is drafted again",
    ]
    assert (folder / "incomplete" / torn.name).read_bytes().startswith(b"<!-- kura draft\n")
    assert_whole(store, expected)


def test_a_fifo_or_a_device_among_the_drafts_never_hangs_the_pass(tmp_path: Path, journals: Path) -> None:
    """A pass now reads every draft at its start (to clear what a stopped pass left): a
    FIFO or a link to /dev/zero in the folder is reported, never read until the end."""
    store, run = distilling(tmp_path, journals)
    folder = drafts_folder(store)
    folder.mkdir(parents=True)
    os.mkfifo(folder / "fifo.md")
    (folder / "zero.md").symlink_to("/dev/zero")
    done = subprocess.run([*KURA, *run], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (0, ""), done
    listed = {d["id"]: d["problem"] for d in json.loads(listing(run, "--json").out) if d["problem"]}
    assert sorted(listed) == ["fifo", "zero"]
    assert listed["fifo"].endswith("fifo.md:1: cannot be read (is a FIFO, not a file)")
    assert "zero.md:1: cannot be read" in listed["zero"]


def test_a_drafts_folder_that_is_a_link_is_refused_and_nothing_outside_is_touched(
    tmp_path: Path, journals: Path
) -> None:
    """The start-of-pass clearing removes empty files: never through a link to elsewhere."""
    store, run = distilling(tmp_path, journals)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "empty.md").touch()
    (elsewhere / ".notes.4194305.ab.tmp").write_text("mine")
    (store.root / ".kura").mkdir(exist_ok=True)
    drafts_folder(store).symlink_to(elsewhere)
    done = subprocess.run([*KURA, *run], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done
    assert f"`.kura/drafts` in store '{store.name}'" in done.stderr and "is a symlink" in done.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == [".notes.4194305.ab.tmp", "empty.md"]


# -- weave: no orphaned workers -------------------------------------------------------------


def session_of(leader: int) -> list[tuple[int, str]]:
    """(pid, state) of every process in the session ``leader`` started, itself excluded."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == leader:
            continue
        try:
            stat = (Path("/proc") / name / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == leader:
            found.append((int(name), fields[0]))
    return found


def living(leader: int) -> list[tuple[int, str]]:
    return [(pid, state) for pid, state in session_of(leader) if state not in ("Z", "X")]


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,100 memories with long descriptions: a cold weave parses and trims in workers."""
    root = tmp_path_factory.mktemp("big") / "store"
    init_store(root, name="big")
    lines = []
    for i in range(2100):
        description = " ".join(f"word{(i * 7 + k) % 997} detail{k}" for k in range(30))
        (root / f"m{i:05d}.md").write_text(
            f'---\nname: m{i:05d}\ndescription: "{description}"\ntype: project\n---\n\nbody {i}\n'
        )
        lines.append(f"- [m{i:05d}](m{i:05d}.md) — {description}")
    (root / "MEMORY.md").write_text("# Memory index\n\n" + "\n".join(lines) + "\n")
    return root


def killed_once_workers_exist(command: list[str], cwd: Path) -> int:
    """Start ``command`` as a session leader, SIGKILL it once it has forked a worker; its pid."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while proc.poll() is None and not living(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the command ended before any worker was seen"
    assert living(proc.pid), "no worker appeared"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return proc.pid


def gone(leader: int) -> list[tuple[int, str]]:
    """The session's processes still alive after a deadline (killed afterwards, whatever happens)."""
    deadline = time.monotonic() + 5
    while living(leader) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = living(leader)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    return left


needs_workers = pytest.mark.skipif(
    not Path("/proc/self/stat").is_file()
    or (os.cpu_count() or 1) < 2
    or "fork" not in multiprocessing.get_all_start_methods(),
    reason="needs /proc, two cores and fork for the worker pool",
)


@needs_workers
def test_a_killed_weave_leaves_no_worker_behind(big_store: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "kura", "-s", str(big_store), "weave", "--force"]
    for _ in range(2):
        shutil.rmtree(big_store / ".kura", ignore_errors=True)  # a cold start each time
        assert gone(killed_once_workers_exist(command, tmp_path)) == []


ORPHAN = """
import sys, time
from kura.store import parallel
if sys.argv[1] == "watch":
    parallel._pdeathsig = lambda: False  # as where prctl is missing: the watching thread alone
def slow(items):
    time.sleep(60)
    return items
parallel.parallel_map(slow, list(range(10)), threshold=2)
"""


@needs_workers
@pytest.mark.parametrize("how", ["pdeathsig", "watch"])
def test_a_killed_parent_takes_its_workers_with_it(how: str, tmp_path: Path) -> None:
    leader = killed_once_workers_exist([sys.executable, "-c", ORPHAN, how], tmp_path)
    assert gone(leader) == []
