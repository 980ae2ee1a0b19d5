"""``kura hook capture``, end to end with real processes: Claude Code's Stop JSON on stdin,
a real transcript in tmp, the hook returning while a detached worker runs the pass, and the
person's "remember that …" arriving in the project's store and its map with no other step.
Five firings at once start one worker; a worker killed with SIGKILL loses nothing."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from kura.hosts import capture as cp
from kura.hosts import host_journals as hj
from kura.life import scratch as sc
from kura.store.store import Store, init_store

KURA = [sys.executable, "-m", "kura"]
SID = "0b6d3f52-1c4e-4a8b-9e07-5f2a6c1d8e34"
ASKED = "remember that the staging cluster lives in eu-west-3"
DEADLINE = 90.0


def cc(kind: str, content: Any, uuid: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    """One Claude Code transcript entry, with the envelope a real one carries."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", "model": "claude-sonnet-4-5", **message}
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": str(cwd),
            "sessionId": SID, "version": "2.1.3", "gitBranch": "main", "type": kind, "message": message,
            "uuid": uuid, "timestamp": "2026-12-01T09:30:00.000Z", **extra}  # fmt: skip


def session(cwd: Path) -> list[dict[str, Any]]:
    """A short session: the person asks for something to be kept, the agent works."""
    call = {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "kubectl get nodes"}}
    out = {
        "tool_use_id": "toolu_01",
        "type": "tool_result",
        "content": "No resources found",
        "is_error": False,
    }
    return [
        cc("user", ASKED, "u1", cwd),
        cc("assistant", [{"type": "text", "text": "Noted — I'll keep that in mind."}], "a1", cwd),
        cc("assistant", [call], "a2", cwd),
        cc("user", [out], "r2", cwd),
    ]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Store, Path]:
    """A project folder with its store at ./memory (no kura.toml anywhere) and a Claude Code
    transcript kept where Claude Code keeps them (under the tmp home)."""
    root = tmp_path / "ferry"
    store, _ = init_store(root / "memory", name="main")
    transcript = write(tmp_path / "home" / ".claude" / "projects" / "-ferry" / f"{SID}.jsonl", session(root))
    return root, store, transcript


def fire(cwd: Path, transcript: Path, event: str = "Stop", **extra: Any) -> subprocess.Popen[str]:
    body = {"session_id": SID, "transcript_path": str(transcript), "cwd": str(cwd),
            "hook_event_name": event, **extra}  # fmt: skip
    proc = subprocess.Popen([*KURA, "hook", "capture"], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(body))
    proc.stdin.close()
    return proc


def done(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    assert proc.stdout is not None and proc.stderr is not None
    code = proc.wait(timeout=60)
    return code, proc.stdout.read(), proc.stderr.read()


def poll(check: Callable[[], Any], what: str) -> Any:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"not within {DEADLINE:.0f}s: {what}")


def log_lines(store: Store) -> list[str]:
    path = store.root / ".kura" / cp.LOG_NAME
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def unlocked(store: Store) -> bool:
    """No worker holds the capture lock (taken and let go at once to tell)."""
    fd = os.open(store.root / ".kura" / cp.LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def idle(store: Store) -> bool:
    """No worker runs and none is asked for."""
    return unlocked(store) and not (store.root / ".kura" / cp.AGAIN_NAME).exists()


def remembered(store: Store) -> list[str]:
    return [p.name for p in store.root.glob("*.md") if p.name != "MEMORY.md"]


def test_a_request_said_in_a_session_reaches_the_store_and_its_map(project: tuple[Path, Store, Path]) -> None:
    root, store, transcript = project
    code, out, err = done(fire(root, transcript))
    assert (code, out, err) == (0, "", "")  # the hook said nothing and returned before the pass ran
    poll(lambda: remembered(store), "the memory in the project's store")
    poll(lambda: idle(store), "the worker to finish")
    [name] = remembered(store)
    text = (store.root / name).read_text(encoding="utf-8")
    assert "eu-west-3" in text and SID in text  # the witness names the session
    assert "eu-west-3" in (store.root / "MEMORY.md").read_text(encoding="utf-8")
    prefill = subprocess.run([*KURA, "prefill"], cwd=root, capture_output=True, text=True, timeout=60)
    assert prefill.returncode == 0 and "eu-west-3" in prefill.stdout
    why = subprocess.run([*KURA, "why", name.removesuffix(".md")], cwd=root, capture_output=True, text=True,
                         timeout=60)  # fmt: skip
    assert ASKED in why.stdout and SID in why.stdout
    # registered as a journal of the store with no config edit; a plain `kura distill run` reads it too
    assert [e.path for e in hj.registered(store.state_dir)] == [transcript]
    assert not (root / "kura.toml").exists()
    write(transcript, [cc("user", "Remember that the canary pool is called gw-canary-2.", "u9", root)])
    run = subprocess.run([*KURA, "distill", "run"], cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert any("gw-canary-2" in (store.root / n).read_text() for n in remembered(store))


def test_five_firings_at_once_start_one_worker_and_write_one_memory(
    project: tuple[Path, Store, Path],
) -> None:
    root, store, transcript = project
    (store.root / ".kura").mkdir(exist_ok=True)
    # the journals' lock held meanwhile: the worker the first firing starts cannot finish its
    # pass before the fifth firing has come and gone, however the machine schedules them
    with FileLock(str(store.root / ".kura" / "journals.lock")):
        procs = [fire(root, transcript) for _ in range(5)]
        assert [done(p)[0] for p in procs] == [0] * 5
    poll(lambda: remembered(store), "the memory")
    poll(lambda: idle(store), "the worker to finish")
    started = [line for line in log_lines(store) if "started" in line]
    assert len(started) == 1, log_lines(store)
    assert len(remembered(store)) == 1


def test_a_killed_worker_loses_nothing_and_the_next_firing_writes_no_duplicate(
    project: tuple[Path, Store, Path],
) -> None:
    root, store, transcript = project
    assert done(fire(root, transcript))[0] == 0
    line = poll(lambda: next((x for x in log_lines(store) if "started" in x), None), "the worker to start")
    pid = int(line.split("worker ")[1].split()[0])
    os.kill(pid, signal.SIGKILL)  # wherever it was: importing, reading, staging or pouring
    poll(lambda: unlocked(store), "the killed worker's lock to go with it")
    assert done(fire(root, transcript))[0] == 0
    poll(lambda: remembered(store), "the memory after the kill")
    poll(lambda: idle(store), "the second worker to finish")
    assert len(remembered(store)) == 1
    index = (store.root / "MEMORY.md").read_text(encoding="utf-8")
    assert len([line for line in index.splitlines() if line.startswith("- [")]) == 1


def test_a_pass_stopped_after_staging_a_request_pours_it_next_time(tmp_path: Path) -> None:
    """The window a SIGKILL can hit between staging and pouring, made certain: the first pass
    fails right after the draft is staged (its watermark is never committed), the next one pours
    the staged draft once instead of passing over it."""
    from kura.distill import drafts as dr
    from kura.distill.run import run_pass
    from kura.transcripts import journals as jr

    store, _ = init_store(tmp_path / "store", name="main")
    transcript = write(tmp_path / "t" / f"{SID}.jsonl", session(tmp_path))
    journals = jr.Journals(files=(jr.Root(transcript, "claude"),))

    def stage_then_die(*args: Any, **kwargs: Any) -> Path:
        dr.stage(*args, **kwargs)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_pass(store, journals, stage=stage_then_die)
    assert remembered(store) == [] and len(dr.staged(store)) == 1
    metrics = run_pass(store, journals)
    assert metrics.poured == 1 and len(remembered(store)) == 1 and dr.staged(store) == []
    again = run_pass(store, journals)
    assert again.nothing and len(remembered(store)) == 1


def test_precompact_marks_what_was_said_as_out_of_the_window(tmp_path: Path) -> None:
    root = tmp_path / "ferry"
    store, _ = init_store(root / "memory", name="main")
    said = "The staging database runs on db-staging.internal port 5433."
    transcript = write(tmp_path / "t" / f"{SID}.jsonl", [cc("user", said, "u1", root),
                       cc("assistant", [{"type": "text", "text": "Understood."}], "a1", root)])  # fmt: skip
    assert done(fire(root, transcript, "Stop"))[0] == 0
    poll(lambda: idle(store) and any("pass(es)" in x for x in log_lines(store)), "the first pass")
    [item] = sc.load(store).items.values()
    assert [m.out for m in item.mentions] == [False]  # said, still in the window
    assert done(fire(root, transcript, "PreCompact", trigger="manual", custom_instructions=""))[0] == 0
    poll(lambda: idle(store) and sum("pass(es)" in x for x in log_lines(store)) == 2, "the second pass")
    [item] = sc.load(store).items.values()
    assert [m.out for m in item.mentions] == [True]
    assert [w.kind for w in item.witnesses()] == ["TIDE"]
    assert hj.registered(store.state_dir)[0].compact_at == ()  # applied, so settled


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[1, 2]", '{"hook_event_name": "Nope"}', '{"cwd": "relative/path"}',
     '{"transcript_path": "/etc/passwd", "cwd": "/"}'],
)  # fmt: skip
def test_the_hook_never_fails_the_host(tmp_path: Path, stdin: str) -> None:
    proc = subprocess.run([*KURA, "hook", "capture"], cwd=tmp_path, input=stdin, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith("kura: hook capture: ")


def test_a_folder_with_no_store_gets_nothing_made(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    transcript = write(tmp_path / "t" / f"{SID}.jsonl", session(bare))
    code, out, err = done(fire(bare, transcript))
    assert (code, out) == (0, "") and "no store here" in err and len(err.splitlines()) == 1
    assert list(bare.iterdir()) == []


def test_the_full_command_line_takes_a_store_flag(project: tuple[Path, Store, Path], tmp_path: Path) -> None:
    """``kura -s DIR hook capture`` (the typer path, not the fast one) captures into that store."""
    _, store, transcript = project
    body = json.dumps({"session_id": SID, "transcript_path": str(transcript), "cwd": str(tmp_path),
                       "hook_event_name": "SessionEnd"})  # fmt: skip
    done = subprocess.run([*KURA, "-s", str(store.root), "hook", "capture"], input=body, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    poll(lambda: remembered(store), "the memory in the named store")
    poll(lambda: idle(store), "the worker to finish")


@pytest.mark.parametrize("command", ["capture", "prompt"])
def test_a_host_that_never_closes_stdin_does_not_hold_the_hook(tmp_path: Path, command: str) -> None:
    """The hooks read the host's JSON as session-start does: a pipe left open past the wait
    is gone without, one line on stderr, exit 0 — never a hook that waits for ever."""
    proc = subprocess.Popen([*KURA, "hook", command], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.wait(timeout=30) == 0
        assert "no JSON from the host within 2 s" in (proc.stderr.read() if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
        if proc.stdin:
            proc.stdin.close()


@pytest.mark.parametrize("name", [cp.LOCK_NAME, cp.AGAIN_NAME, cp.LOG_NAME])
def test_a_capture_file_that_is_a_folder_is_moved_aside_and_the_pass_runs(
    project: tuple[Path, Store, Path], name: str
) -> None:
    """A store's ``.kura/`` can come with a clone, and git keeps a folder with a file in it:
    ``capture.lock/`` (or the mark, or the log) as a folder failed every firing with EISDIR,
    so nothing said in a session was ever captured. The folder is moved aside (its file kept,
    said on stderr) and the pass runs."""
    root, store, transcript = project
    planted = store.root / ".kura" / name
    planted.mkdir(parents=True)
    (planted / "keep.txt").write_text("a file the clone brought\n")
    code, out, err = done(fire(root, transcript))
    assert (code, out) == (0, "")
    assert f".kura/{name}: is a folder, not a file; moved it to {name}.damaged" in err, err
    poll(lambda: remembered(store), "the memory in the project's store")
    poll(lambda: idle(store), "the worker to finish")
    kept = store.root / ".kura" / f"{name}.damaged" / "keep.txt"
    assert kept.read_text() == "a file the clone brought\n"
