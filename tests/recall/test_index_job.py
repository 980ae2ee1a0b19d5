"""A recall that finds the index partial starts one detached background build.

Real processes throughout: ``kura recall`` answers at once ($KURA_INDEX_BUDGET=0: it embeds
nothing itself) and leaves a build behind, a ``python -m kura.recall.index_job`` in its own
session; the test polls (with a deadline) until that build lets go of the store's lock,
then checks the index is whole, that only one build ran, that a SIGKILLed build is resumed
without embedding a finished row again, and that ``kura stores`` and ``kura doctor`` say
where the build is.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_index_build import generated

from kura.config import load_config
from kura.recall import index_job
from kura.recall.embed import MODEL_ID
from kura.serve.pool import StorePool

QUESTION = "where is the backup tape kept"
QUICK = {"KURA_INDEX_BUDGET": "0"}


def kura(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **QUICK}, timeout=180)  # fmt: skip


def recalled(cwd: Path) -> dict[str, object]:
    done = kura(cwd, "recall", QUESTION, "--no-model", "--json")
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def vectors(root: Path) -> int:
    db = sqlite3.connect(root / ".kura" / "search.db", timeout=30)
    try:
        return int(db.execute("SELECT count(*) FROM vectors WHERE model = ?", (MODEL_ID,)).fetchone()[0])
    finally:
        db.close()


def until(check: object, what: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"still waiting after {seconds} s for {what}"
        time.sleep(0.1)


def whole(pool: Any, later: dict[str, Any]) -> dict[str, Any]:
    """``pool``'s answer to QUESTION once it is no longer partial (``later``: the last one)."""
    deadline = time.monotonic() + 300
    while later["partial"] is not None:
        assert time.monotonic() < deadline, later
        time.sleep(0.2)
        later = pool.recall(QUESTION, hops=0)
    return later


def starts(root: Path) -> int:
    log = root / ".kura" / index_job.LOG_NAME
    return sum(line.endswith(" started") for line in log.read_text().splitlines()) if log.exists() else 0


def a_store(tmp_path: Path, n: int) -> Path:
    root = tmp_path / "big"
    root.mkdir()
    generated(root, n)
    (tmp_path / "kura.toml").write_text(f'[stores.big]\npath = "{root}"\n')
    return root


def test_a_partial_recall_starts_one_build_and_a_later_recall_is_whole(tmp_path: Path) -> None:
    root = a_store(tmp_path, 400)
    first = recalled(tmp_path)
    assert first["partial"] == {"indexed": 0, "memories": 400}
    assert "a background build" in str(first["reason"]) and "kura stores" in str(first["reason"])
    second = recalled(tmp_path)  # while the build runs (or after it): never a second build
    assert second["picked"][0]["slug"] == "tape-backup"  # type: ignore[index]
    until(lambda: not index_job.running(root) and starts(root) >= 1, "the build to end")
    assert starts(root) == 1 and vectors(root) == 400
    said = index_job.progress(root)
    assert said is not None and (said.state, said.done, said.total) == ("done", 400, 400)
    third = recalled(tmp_path)
    assert (third["how"], third["partial"], third["degraded"]) == ("embedded", None, False)
    assert starts(root) == 1


def test_a_killed_build_is_resumed_by_the_next_recall_and_shown_meanwhile(tmp_path: Path) -> None:
    root = a_store(tmp_path, 600)
    recalled(tmp_path)
    until(lambda: (p := index_job.progress(root)) is not None and p.done > 0, "the first chunk")
    said = index_job.progress(root)
    assert said is not None and said.state == "running"
    os.kill(said.pid, signal.SIGSTOP)  # held mid-build: a fast build must not end before the kill
    try:
        stores = json.loads(kura(tmp_path, "stores", "--json").stdout)["stores"][0]["index_build"]
    finally:
        os.kill(said.pid, signal.SIGKILL)
    assert (
        stores["state"] == "running"
        and stores["pid"] == said.pid
        and stores["line"].startswith(f"index build running (pid {said.pid}): ")
    )
    until(lambda: not index_job.running(root), "the lock to go with the killed build", 30)
    kept = vectors(root)
    assert 0 < kept < 600
    stopped = index_job.progress(root)
    assert stopped is not None and stopped.state == "stopped"
    doctor = json.loads(kura(tmp_path, "doctor", "--json").stdout)
    assert doctor["index_build"]["state"] == "stopped"
    assert "index build stopped at" in kura(tmp_path, "doctor").stdout
    recalled(tmp_path)  # resumes it
    until(lambda: not index_job.running(root) and starts(root) >= 2, "the second build to end")
    again = index_job.progress(root)
    assert again is not None and (again.state, again.total) == ("done", 600 - kept)  # no row embedded twice
    assert vectors(root) == 600 and starts(root) == 2


def test_a_damaged_progress_file_reports_no_build(tmp_path: Path) -> None:
    root = tmp_path / "s"
    (root / ".kura").mkdir(parents=True)
    for text in ('{"state": "running", "pid": "1"}', "[1, 2]", "{", '{"state": "gone"}'):
        (root / ".kura" / index_job.PROGRESS_NAME).write_text(text)
        assert index_job.progress(root) is None
    assert not index_job.running(root)


def test_a_server_for_one_session_starts_the_detached_build_and_reads_its_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = a_store(tmp_path, 300)
    monkeypatch.setenv("KURA_INDEX_BUDGET", "0")
    pool = StorePool(load_config(str(tmp_path / "kura.toml")), detach=True)  # what kura mcp makes
    try:
        first = pool.recall(QUESTION, hops=0)
        assert first["partial"] == {"indexed": 0, "memories": 300}
        until(lambda: starts(root) == 1, "the detached build to start")
        later = whole(pool, first)
        assert (later["how"], later["degraded"]) == ("embedded", False)
    finally:
        pool.close()
    until(lambda: not index_job.running(root), "the build to end")
    assert starts(root) == 1 and vectors(root) == 300


def test_a_recall_over_stdio_mcp_leaves_a_build_that_outlives_the_session(tmp_path: Path) -> None:
    root = a_store(tmp_path, 300)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "kura_recall", "arguments": {"question": QUESTION}}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "kura", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=tmp_path, env={**os.environ, **QUICK},
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    lines = [proc.stdout.readline(), proc.stdout.readline()]  # the two answers, then the session ends
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    answer = {json.loads(line)["id"]: json.loads(line) for line in lines}[2]
    text = answer["result"]["content"][0]["text"]
    assert "tape-backup" in text and "0 of 300 memories have vectors" in text  # at once, from what there was
    until(lambda: starts(root) == 1 and not index_job.running(root), "the build the session left")
    assert vectors(root) == 300 and (index_job.progress(root) or index_job.Progress).state == "done"


def test_a_server_follows_the_build_a_recall_left_instead_of_starting_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = a_store(tmp_path, 300)
    assert recalled(tmp_path)["partial"] is not None  # returns holding the build's lock in the build
    monkeypatch.setenv("KURA_INDEX_BUDGET", "0")
    pool = StorePool(load_config(str(tmp_path / "kura.toml")))  # what kura serve makes: a thread builder
    try:
        later = whole(pool, pool.recall(QUESTION, hops=0))
        assert (later["how"], later["degraded"]) == ("embedded", False)
        build = pool.served(None).build
        assert build is not None and build._thread is None  # it never embedded itself
    finally:
        pool.close()
    assert starts(root) == 1 and vectors(root) == 300
