"""An OpenAI-compatible /embeddings endpoint as recall's embedder (a scripted server on loopback)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from conftest import Cli, ModelServer, write_memory

from kura.config import ModelConfig, parse_config
from kura.recall.recall import recall
from kura.recall.remote_embed import EmbedFailed, RemoteEmbedder
from kura.recall.search import SearchIndex
from kura.store.store import Store

TOPICS = (("fern", "plant", "garden"), ("disk", "archive", "storage"), ("pager", "call", "incident"))


def topical(text: str) -> list[float]:
    """A toy embedding: one dimension per topic, counting its words (plus a constant)."""
    lower = text.lower()
    return [float(sum(lower.count(word) for word in words)) for words in TOPICS] + [0.1]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "ferns", "user", "Ingrid looks after the ferns and every plant in the garden")
    write_memory(root, "archive", "project", "the archive lives on the slow disk; storage is cheap there")
    write_memory(root, "oncall", "user", "Tomasz carries the pager; incident call rota is weekly")
    return Store(root)


def endpoint(server: ModelServer, **options: object) -> ModelConfig:
    return ModelConfig(role="embedder", url=server.url, model="toy", **options)  # type: ignore[arg-type]


def test_recall_uses_the_endpoint_and_keeps_its_vectors_apart(
    store: Store, model_server: ModelServer
) -> None:
    model_server.embed = topical
    embedder = RemoteEmbedder(endpoint(model_server))
    found = recall(store, "who waters the garden plant pots", top=1, hops=0, embedder=embedder)
    assert (found.how, [p.slug for p in found.picked]) == ("embedded", ["ferns"])
    index = SearchIndex(store, embedder=embedder)
    models = {row[0] for row in index.db.execute("SELECT DISTINCT model FROM vectors")}
    assert models == {
        "api:toy/t3",
        "api:toy/t3+headline",
        "api:toy/t3+sentences",
    }  # never mixed with the built-in's
    bodies = [r for r in model_server.requests if isinstance(r.get("input"), list)]
    assert bodies and all(body["model"] == "toy" for body in bodies)


def test_rows_are_put_back_in_input_order(model_server: ModelServer) -> None:
    model_server.embed = topical  # the scripted server answers rows in reverse order
    vectors = RemoteEmbedder(endpoint(model_server)).embed(["ferns", "disk archive", "pager"])
    assert [int(row.argmax()) for row in vectors] == [0, 1, 2]
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-5


def test_a_wrong_shaped_answer_is_a_failure_not_a_vector(model_server: ModelServer) -> None:
    model_server.embed = lambda text: [] if "bad" in text else [1.0, 2.0]
    with pytest.raises(EmbedFailed, match="answered 2 vectors"):
        RemoteEmbedder(endpoint(model_server)).embed(["good", "bad"])


def test_an_endpoint_that_is_down_degrades_to_lexical_then_heals(
    store: Store, model_server: ModelServer
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = RemoteEmbedder(
        ModelConfig(role="embedder", url=f"http://127.0.0.1:{port}/v1", model="toy", timeout=2)
    )
    found = recall(store, "ferns", top=1, hops=0, embedder=down)
    assert (found.how, found.degraded) == ("lexical", True) and f":{port}" in found.reason
    assert [p.slug for p in found.picked] == ["ferns"]  # words still answer
    model_server.embed = topical
    healed = recall(
        store,
        "who waters the garden plant pots",
        top=1,
        hops=0,
        embedder=RemoteEmbedder(endpoint(model_server)),
    )
    assert (healed.how, [p.slug for p in healed.picked]) == ("embedded", ["ferns"])


def test_config_embedder_inherits_nothing(tmp_path: Path) -> None:
    config = parse_config(
        {
            "stores": {"main": {"path": str(tmp_path)}},
            "models": {"embedder": {"url": "http://127.0.0.1:9/v1", "model": "e5"}},
        }
    )
    roles = config.roles_for(config.stores["main"])
    assert roles["thinker"] is None and roles["scribe"] is None
    assert roles["embedder"] is not None and roles["embedder"].model == "e5"


def test_cli_recall_and_index_use_the_configured_endpoint(
    cli: Cli, store: Store, model_server: ModelServer, tmp_path: Path
) -> None:
    model_server.embed = topical
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.s]\npath = "{store.root}"\n\n[models.embedder]\nurl = "{model_server.url}"\nmodel = "toy"\n'
    )
    built = cli("-c", str(config), "index", "--json")
    assert built.code == 0 and json.loads(built.out)["vectors"] == 3
    found = cli("-c", str(config), "recall", "the slow storage disk", "--json", "--top", "1")
    assert found.code == 0 and json.loads(found.out)["picked"][0]["slug"] == "archive"
