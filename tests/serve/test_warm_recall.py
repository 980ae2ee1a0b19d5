"""A warm server does per request only what depends on the question: a store whose watcher
reports its changes is not walked for its stamp on every request, and an edit on disk still
reaches the next recalls — through the watcher, or, when the kernel lost events, through the
walk the next request makes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from conftest import uvicorn_app

from kura.config import parse_config
from kura.recall import search
from kura.serve.http import create_app
from kura.serve.pool import FRESH_SECONDS, StorePool
from kura.serve.watch import LOST, stop_watching, watch

QUESTION = "how do I run the tests?"


@pytest.fixture
def service(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Iterator[StorePool]:
    root = sample_copy(tmp_path / "team")
    pool = StorePool(parse_config({"stores": {"team": {"path": str(root)}}}))
    yield pool
    pool.close()


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    walked: list[Path] = []
    plain = search.stamp_files

    def counted(root: Path) -> str:
        walked.append(root)
        return plain(root)

    monkeypatch.setattr(search, "stamp_files", counted)
    return walked


def test_a_watched_store_is_not_walked_for_its_stamp_on_each_request(
    service: StorePool, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.recall(QUESTION)
    walked = _walks(monkeypatch)
    served = service.served("team")
    served.checked -= FRESH_SECONDS * 2  # as if a second had passed
    service.recall(QUESTION)
    assert len(walked) == 1  # unwatched: walked once a second, as before
    service.watching("team")
    served.checked -= FRESH_SECONDS * 2
    service.recall(QUESTION)
    assert len(walked) == 1  # watched: its watcher says what changed; today's code walked again
    service.changed({LOST})  # the kernel lost events: the next request walks
    service.recall(QUESTION)
    assert len(walked) == 2


def test_lost_events_count_as_the_whole_store_changed(tmp_path: Path) -> None:
    from watchdog.events import EventsLostEvent

    (tmp_path / "s").mkdir()
    told: list[set[str]] = []
    watcher, observer = watch(tmp_path / "s", lambda: None, after=told.append, beat=False)
    try:
        emitter = next(iter(observer.emitters))
        emitter.queue_event(EventsLostEvent(str(tmp_path / "s")))  # what watchdog sends on an overflow
        deadline = time.monotonic() + 10
        while not told and time.monotonic() < deadline:
            time.sleep(0.02)
        assert told == [{LOST}]
    finally:
        stop_watching(watcher, observer)


def test_an_edit_on_disk_reaches_a_watched_servers_recalls(service: StorePool) -> None:
    root = Path(service.config.stores["team"].path)
    with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
        first = client.post("/recall", json={"question": QUESTION}).json()
        assert first["picked"][0]["slug"] == "test-command"
        assert "team" in service._watched
        path = root / "test-command.md"
        path.write_bytes(
            path.read_bytes().replace(b"name: How to run the tests", b"name: zanzibarquux tests")
        )
        told = client.post("/recall", json={"question": QUESTION}).json()
        assert "zanzibarquux" in told["context"]  # the text at once: read again, as it changed
        deadline = time.monotonic() + 20  # the words once the watcher has settled the save
        found: list[str] = []
        while "test-command" not in found and time.monotonic() < deadline:
            answer = client.post("/recall", json={"question": "zanzibarquux"}).json()
            found = [pick["slug"] for pick in answer["picked"]] + answer["walked"]
            time.sleep(0.05)
        assert "test-command" in found
