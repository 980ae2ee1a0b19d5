"""Names as an attacker gives them (issue 29, item 1): a slug with a trailing newline, and
files a cloned repository holds under names kura would never make.

A refused write writes nothing (CLI and HTTP); a file no look-up can reach is skipped by
every reader and named by doctor, never fatal to recall, context, index or show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import make_store, uvicorn_app

from kura.config import parse_config
from kura.files.slugs import is_memory_name, new_part, unreachable_name
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store

MEMORIES = [
    ("deploy-day", "project", "deploys go out on tuesday after the standup", None),
    ("archive-disk", "project", "the archive lives on the slow disk", None),
]
ODD = ["x\n.md", "a:b.md", " lead.md", "tail .md", "tab\there.md", "dir /y.md", "back\\slash.md"]
FRONT = "---\nname: planted\ndescription: deploys go out on friday\ntype: project\n---\nplanted body\n"


def kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ),
    )


@pytest.fixture
def mem(tmp_path: Path) -> Store:
    return make_store(tmp_path / "mem", MEMORIES)


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".kura" not in p.parts)


@pytest.mark.parametrize("slug", ["x\n", "x\r\n", "deploy\n", "a/b\n"])
def test_cli_refuses_a_slug_with_a_trailing_newline_and_writes_nothing(mem: Store, slug: str) -> None:
    before, index = files(mem.root), (mem.root / "MEMORY.md").read_bytes()
    done = kura("-s", str(mem.root), "remember", slug, "d")
    assert done.returncode == 1
    assert "is not a usable slug" in done.stderr
    assert files(mem.root) == before
    assert (mem.root / "MEMORY.md").read_bytes() == index


def test_http_refuses_a_slug_with_a_trailing_newline_and_writes_nothing(mem: Store) -> None:
    before = files(mem.root)
    service = StorePool(parse_config({"stores": {"mem": {"path": str(mem.root)}}}))
    with uvicorn_app(create_app(service, watch=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        answer = http.post("/remember", json={"slug": "x\n", "description": "d"})
        assert answer.status_code == 422
        assert files(mem.root) == before
        found = http.post("/recall", json={"question": "when do deploys go out?", "hops": 0})
        assert found.status_code == 200


def plant(root: Path) -> None:
    (root / "dir ").mkdir()
    for name in ODD:
        (root / name).write_text(FRONT)


def test_planted_names_are_skipped_by_every_reader(mem: Store) -> None:
    plant(mem.root)
    store = str(mem.root)
    recall = kura("-s", store, "recall", "when do deploys go out?", "--json")
    assert recall.returncode == 0, recall.stderr
    assert "planted" not in recall.stdout
    context = kura("-s", store, "context", "deploys")
    assert context.returncode == 0, context.stderr
    assert "planted" not in context.stdout
    index = kura("-s", store, "index")
    assert index.returncode in (0, 2), index.stderr  # 2: recall has just brought it up to date
    assert "2 in the index" in index.stdout
    shown = kura("-s", store, "show", "deploy-day")
    assert shown.returncode == 0, shown.stderr
    listed = kura("-s", store, "list", "--json")
    assert listed.returncode == 0
    assert sorted(m["slug"] for m in json.loads(listed.stdout)) == ["archive-disk", "deploy-day"]


def test_doctor_names_each_planted_file(mem: Store) -> None:
    plant(mem.root)
    done = kura("-s", str(mem.root), "doctor")
    for name in ODD:
        assert f"mem/{name!r}:1: a file name kura never makes" in done.stdout, name
    assert kura("-s", str(mem.root), "doctor", "--fix").returncode in (0, 1, 2)
    assert all((mem.root / name).exists() for name in ODD)  # reported, never deleted


@pytest.mark.parametrize("name", ODD)
def test_listing_and_lookup_agree(name: str) -> None:
    assert not is_memory_name(name)
    assert unreachable_name(name)


@pytest.mark.parametrize("part", ["x\n", "x\r", "a\tb", "", "_x", "x y"])
def test_a_part_kura_makes_is_matched_whole(part: str) -> None:
    assert not new_part(part)
