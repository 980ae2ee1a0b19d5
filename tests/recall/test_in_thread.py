"""``kura recall --thread ID``: a thread's items searched the way recall searches a store, through
real ``kura`` processes on a real store (``kura.recall.in_thread``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ITEMS = {
    "user-format-preference": "prefers markdown tables over bullet lists in every answer",
    "work:current-project": "building the A2A handshake for the Talon daemon",
    "pet": "the user's cat is called Miso and sleeps on the keyboard",
}
MEMORY = (
    "---\nname: cat food\ndescription: The office cat eats salmon kibble\ntype: user\n---\n\nSalmon kibble.\n"
)


def kura(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(store.parent / "home")}
    return subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store), *args],
        capture_output=True, text=True, check=False, timeout=300, env=env,
    )  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("in-thread") / "store"
    root.mkdir()
    (root.parent / "home").mkdir()
    (root / "MEMORY.md").write_text("- [cat food](cat-food.md) — The office cat eats salmon kibble\n")
    (root / "cat-food.md").write_text(MEMORY)
    for key, value in ITEMS.items():
        done = kura(root, "thread", "support-4711", "write", key, value, "--namespace", "fact")
        assert done.returncode == 0, done.stderr
    return root


def test_a_threads_items_are_searched_by_meaning(store: Path) -> None:
    done = kura(
        store, "recall", "--thread", "support-4711", "does the user want tables or bullet points?", "--json"
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["thread"] == "support-4711" and found["how"] == "embedded"
    assert [p["slug"] for p in found["picked"]][:1] == ["user-format-preference"]
    assert "prefers markdown tables" in found["context"] and "Miso" not in found["context"]


def test_a_key_with_a_namespace_is_named_by_its_key(store: Path) -> None:
    done = kura(store, "recall", "--thread", "support-4711", "what is the user building for the daemon?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recall (embedded): work:current-project ")


def test_the_store_and_the_thread_never_answer_for_each_other(store: Path) -> None:
    """The store's cat memory is not a thread item; the thread's cat item is not a memory."""
    thread = json.loads(
        kura(store, "recall", "--thread", "support-4711", "what does the cat eat?", "--json").stdout
    )
    assert "cat-food" not in [p["slug"] for p in thread["picked"]]
    memories = json.loads(kura(store, "recall", "what is the cat called?", "--json", "--no-model").stdout)
    assert all(p["slug"] == "cat-food" for p in memories["picked"])


def test_nothing_in_the_thread_bears_on_it(store: Path) -> None:
    done = kura(store, "recall", "--thread", "support-4711", "what is the capital of Peru?")
    assert done.returncode == 2
    assert done.stdout.splitlines()[0].startswith("recall (embedded): nothing bears on this (--explain lists")


@pytest.mark.parametrize(("thread", "said"), [("nope", "has no items"), ("../other", "is not a thread id")])
def test_a_thread_that_is_not_there_or_not_a_name(store: Path, thread: str, said: str) -> None:
    done = kura(store, "recall", "--thread", thread, "anything")
    assert done.returncode != 0 and said in done.stderr and done.stdout == ""
