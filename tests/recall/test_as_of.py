"""``kura recall --at DATE``: what the store asserted on that day, through real ``kura`` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MEMORIES = {
    "deploy-heroku": (
        "The app is deployed on Heroku",
        "created: 2024-01-05\nsuperseded_by: deploy-fly\nvalid_until: 2024-06-01\n",
    ),
    "deploy-fly": ("The app is deployed on Fly.io", "created: 2024-06-01\nsupersedes: [deploy-heroku]\n"),
    "database-postgres": (
        "The main database is Postgres 14 on a managed host",
        "created: 2024-01-05\narchived: 2024-09-01\narchived_reason: moved to sqlite\n",
    ),
    "staging-host": (
        "The staging server is staging1.example.org",
        "created: 2024-01-05\narchived: 2024-03-01\narchived_reason: gone\n",
    ),
}


def write_store(root: Path, memories: dict[str, tuple[str, str]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = ["# Memory index", ""]
    for slug, (text, extra) in memories.items():
        head = f"---\nname: {slug}\ndescription: {text}\ntype: project\n{extra}---\n"
        (root / f"{slug}.md").write_text(f"{head}\n{text}.\n", encoding="utf-8")
        lines.append(f"- [{slug}]({slug}.md) — {text}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def kura(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store), "recall", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def recalled(store: Path, question: str, *args: str) -> dict[str, Any]:
    done = kura(store, question, "--json", "--no-model", *args)
    assert done.returncode in (0, 2), done.stderr
    return json.loads(done.stdout)


def slugs(found: dict[str, Any]) -> list[str]:
    return [p["slug"] for p in found["picked"]]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("as-of") / "store", MEMORIES)


def test_a_fact_superseded_later_is_answered_as_current_then(store: Path) -> None:
    then = recalled(store, "where is the app deployed", "--at", "2024-03-01")
    assert then["at"] == "2024-03-01"
    assert slugs(then)[0] == "deploy-heroku" and "deploy-fly" not in slugs(then)
    heroku = then["picked"][0]
    assert heroku["asserted"] is True and heroku["status"] == "asserted"
    assert "on record" not in then["context"]


def test_a_fact_replaced_on_or_before_the_day_is_not_answered(store: Path) -> None:
    for day in ("2024-06-01", "2024-07-15"):
        then = recalled(store, "where is the app deployed", "--at", day)
        assert "deploy-heroku" not in slugs(then) and slugs(then)[0] == "deploy-fly"
    now = recalled(store, "where is the app deployed")
    assert now["at"] is None and slugs(now)[:2] == ["deploy-fly", "deploy-heroku"]


def test_archived_memories_count_while_they_were_live(store: Path) -> None:
    question = "which database do we use"
    assert "database-postgres" not in slugs(recalled(store, question))
    then = recalled(store, question, "--at", "2024-05-01")
    assert slugs(then)[0] == "database-postgres" and then["picked"][0]["asserted"] is True
    after = recalled(store, "what is the staging server", "--at", "2024-05-01")
    assert "staging-host" not in slugs(after)
    before = recalled(store, "what is the staging server", "--at", "2024-02-01")
    assert slugs(before)[0] == "staging-host"


def test_nothing_created_after_the_day_is_answered(store: Path) -> None:
    early = recalled(store, "where is the app deployed", "--at", "2023-12-01")
    assert early["picked"] == []


def test_the_text_answer_says_it_is_as_of_the_day(store: Path) -> None:
    done = kura(store, "where is the app deployed", "--no-model", "--at", "2024-03-01")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recall as of 2024-03-01 (") and "deploy-heroku" in done.stdout


@pytest.mark.parametrize("day", ["2024-13-01", "last june", "20240301", "2999-01-01"])
def test_a_bad_date_is_refused(store: Path, day: str) -> None:
    done = kura(store, "where is the app deployed", "--at", day)
    assert done.returncode == 1 and done.stdout == ""
    assert "YYYY-MM-DD" in done.stderr or "after today" in done.stderr


def git(root: Path, *args: str, when: str = "") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip
    if when:
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_without_a_created_date_git_first_commit_says_when_a_memory_was_born(tmp_path: Path) -> None:
    memories = {
        "cache-redis": ("The cache runs on Redis 7", ""),
        "cache-valkey": ("The session cache runs on Valkey, added later", ""),
    }
    root = write_store(tmp_path / "store", memories)
    git(root, "init", "-q")
    git(root, "add", "MEMORY.md", "cache-redis.md")
    git(root, "commit", "-q", "-m", "redis", when="2024-01-10T12:00:00+00:00")
    git(root, "add", "cache-valkey.md")
    git(root, "commit", "-q", "-m", "valkey", when="2024-08-01T12:00:00+00:00")
    question = "what does the cache run on"
    assert set(slugs(recalled(root, question))) == {"cache-redis", "cache-valkey"}
    then = recalled(root, question, "--at", "2024-05-01")
    assert slugs(then) == ["cache-redis"]
    assert "cache-valkey" in slugs(recalled(root, question, "--at", "2024-08-01"))
