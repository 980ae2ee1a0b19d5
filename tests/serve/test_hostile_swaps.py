"""A warm ``kura serve`` answers from its index, refreshed once a second (a watched store:
when its watcher says so), and reads the picked memories' text afterwards. A memory that
is deleted, or swapped for a FIFO, a folder or a link out of the store, between the two
(a ``git checkout`` of another branch, someone's hostile commit) must cost only itself: the
recall answers 200 with the other memories, never hangs on the FIFO and never shows what a
link out points at. Before, the whole recall failed with 404 "no memory 'test-command'".

A real server on 127.0.0.1 port 0, real files swapped on disk. The index is held fresh by
setting its last check in the future, as ``test_warm_recall`` does, so the swap always lands
between the index and the read (no race left to luck)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from conftest import uvicorn_app
from test_warm_recall import service  # noqa: F401 - the fixture: a pool serving one copy of the sample store

from kura.serve.http import create_app
from kura.serve.pool import StorePool

QUESTION = "how do I run the tests?"
SECRET = "zq-outside-the-store-zq"


def deleted(path: Path, outside: Path) -> None:
    path.unlink()


def fifo(path: Path, outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def folder(path: Path, outside: Path) -> None:
    path.unlink()
    path.mkdir()


def link_out(path: Path, outside: Path) -> None:
    path.unlink()
    path.symlink_to(outside)


SWAPS = {f.__name__: f for f in (deleted, fifo, folder, link_out)}


@pytest.mark.parametrize("swap", SWAPS)
def test_a_memory_swapped_after_the_index_costs_only_itself(
    service: StorePool,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    swap: str,
) -> None:
    root = Path(service.config.stores["team"].path)
    outside = tmp_path / "secret.md"
    outside.write_text(
        f"---\nname: How to run the tests\ndescription: {SECRET}\ntype: project\n---\n{SECRET}\n"
    )
    with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
        first = client.post("/recall", json={"question": QUESTION})
        assert first.status_code == 200 and first.json()["picked"][0]["slug"] == "test-command"
        service.served("team").checked = time.monotonic() + 3600  # the index stays as it was read
        SWAPS[swap](root / "test-command.md", outside)
        then = client.post("/recall", json={"question": QUESTION})
        assert then.status_code == 200, then.text
        said = then.json()
        assert said["picked"] and SECRET not in said["context"]
        assert "=== test-command ===" not in said["context"]  # nothing shown of a file that is not one
        assert "=== dont-rerun-flaky-blindly ===" in said["context"] or len(said["picked"]) == 1
