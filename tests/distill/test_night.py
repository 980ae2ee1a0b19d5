"""Night: one pass (and drain) per quiet spell of the journals, errors logged, loop goes on.

The loop runs against a fake clock and a sleep that advances it, so a twenty-minute quiet
spell takes microseconds; the CLI test uses a real transcript and ``--idle-sec``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from conftest import Cli
from test_distill_run import SESSION, SID, jsonl

from kura.distill.night import Night, NightReport, Snapshot, Task, snapshot
from kura.distill.run import journals_for
from kura.store.store import init_store


class World:
    """A fake clock, a journal state the test edits, and a log it reads."""

    def __init__(self) -> None:
        self.now = 0.0
        self.state: Snapshot = (("a.jsonl", 10, 1),)
        self.lines: list[str] = []
        self.runs = 0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def change(self) -> None:
        path, size, mtime = self.state[0]
        self.state = ((path, size + 1, mtime + 1),)

    def task(self) -> NightReport:
        self.runs += 1
        return NightReport(f"distill: pass {self.runs}", True)

    def night(self, *tasks: Task, idle: float = 60, poll: float = 10) -> Night:
        return Night(look=lambda: self.state, tasks=tasks or (Task("pass", self.task),), idle=idle, poll=poll,
                     log=self.lines.append, clock=lambda: self.now, sleep=self.sleep)  # fmt: skip

    def wait(self, loop: Night, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            loop.step()
            self.sleep(loop.poll)


def test_a_change_then_quiet_runs_exactly_one_pass() -> None:
    world = World()
    loop = world.night()
    world.wait(loop, 30)
    world.change()
    world.wait(loop, 50)
    assert world.runs == 0  # quiet for 50s only, since the change
    world.wait(loop, 20)
    assert world.runs == 1
    world.wait(loop, 3600)
    assert world.runs == 1  # continued quiet is the same spell
    assert loop.spells == 1


def test_a_new_change_and_quiet_runs_a_second_pass() -> None:
    world = World()
    loop = world.night()
    world.wait(loop, 100)
    assert world.runs == 1
    world.change()
    world.wait(loop, 30)
    world.change()  # still busy: the quiet spell starts over
    world.wait(loop, 50)
    assert world.runs == 1
    world.wait(loop, 30)
    assert world.runs == 2
    assert world.lines.count("distill: pass 2") == 1


def test_a_failing_pass_is_logged_and_the_loop_goes_on() -> None:
    world = World()
    calls: list[str] = []

    def broken() -> NightReport:
        calls.append("pass")
        raise OSError("disk full")

    def drain() -> NightReport:
        calls.append("drain")
        return NightReport("drain: drafts 0", False)

    loop = world.night(Task("pass", broken), Task("drain", drain))
    world.wait(loop, 100)
    assert "night: pass failed: OSError: disk full; the loop goes on" in world.lines
    assert "drain: drafts 0" in world.lines
    world.change()
    world.wait(loop, 100)
    assert calls == ["pass", "drain", "pass", "drain"]
    assert (loop.failures, loop.worked, loop.spells) == (2, 0, 2)


def test_run_stops_on_the_stop_event_and_on_ctrl_c() -> None:
    world = World()
    loop = world.night()

    def stop_after_a_while(seconds: float) -> None:
        world.sleep(seconds)
        if world.now >= 500:
            loop.stop.set()

    loop.sleep = stop_after_a_while
    loop.run()
    assert world.runs == 1
    assert world.lines[-1] == "night: stopped after 1 quiet spell(s)"

    def interrupt(seconds: float) -> None:
        raise KeyboardInterrupt

    other = world.night()
    other.sleep = interrupt
    other.run()
    assert world.lines[-1] == "night: stopped after 0 quiet spell(s)"


def test_run_once_returns_after_one_spell() -> None:
    world = World()
    loop = world.night()
    loop.run(once=True)
    assert (world.runs, world.now) == (1, 60)


def test_the_snapshot_sees_size_and_mtime(tmp_path: Path) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = journals_for(
        {}, {"journals": {"claude": [str(tmp_path / "j")]}}, config_source=None, store="t"
    )
    path = jsonl(tmp_path / "j" / "p" / f"{SID}.jsonl", SESSION[:2])
    first = snapshot(journals, store.root)
    assert [(p, size) for p, size, _ in first] == [(str(path), path.stat().st_size)]
    jsonl(path, SESSION[2:3])
    assert snapshot(journals, store.root) != first


def test_the_cli_once_runs_one_pass_and_exits(tmp_path: Path, cli: Cli) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", SESSION)
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    args = ("-c", str(config), "distill", "night", "--store", "test", "--once")
    first = cli(*args, "--idle-sec", "0.05", "--poll-sec", "0.01")
    assert first.code == 0, first
    lines = first.out.splitlines()
    assert lines[0].endswith("night: watching the journals (idle 0.05s, poll 0.01s)")
    assert any(" distill: 1 source(s)," in line for line in lines)
    assert lines[-1].endswith("night: stopped after 1 quiet spell(s)")
    again = cli(*args, "--idle-sec", "0.01", "--poll-sec", "0.01")
    assert again.code == 2, again  # everything was read already
    assert any(line.endswith(" distill: nothing new to read") for line in again.out.splitlines())
    ran = cli("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert json.loads(ran.out)["nothing"] is True


# -- idle_min and backoff_min from kura.toml, with a real process --------------------------------

KURA = [sys.executable, "-m", "kura"]


def night_config(tmp_path: Path, distill: str) -> tuple[Path, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", SESSION)
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[distill]\n{distill}\n\n[stores.test]\npath = "{store.root}"\n\n'
        f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    return store.root, config


def test_night_honours_idle_min_from_the_config(tmp_path: Path) -> None:
    """``idle_min = 0.01`` is a quiet spell of 0.6 s; the loop used to wait its 20-minute
    default, whatever the config said."""
    _, config = night_config(tmp_path, "idle_min = 0.01")
    proc = subprocess.Popen([*KURA, "-c", str(config), "distill", "night", "--store", "test", "--once"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].endswith("night: watching the journals (idle 0.6s, poll 0.15s)")
    assert any(" distill: 1 source(s)," in line for line in lines)


def test_night_tries_a_failed_pass_again_after_backoff_min(tmp_path: Path) -> None:
    """A pass that fails is tried again once ``backoff_min`` has passed, with no change to the
    journals; then a fixed store gets its pass."""
    root, config = night_config(tmp_path, "idle_min = 0.005\nbackoff_min = 0.005")
    blocker = root / ".kura" / "drafts"
    blocker.parent.mkdir(exist_ok=True)
    blocker.write_text("a file where the drafts folder goes\n")
    proc = subprocess.Popen([*KURA, "-c", str(config), "distill", "night", "--store", "test"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    assert proc.stdout is not None
    seen: list[str] = []
    threading.Thread(target=lambda: seen.extend(proc.stdout or ()), daemon=True).start()

    def until(check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 90
        while not check() and time.monotonic() < deadline:
            time.sleep(0.05)

    try:
        until(lambda: sum("pass failed" in line for line in seen) >= 2)
        assert sum("pass failed" in line for line in seen) >= 2, seen
        assert any("trying again after the backoff" in line for line in seen), seen
        blocker.unlink()
        until(lambda: any(" distill: 1 source(s)," in line for line in seen))
        assert any(" distill: 1 source(s)," in line for line in seen), seen
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
