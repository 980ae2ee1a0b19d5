"""A big store answers at once while its index is built, and a killed build resumes.

Real processes and a real SIGKILL: the build commits its vectors chunk by chunk, so what a
kill loses is the chunk in hand, and the next build embeds only memories with no vector.
Vectors come from the scripted ``/embeddings`` server (counting what it is asked is exact)
or from the built-in model with ``$KURA_INDEX_BUDGET`` set to 0 (nothing embedded before
answering), which keeps every test fast.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ModelServer

from kura.config import load_config
from kura.recall.embed import MODEL_ID
from kura.recall.index_build import text_of
from kura.recall.recall import recall
from kura.recall.remote_embed import TEXT
from kura.recall.search import SearchIndex, remote_embedder
from kura.serve.pool import StorePool
from kura.store.store import Store, init_store

WORDS = "alpha bravo cobalt delta ember fjord garnet harbor indigo juniper kelp lumen".split()


def generated(root: Path, n: int) -> Store:
    """``n`` short memories of random words, and one about the tape backup."""
    store, _ = init_store(root, name=root.name)
    rng = random.Random(5)
    lines = []
    for i in range(n):
        slug = "tape-backup" if i == n // 2 else f"m{i:04d}"
        text = (
            "the nightly backup is written to tape in the basement vault"
            if slug == "tape-backup"
            else " ".join(rng.choice(WORDS) for _ in range(8))
        )
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug}\ndescription: {text}\ntype: project\n---\n\n{text}.\n"
        )
        lines.append(f"- [{slug}]({slug}.md) — {text}")
    (root / "MEMORY.md").write_text("# Memory index\n\n" + "\n".join(lines) + "\n")
    return store


def kura(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args], capture_output=True, text=True, env={**os.environ, **(env or {})},
        timeout=120,
    )  # fmt: skip


def vector_count(root: Path, model: str) -> int:
    db = sqlite3.connect(root / ".kura" / "search.db", timeout=30)
    try:
        return int(db.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0])
    except sqlite3.OperationalError:  # the build has not made its tables yet
        return 0
    finally:
        db.close()


def test_a_recall_on_a_store_with_no_vectors_answers_and_says_it_is_partial(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    generated(root, 300)
    quick = {"KURA_INDEX_BUDGET": "0", "KURA_INDEX_BACKGROUND": "0"}  # no build: still 0 at the second
    done = kura("-s", str(root), "recall", "where is the backup tape kept", "--no-model", "--json", env=quick)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["how"], found["degraded"], found["partial"]) == (
        "embedded", True, {"indexed": 0, "memories": 300}
    )  # fmt: skip
    assert found["picked"][0]["slug"] == "tape-backup"
    assert "0 of 300 memories have vectors" in found["reason"] and "kura index" in found["reason"]
    text = kura("-s", str(root), "recall", "where is the backup tape kept", "--no-model", env=quick)
    assert text.stdout.startswith("recall (embedded (partial: 0 of 300 indexed) — ⚠ degraded: ")


def test_the_default_budget_builds_a_small_store_whole_before_answering(tmp_path: Path) -> None:
    root = tmp_path / "small"
    root.mkdir()
    store = generated(root, 12)
    found = recall(store, "where is the backup tape kept", hops=0)
    assert (found.how, found.degraded, found.partial) == ("embedded", False, None)
    assert found.picked[0].slug == "tape-backup"
    assert vector_count(root, MODEL_ID) == 12


def test_a_small_store_is_embedded_whole_only_as_long_as_its_budget_allows(tmp_path: Path) -> None:
    """A small store is embedded whole before the first answer, whatever the time, unless the
    budget caps that (a recall that leaves the rest to a background build: 500 long memories
    took 11 s of CPU); then the question is answered from what there is, partial."""
    from kura.recall.index_build import Budget

    capped, whole = tmp_path / "capped", tmp_path / "whole"
    for root in (capped, whole):
        root.mkdir()
        generated(root, 60)
    index = SearchIndex(Store(capped))
    try:
        index.update(budget=Budget(1.0, whole_for=0.0))
        assert (index.coverage().indexed, index.coverage().memories) == (0, 60)
    finally:
        index.close()
    index = SearchIndex(Store(whole))
    try:
        index.update(budget=Budget(1.0))
        assert (index.coverage().indexed, index.coverage().memories) == (60, 60)
    finally:
        index.close()


def test_the_budget_comes_from_the_environment() -> None:
    from kura.recall.index_build import Budget, budget_from

    default = Budget(3.0)
    assert budget_from({}, default) == default
    assert budget_from({"KURA_INDEX_BUDGET": "0"}, default) == Budget(0.0, 0)
    assert budget_from({"KURA_INDEX_BUDGET": "2.5"}, default) == Budget(2.5, 0)
    assert budget_from({"KURA_INDEX_BUDGET": "soon"}, default) == default
    assert budget_from({"KURA_INDEX_BUDGET": "nan"}, default) == default


def endpoint_config(tmp_path: Path, root: Path, server: ModelServer) -> Path:
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.s]\npath = "{root}"\n\n[models.embedder]\nurl = "{server.url}"\nmodel = "toy"\n'
    )
    return config


def test_a_killed_build_resumes_without_embedding_finished_rows_again(
    tmp_path: Path, model_server: ModelServer
) -> None:
    root = tmp_path / "big"
    root.mkdir()
    generated(root, 300)
    config = endpoint_config(tmp_path, root, model_server)
    asked: list[str] = []
    gate = threading.Event()

    def embed(text: str) -> list[float]:
        asked.append(text)
        if len(asked) > 40:  # the first chunk is answered; the build then hangs until killed
            gate.wait(180)  # long enough for a loaded machine to take the first chunk's commit
        return [float(len(text)), 1.0, float(text.count("a"))]

    model_server.embed = embed
    build = subprocess.Popen(
        [sys.executable, "-m", "kura", "--config", str(config), "index"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 150
        while len(asked) <= 40 and build.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert build.poll() is None, "the build finished before it could be killed"
        kept = vector_count(root, f"api:toy/{TEXT}")
        while not kept and time.monotonic() < deadline:
            time.sleep(0.02)
            kept = vector_count(root, f"api:toy/{TEXT}")
        os.kill(build.pid, signal.SIGKILL)
        build.wait(10)
    finally:
        gate.set()
        if build.poll() is None:
            build.kill()
    kept = vector_count(root, f"api:toy/{TEXT}")
    assert 0 < kept < 300
    before = len(asked)
    resumed = kura("--config", str(config), "index", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert len(asked) - before == 300 - kept  # every memory with a vector was left alone
    assert vector_count(root, f"api:toy/{TEXT}") == 300
    assert json.loads(resumed.stdout)["vectors"] == 300


def test_a_server_answers_at_once_and_builds_in_the_background(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "big"
    root.mkdir()
    generated(root, 300)
    gate = threading.Event()

    def embed(text: str) -> list[float]:
        gate.wait(30)  # nothing is embedded until the first answer is in
        return [float("tape" in text), 1.0, float(len(text))]

    model_server.embed = embed
    monkeypatch.setenv("KURA_INDEX_BUDGET", "0")
    config = load_config(str(endpoint_config(tmp_path, root, model_server)))
    pool = StorePool(config)
    try:
        first = pool.recall("where is the backup tape kept", hops=0)
        assert (first["degraded"], first["partial"]) == (True, {"indexed": 0, "memories": 300})
        gate.set()
        deadline = time.monotonic() + 60
        later = first
        while later["partial"] is not None and time.monotonic() < deadline:
            time.sleep(0.05)
            later = pool.recall("where is the backup tape kept", hops=0)
        assert (later["how"], later["degraded"], later["partial"]) == ("embedded", False, None)
    finally:
        gate.set()
        pool.close()


def test_an_index_updated_by_words_only_is_finished_by_fill(
    tmp_path: Path, model_server: ModelServer
) -> None:
    root = tmp_path / "big"
    root.mkdir()
    store = generated(root, 100)  # more than a question heals itself (64)
    model_server.embed = lambda text: [float(len(text)), 1.0]
    config = load_config(str(endpoint_config(tmp_path, root, model_server)))
    index = SearchIndex(store, embedder=remote_embedder(config.embedder_for(config.store_config("s"))))
    try:
        from kura.recall.index_build import Budget

        assert index.update(budget=Budget(0.0, 0)) == 100
        assert index.search("tape backup").partial is not None
        assert index.fill() == 100
        assert index.search("tape backup").partial is None
        assert index.fill() == 0
    finally:
        index.close()


def test_a_body_that_repeats_its_description_embeds_it_once_without_markdown_marks() -> None:
    said = "Mika deploys  staging on port 8005"
    body = "Mika deploys staging on port 8005.\n\n**Why:** it matters.\n\nRelated: [[m00006]], `ruff`\n"
    assert text_of("Memory 5", said, body) == (
        "Memory 5. Mika deploys staging on port 8005.\n\nWhy: it matters.\n\nRelated: m00006, ruff\n"
    )  # fmt: skip
    other = "The oven is serviced every February.\n"
    assert text_of("Oven", "Bakeline services the deck oven", other) == (
        f"Oven. Bakeline services the deck oven. {other}"
    )  # fmt: skip


@pytest.mark.parametrize("label", ["Why", "決定", "Gotcha", "Rule of thumb"])
def test_a_description_the_body_says_after_a_label_is_embedded_once(label: str) -> None:
    said = "レビュー夜間は timeout hetzner で必ずする (KR-199); redis の本番バックアップは週次"
    body = f"{said}。\n\n**Why:** 証明書速度は backup staging で対応する.\n"
    assert text_of("m00199-restore", f"{label}: {said}", body) == (
        f"m00199-restore. {said}。\n\nWhy: 証明書速度は backup staging で対応する.\n"
    )
    assert text_of("m1", f"{label}: the staging host moved", body).startswith(
        f"m1. {label}: the staging host moved. "
    )  # what the body does not say is kept, label and all


def test_vectors_an_older_kura_made_are_made_again_and_dropped(tmp_path: Path) -> None:
    root = tmp_path / "small"
    root.mkdir()
    store = generated(root, 12)
    recall(store, "where is the backup tape kept", hops=0)
    old = "all-MiniLM-L6-v2-int8"  # what kura saved before it embedded a repeated description once
    db = sqlite3.connect(root / ".kura" / "search.db")
    with db:
        db.execute("DELETE FROM vectors WHERE model != ?", (MODEL_ID,))  # it made no headlines
        db.execute("UPDATE vectors SET model = ?", (old,))
        db.execute("UPDATE kv SET value = replace(value, ?, ?) WHERE key IN ('model', 'filled', 'matrix_model')",
                   (MODEL_ID, old))  # fmt: skip
    db.close()
    found = recall(store, "where is the backup tape kept", hops=0)
    assert (found.how, found.degraded, found.picked[0].slug) == ("embedded", False, "tape-backup")
    assert (vector_count(root, MODEL_ID), vector_count(root, old)) == (12, 0)
