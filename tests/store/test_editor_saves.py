"""A person's editor and kura writing the same files: an editor's save is never lost, and a
file caught half-saved is never taken for the whole of it.

The editor here is a real process that saves in place the way many editors do: it opens the
file for writing (which truncates it), then writes the new bytes some time later.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import make_store, uvicorn_app, write_memory

from kura.config import parse_config
from kura.errors import StoreError
from kura.files.memory_index import parse_index
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store

EDITOR = textwrap.dedent(
    """
    import os, sys, time
    path, pause, source, release = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
    text = open(source, encoding="utf-8").read()
    handle = open(path, "w", encoding="utf-8")  # an in-place save: the file is empty from here on
    print("truncated", flush=True)
    time.sleep(pause)
    deadline = time.monotonic() + 60
    while release and not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.01)
    handle.write(text)
    handle.close()
    """
)


@contextmanager
def editor_saving(
    path: Path, text: str, pause: float, *, until_done: bool = False
) -> Iterator[subprocess.Popen[str]]:
    """A real process that truncates ``path`` and writes ``text`` into it ``pause`` seconds
    later — with ``until_done``, not before the block has ended either, however slow the
    machine is; the block runs once the file has been truncated."""
    source = path.parent.parent / f"{path.name}.{time.monotonic_ns()}.editor"
    source.write_text(text, encoding="utf-8")
    release = source.with_suffix(".done") if until_done else None
    proc = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(path), str(pause), str(source), str(release or "")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "truncated"
        yield proc
    finally:
        if release is not None:
            release.touch()
        assert proc.wait(timeout=30) == 0


def seeded(root: Path, count: int = 120) -> Store:
    store = make_store(root, [(f"m{i:03d}", "project", f"fact number {i}", None) for i in range(count)])
    store.remember("seed", "a memory kura itself wrote, so it knows the index")
    return Store(root)


def entries(path: Path) -> list[str]:
    return [line.slugs[0] for line in parse_index(path.read_text(encoding="utf-8")).entries()]


@pytest.mark.parametrize("pause", [0.08, 0.4, 1.0])
def test_an_editor_that_truncates_then_writes_loses_nothing(tmp_path: Path, pause: float) -> None:
    store = seeded(tmp_path / "s")
    saved = store.index_path.read_text(encoding="utf-8") + "A line the person typed.\n"
    with editor_saving(store.index_path, saved, pause):
        try:
            store.remember("new", "written while the editor was saving")
            wrote = True
        except StoreError as err:  # refusing is allowed; guessing is not
            assert "MEMORY.md" in str(err)
            wrote = False
    after = store.index_path.read_text(encoding="utf-8")
    assert "A line the person typed." in after
    assert [f"m{i:03d}" for i in range(120)] + ["seed"] == [
        s for s in entries(store.index_path) if s != "new"
    ]
    assert (entries(store.index_path).count("new") == 1) is wrote


def test_an_index_left_empty_is_refused_and_left_untouched(tmp_path: Path) -> None:
    store = seeded(tmp_path / "s", 20)
    saved = store.index_path.read_text(encoding="utf-8")
    with editor_saving(store.index_path, saved, 0, until_done=True):  # left empty while kura runs
        result = subprocess.run(
            [sys.executable, "-m", "kura", "-s", str(store.root), "remember", "new", "written meanwhile"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 1, result
        assert "MEMORY.md" in result.stderr and "Traceback" not in result.stderr
        assert store.index_path.read_bytes() == b""  # untouched: the editor still has it
        assert not (store.root / "new.md").exists()  # nothing half-done either
    assert store.index_path.read_text(encoding="utf-8") == saved


def test_an_index_that_lost_lines_since_kura_wrote_it_is_refused(tmp_path: Path) -> None:
    store = seeded(tmp_path / "s", 30)
    lines = store.index_path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = "".join(line for line in lines if "(m01" not in line)  # m010..m019 gone, their files are not
    store.index_path.write_text(cut, encoding="utf-8")
    old = time.time() - 60
    os.utime(store.index_path, (old, old))
    result = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store.root), "remember", "new", "written after"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1, result
    assert "MEMORY.md" in result.stderr and "m010" in result.stderr and "doctor --fix" in result.stderr
    assert store.index_path.read_text(encoding="utf-8") == cut
    # a person who removes a memory removes its file too: that is no loss
    for i in range(10, 20):
        (store.root / f"m{i:03d}.md").unlink()
    Store(store.root).remember("new", "written after")
    assert entries(store.index_path)[-1] == "new"


def test_doctor_fix_puts_lost_lines_back_and_writes_go_on(tmp_path: Path) -> None:
    store = seeded(tmp_path / "s", 10)
    store.index_path.write_text("# Memory index\n", encoding="utf-8")
    old = time.time() - 60
    os.utime(store.index_path, (old, old))
    with pytest.raises(StoreError, match=r"MEMORY\.md"):
        Store(store.root).remember("new", "written after")
    result = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store.root), "doctor", "--fix"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in result.stderr
    Store(store.root).remember("new", "written after")
    assert sorted(entries(store.index_path)) == sorted([f"m{i:03d}" for i in range(10)] + ["seed", "new"])


def test_a_memory_file_truncated_by_an_editor_keeps_the_editors_words(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "note", "project", "the first description", body="Line one.")
    store = Store(root)
    path = root / "note.md"
    edited = path.read_text(encoding="utf-8").replace("Line one.", "Line one.\nA line typed by hand.")
    with editor_saving(path, edited, 0.4):
        try:
            store.remember("note", "a second description")
            wrote = True
        except StoreError as err:
            assert "note" in str(err)
            wrote = False
    text = path.read_text(encoding="utf-8")
    assert "A line typed by hand." in text and "Line one." in text
    assert ("a second description" in text) is wrote


@pytest.mark.parametrize("target", ["MEMORY.md", "note.md"])
def test_a_save_landing_between_the_check_and_the_rename_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    root = tmp_path / "s"
    store = make_store(root, [("note", "project", "the first description", None)])
    path = root / target
    edited = path.read_text(encoding="utf-8").replace(
        "the first description", "the first description, edited"
    )
    edited += "Saved by the person at the last moment.\n"
    real_replace = os.replace
    editors: list[Any] = []

    def replace(src: Any, dst: Any) -> None:
        if Path(dst) == path and not editors:  # the editor opens the file right after kura's last look
            context = editor_saving(path, edited, 0.3)
            editors.append(context)
            context.__enter__()
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    store.remember("other" if target == "MEMORY.md" else "note", "a fact kura wrote")
    editors[0].__exit__(None, None, None)
    text = path.read_text(encoding="utf-8")
    assert "Saved by the person at the last moment." in text
    assert "a fact kura wrote" in text


def test_one_slug_written_by_many_at_once_never_answers_a_false_422(tmp_path: Path) -> None:
    root = tmp_path / "s"
    make_store(root, [("seed", "project", "a seed", None)])
    service = StorePool(parse_config({"stores": {"s": {"path": str(root)}}}))
    statuses: list[int] = []
    lock = threading.Lock()
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:

            def write(i: int) -> None:
                body = {"slug": "deploy-day", "description": f"deploys go out on day {i % 7}", "store": "s"}
                response = client.post("/remember", json=body)
                with lock:
                    statuses.append(response.status_code)

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(write, range(120)))
    finally:
        service.close()
    assert statuses == [200] * 120, sorted(statuses)
    memory = Store(root).show("deploy-day")
    assert memory.findings == ()
    assert entries(root / "MEMORY.md").count("deploy-day") == 1


@pytest.mark.parametrize("text", ["<!-- x", "a fact -->", "ends in <!--", "```", "~~~ fenced"])
def test_comment_and_fence_marks_never_hide_a_memorys_own_line(tmp_path: Path, text: str) -> None:
    store = make_store(tmp_path / "s", [("first", "project", "a first fact", None)])
    store.remember("a", text)
    store.remember("a", text)
    store.remember("b", "a later fact", title=text)
    store.remember("b", "a later fact", title=text)
    store.remember("c", "written after them")
    assert entries(store.index_path) == ["first", "a", "b", "c"]
    assert Store(store.root).show("a").description == text


def test_a_line_dropped_by_a_save_from_an_older_copy_is_put_back(tmp_path: Path, cli: Any) -> None:
    store = seeded(tmp_path / "s", 10)
    stale = store.index_path.read_text(encoding="utf-8")  # the person's editor read this copy
    store.remember("written-meanwhile", "kura wrote this while the person was editing")
    store.index_path.write_text(stale + "A line the person typed.\n", encoding="utf-8")
    result = cli("-s", str(store.root), "remember", "next", "written after the person's save")
    assert result.code == 0, result
    assert "written-meanwhile" in result.err and "put back" in result.err
    after = store.index_path.read_text(encoding="utf-8")
    assert "A line the person typed." in after
    assert entries(store.index_path) == [f"m{i:03d}" for i in range(10)] + [
        "seed",
        "next",
        "written-meanwhile",
    ]
