"""Issue 29 items 8 and 13, as an attacker (or an unlucky person) tries them.

8: a deleted item's kept copy was named ``YYYYmmddTHHMMSS-<path>`` with ``/`` → ``~``, so two
deletes of one key within a second kept one copy (a person's first version lost), and keys
``a~b`` and ``a:b`` collided. Every delete keeps its own copy, by the command line (real
``kura thread`` subprocesses) and over HTTP.

13: a symlinked thread folder or item answered HTTP 500; it is a 4xx with the reason, and
nothing is read or written through the link. A real server on 127.0.0.1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
from conftest import Cli, uvicorn_app

from kura.config import load_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import init_store


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store, _ = init_store(tmp_path / "main", name="main")
    store.remember("deploy-day", "we deploy on Tuesdays", type="project")
    (tmp_path / "kura.toml").write_text('[stores.main]\npath = "main"\n')
    return tmp_path


def kept(root: Path, thread: str) -> list[bytes]:
    folder = root / "main" / ".kura" / "threads" / thread / "deleted"
    return sorted(p.read_bytes() for p in folder.iterdir()) if folder.is_dir() else []


def thread(cli: Cli, root: Path, *args: str) -> dict[str, object]:
    done = cli("-c", str(root / "kura.toml"), "-s", "main", "thread", *args, "--json")
    assert done.code == 0, done
    return dict(json.loads(done.out))


def test_two_deletes_of_one_key_within_a_second_keep_both_versions(root: Path, cli: Cli) -> None:
    for version in ("first version, by a person", "second version"):
        thread(cli, root, "t1", "write", "plan", version)
        thread(cli, root, "t1", "delete", "plan")
    copies = kept(root, "t1")
    assert len(copies) == 2
    assert any(b"first version, by a person" in c for c in copies) and any(
        b"second version" in c for c in copies
    )


def test_keys_a_tilde_b_and_a_colon_b_never_share_a_kept_copy(root: Path, cli: Cli) -> None:
    thread(cli, root, "t1", "write", "a:b", "the colon one")
    by_hand = root / "main" / "threads" / "t1" / "a~b.md"  # a name a person may use; kura reads it
    by_hand.write_text("---\nkey: a~b\n---\nthe tilde one\n")
    first = thread(cli, root, "t1", "delete", "a~b")["kept"]
    second = thread(cli, root, "t1", "delete", "a:b")["kept"]
    assert first != second
    copies = kept(root, "t1")
    assert (
        len(copies) == 2
        and any(b"the tilde one" in c for c in copies)
        and any(b"the colon one" in c for c in copies)
    )


def test_many_deletes_over_http_keep_every_copy(root: Path) -> None:
    service = StorePool(load_config(str(root / "kura.toml")))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as http:
            for n in range(5):
                assert http.put("/threads/t2/memory/plan", json={"value": f"version {n}"}).status_code == 200
                assert http.delete("/threads/t2/memory/plan").status_code == 200
    finally:
        service.close()
    copies = kept(root, "t2")
    assert sorted(c.split(b"---\n")[-1] for c in copies) == [f"version {n}\n".encode() for n in range(5)]


def _linked(root: Path) -> None:
    """threads/t1 a symlink to a folder outside the store; threads/t2/x.md a symlink to a
    file outside it; threads/t3/work a symlinked folder."""
    outside = root / "outside"
    (outside / "work").mkdir(parents=True)
    (outside / "x.md").write_text("---\nkey: x\n---\nsecret plans\n")
    (outside / "work" / "y.md").write_text("---\nkey: work:y\n---\nmore secret plans\n")
    threads = root / "main" / "threads"
    threads.mkdir()
    os.symlink(outside, threads / "t1")
    (threads / "t2").mkdir()
    os.symlink(outside / "x.md", threads / "t2" / "x.md")
    (threads / "t3").mkdir()
    os.symlink(outside / "work", threads / "t3" / "work")


def test_a_symlinked_thread_folder_or_item_is_a_4xx_with_the_reason(root: Path) -> None:
    _linked(root)
    before = {p: p.read_bytes() for p in (root / "outside").rglob("*.md")}
    calls = [
        ("PUT", "/threads/t1/memory/x", {"value": "through the link"}),
        ("POST", "/threads/t1/memory", {"updates": {"x": "through the link"}}),
        ("POST", "/observe", {"text": "through the link", "thread": "t1"}),
        ("GET", "/threads/t2/memory/x", None),
        ("PUT", "/threads/t2/memory/x", {"value": "through the link"}),
        ("DELETE", "/threads/t2/memory/x", None),
        ("PUT", "/threads/t3/memory/work:y", {"value": "through the link"}),
        ("GET", "/threads/t3/memory/work:y", None),
        ("DELETE", "/threads/t3/memory/work:y", None),
    ]
    service = StorePool(load_config(str(root / "kura.toml")))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=30) as http:
            for method, path, body in calls:
                said = (
                    http.request(method, path, json=body) if body is not None else http.request(method, path)
                )
                assert 400 <= said.status_code < 500, (method, path, said.status_code, said.text)
                assert "link" in said.json()["error"]["message"], (method, path, said.text)
                assert "secret plans" not in said.text
    finally:
        service.close()
    assert {p: p.read_bytes() for p in (root / "outside").rglob("*.md")} == before
    assert not list((root / "outside").glob("_observations.md"))
