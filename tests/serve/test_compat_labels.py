"""What distill-kura's clients read: ``how: words`` for an answer from word overlap alone
(kura's own ``lexical`` beside it as ``method``), over a real server on 127.0.0.1 and a real
``kura mcp`` process; and ``GET /stores`` naming the model of each role, or "none"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import ModelServer, uvicorn_app, write_memory
from test_mcp import client

from kura.config import load_config
from kura.serve.compat import BUILT_IN
from kura.serve.http import create_app
from kura.serve.pool import StorePool

QUESTION = "when are releases tagged"


def setup(base: Path, embedder_url: str) -> Path:
    for name in ("team", "plain"):
        root = base / name
        write_memory(root, "tags", "project", "releases are tagged pre-release first, then final")
        write_memory(root, "mika", "user", "Mika reviews everything before it ships")
        (root / "MEMORY.md").write_text(
            "# Memory\n\n- [tags](tags.md) — releases are tagged pre-release first, then final\n"
            "- [mika](mika.md) — Mika reviews everything before it ships\n"
        )
    (base / "home").mkdir(exist_ok=True)
    config = base / "kura.toml"
    config.write_text(
        '[stores.team]\npath = "team"\n\n[stores.plain]\npath = "plain"\nmodel_profile = "bare"\n\n'
        f'[models.thinker]\nurl = "http://127.0.0.1:9/v1"\nmodel = "small-local"\n\n'
        f'[models.scribe]\nurl = "http://127.0.0.1:9/v1"\nmodel = "writer"\n\n'
        f'[models.embedder]\nurl = "{embedder_url}"\nmodel = "emb-small"\ntimeout = 5\n\n'
        f'[model_profiles.bare.embedder]\nurl = "{embedder_url}"\nmodel = "emb-small"\ntimeout = 5\n'
    )
    return config


@pytest.fixture
def served(tmp_path: Path, model_server: ModelServer) -> Iterator[tuple[httpx.Client, ModelServer]]:
    service = StorePool(load_config(str(setup(tmp_path, model_server.url))))
    try:
        with uvicorn_app(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as session:
            yield session, model_server
    finally:
        service.close()


def test_get_stores_names_the_model_of_each_role_or_none(
    served: tuple[httpx.Client, ModelServer],
) -> None:
    http, _ = served
    rows = {row["name"]: row for row in http.get("/stores").json()}
    assert rows["team"]["models"] == {
        "thinker": "small-local", "brain": "small-local", "scribe": "writer", "embedder": "emb-small",
    }  # fmt: skip
    assert rows["plain"]["models"] == {
        "thinker": "none",
        "brain": "none",
        "scribe": "none",
        "embedder": "emb-small",
    }


def test_a_word_overlap_answer_says_words_with_lexical_beside_it(
    served: tuple[httpx.Client, ModelServer],
) -> None:
    http, embedder = served
    body = http.post("/recall", json={"question": QUESTION, "store": "plain"}).json()
    assert (body["how"], body["method"]) == ("embedded", "embedded")
    embedder.status = 500  # the /embeddings endpoint goes down: the words alone answer
    body = http.post("/recall", json={"question": "when is a release tagged final", "store": "plain"}).json()
    assert (body["how"], body["method"], body["degraded"]) == ("words", "lexical", True)
    assert [p["slug"] for p in body["picked"]][:1] == ["tags"]


def test_the_built_in_embedder_is_named_when_none_is_configured(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    service = StorePool(load_config(str(_plain(tmp_path))))
    try:
        assert service.stores()[0]["models"] == {
            "thinker": "none", "brain": "none", "scribe": "none", "embedder": BUILT_IN,
        }  # fmt: skip
    finally:
        service.close()


def test_a_model_folder_is_named_by_its_folder(tmp_path: Path) -> None:
    """``[embedder] path = DIR``: the embedder role is the folder, never an empty name."""
    (tmp_path / "s").mkdir()
    (tmp_path / "models" / "e5-small").mkdir(parents=True)
    config = _plain(tmp_path)
    config.write_text(config.read_text() + '\n[embedder]\npath = "models/e5-small"\n')
    service = StorePool(load_config(str(config)))
    try:
        assert service.stores()[0]["models"]["embedder"] == "e5-small (model folder)"
    finally:
        service.close()


def _plain(base: Path) -> Path:
    config = base / "kura.toml"
    config.write_text('[stores.s]\npath = "s"\n')
    return config


def test_mcp_recall_says_words_and_lexical(tmp_path: Path) -> None:
    base = tmp_path / "mcp"
    base.mkdir()
    config = setup(base, "http://127.0.0.1:9/v1")  # nothing listens there: the words alone answer
    with client(base, "mcp", KURA_CONFIG=str(config)) as mcp:
        text = mcp.ok("kura_recall", question=QUESTION, store="plain", hops=0)
    head = text.partition("\n\n")[0]
    assert head.startswith("recalled from store 'plain' (words, lexical — degraded: "), head
