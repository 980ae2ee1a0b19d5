"""The search index as derived state: cheap when nothing changed, patched per file, rebuilt
when its format changes, shared between processes through one saved matrix."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SAMPLE, Cli, write_memory

from kura.files import memory_file
from kura.recall import index_build
from kura.recall.embed import Embedder, Unavailable, load_embedder
from kura.recall.search import SCHEMA_VERSION, SearchIndex
from kura.store import catalog
from kura.store.store import Store


@pytest.fixture
def sample(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Store:
    """A private copy of the sample store; its first update embeds nothing (``sample_copy``)."""
    return Store(sample_copy(tmp_path / "store"))


@pytest.fixture
def bare_sample(tmp_path: Path) -> Store:
    """A copy of the sample store with no state folder at all."""
    root = tmp_path / "store"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
    return Store(root)


def test_an_unchanged_store_is_not_read_again(sample: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    index = SearchIndex(sample)
    assert index.update() == 40
    monkeypatch.setattr(catalog, "entries", lambda store: pytest.fail("read the catalog"))
    assert index.update() == 0
    monkeypatch.undo()
    write_memory(sample.root, "tomasz-backend-oncall", "user", "Tomasz now owns the billing pager")
    assert index.update() == 1


def test_refresh_patches_one_memory_without_a_full_scan(
    sample: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = SearchIndex(sample)
    index.update()
    before = index.search("who looks after the aquarium in the office", k=1).hits[0]
    assert before.slug != "aiko-frontend-design"
    monkeypatch.setattr(catalog, "entries", lambda store: pytest.fail("read the catalog"))
    write_memory(sample.root, "aiko-frontend-design", "user", "Aiko feeds the office fish tank every morning")
    write_memory(sample.root, "zz-plants", "user", "Sam waters the office plants on Mondays")
    (sample.root / "deploy-commands.md").unlink()
    assert index.refresh(["aiko-frontend-design", "zz-plants", "deploy-commands", "../escape"]) == 4
    assert (
        index.search("who looks after the aquarium in the office", k=1).hits[0].slug == "aiko-frontend-design"
    )
    assert index.search("who waters the office plants", k=1).hits[0].slug == "zz-plants"
    assert "deploy-commands" not in {h.slug for h in index.search("how do I deploy to prod", k=40).hits}
    assert index.refresh(["aiko-frontend-design"]) == 0  # same bytes: nothing to do


def test_a_second_process_reads_the_saved_matrix_and_sees_changes(sample: Store) -> None:
    first = SearchIndex(sample)
    first.update()
    first.search("deploys on friday")  # builds and saves the matrix
    write_memory(sample.root, "zz-bees", "project", "the rooftop beehive is inspected each spring")
    first.refresh(["zz-bees"])
    second = SearchIndex(sample)  # no update: what is saved must already include the refresh
    assert second.search("honey and hives on the roof", k=1).hits[0].slug == "zz-bees"
    third = SearchIndex(sample)
    assert third.search("honey and hives on the roof", k=1).hits[0].slug == "zz-bees"


def test_an_index_from_an_older_kura_is_rebuilt_keeping_vectors(bare_sample: Store) -> None:
    sample = bare_sample
    state = sample.root / ".kura"
    state.mkdir()
    db = sqlite3.connect(state / "search.db")
    db.executescript(
        "CREATE TABLE docs (slug TEXT PRIMARY KEY, sha TEXT NOT NULL);"
        "CREATE TABLE vectors (sha TEXT NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (sha, model));"
        "INSERT INTO docs VALUES ('ghost', 'x'); INSERT INTO vectors VALUES ('keep-me', 'm', x'00');"
    )
    db.commit()
    db.close()
    index = SearchIndex(sample)
    assert index.update() == 40
    version = index.db.execute("PRAGMA user_version").fetchone()[0]
    kept = index.db.execute("SELECT count(*) FROM vectors WHERE sha = 'keep-me'").fetchone()[0]
    assert (version, kept) == (SCHEMA_VERSION, 1)
    assert "ghost" not in {h.slug for h in index.search("ghost", k=50).hits}


def test_the_quick_embedder_agrees_with_the_full_one() -> None:
    quick, full = load_embedder(quick=True), load_embedder()
    assert isinstance(quick, Embedder) and isinstance(full, Embedder) and quick is not full
    texts = ["the archive lives on the slow disk", "Mika reviews every pull request"]
    assert np.abs(quick.embed(texts) - full.embed(texts)).max() < 1e-3
    assert quick.full() is full and full.full() is full


def test_kura_index_builds_then_has_nothing_to_do(cli: Cli, sample: Store) -> None:
    first = cli("-s", str(sample.root), "index", "--json")
    assert first.code == 0, first.err
    data = json.loads(first.out)
    assert (data["changed"], data["memories"], data["vectors"], data["how"]) == (40, 40, 40, "embedded")
    again = cli("-s", str(sample.root), "index")
    assert again.code == 2, again
    assert (
        again.out
        == f"unchanged: {sample.root.name}: the index is already current (40 in the index, 40 with vectors, search embedded)\n"
    )
    said = kura("-s", str(sample.root), "index")  # the same from a real process
    assert (said.returncode, said.stdout) == (2, again.out), said
    rebuilt = cli("-s", str(sample.root), "index", "--rebuild")
    assert rebuilt.code == 0 and rebuilt.out.startswith(f"{sample.root.name}: 40 memories indexed")


def kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, check=False)


def test_the_fast_recall_path_answers_like_the_full_cli(sample: Store) -> None:
    root = str(sample.root)
    fast = kura("-s", root, "recall", "--top=1", "can I ship on Friday evening", "--hops", "0", "--json")
    slow = kura(
        "-s", root, "recall", "can I ship on Friday evening", "--top", "1", "--hops", "0", "--json", "-x"
    )
    assert slow.returncode == 1 and "No such option: -x" in slow.stderr  # odd input goes to typer
    typer_path = kura(
        "-s", root, "recall", "can I ship on Friday evening", "--top", "1", "--hops", "0", "--json"
    )
    for result in (fast, typer_path):
        assert result.returncode == 0, result.stderr
    strip = {"elapsed"}
    a, b = json.loads(fast.stdout), json.loads(typer_path.stdout)
    assert {k: v for k, v in a.items() if k not in strip} == {k: v for k, v in b.items() if k not in strip}
    assert a["picked"][0]["slug"] == "no-friday-afternoon-deploys"
    nothing = kura("-s", root, "recall", "what is our cryptocurrency policy")
    assert nothing.returncode == 2 and nothing.stdout.startswith("recall (embedded): nothing bears on this")
    assert kura("-s", root, "recall", "--top", "many", "x").returncode == 1  # typer explains
    assert kura("-s", str(sample.root / "nope"), "recall", "x").returncode == 1


def test_an_update_of_a_few_files_patches_the_saved_matrix(sample: Store) -> None:
    from kura.recall import vectors
    from kura.recall.embed import DIM

    first = SearchIndex(sample)
    first.update()
    first.search("deploys")  # the matrix is saved
    write_memory(sample.root, "zz-kiln", "project", "the pottery kiln is fired on the first Sunday")
    (sample.root / "deploy-commands.md").unlink()
    assert first.update() == 2
    model = first.embedder.model_id  # type: ignore[union-attr]
    kept = vectors.saved(first.db, model, DIM)
    assert kept is not None and "zz-kiln" in kept.slugs and "deploy-commands" not in kept.slugs
    assert len(kept.slugs) == 40
    second = SearchIndex(sample)
    assert second.search("when is the ceramics oven used", k=1).hits[0].slug == "zz-kiln"


def test_the_matrix_is_made_from_the_vectors_table_without_holding_it_twice(tmp_path: Path) -> None:
    import tracemalloc

    from kura.recall import vectors

    db = sqlite3.connect(tmp_path / "v.db")
    db.executescript(
        "CREATE TABLE docs(slug TEXT, fts INTEGER, sha TEXT); CREATE TABLE kv(key TEXT PRIMARY KEY, value);"
        "CREATE TABLE vectors(sha TEXT, model TEXT, vec BLOB, PRIMARY KEY (sha, model));"
    )
    rows = np.random.default_rng(3).standard_normal((2000, 384)).astype(np.float16)
    with db:
        db.executemany(
            "INSERT INTO docs VALUES (?, ?, ?)", [(f"m{i:04d}", i + 1, f"s{i}") for i in range(2000)]
        )
        db.executemany(
            "INSERT INTO vectors VALUES (?, 'm', ?)", [(f"s{i}", row.tobytes()) for i, row in enumerate(rows)]
        )
        db.execute("INSERT INTO vectors VALUES ('s7', 'other', x'00')")  # another model's row: not read
    tracemalloc.start()
    try:
        matrix = vectors.load(db, "m", 384)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.array_equal(matrix.half, rows) and matrix.slugs[:2] == ["m0000", "m0001"]
    assert list(matrix.fts[:3]) == [1, 2, 3]
    again = vectors.saved(db, "m", 384)
    assert again is not None and np.array_equal(again.half, rows)
    assert peak < 2 * rows.nbytes  # the matrix and its slugs; no list of blobs, no joined copy
    with db:
        db.execute("DELETE FROM vectors")
        db.execute("INSERT INTO kv VALUES ('generation', 1)")  # the saved matrix is out of date
    empty = vectors.load(db, "m", 384)
    assert empty.half.shape == (0, 384) and empty.slugs == []
    assert vectors.saved(db, "m", 384) is not None


def _distill_bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "map_scale", Path(__file__).resolve().parents[2] / "bench" / "map_scale.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _mixed_store(root: Path) -> Store:
    """distill-kura's shape (flat frontmatter, CJK), a few hand-broken files and one a link."""
    _distill_bench().generate_distill(root, 150)
    (root / "broken-yaml.md").write_text("---\nname: [unclosed\ndescription: x: y: z\n---\n\n本文 body\n")
    (root / "no-front.md").write_text("just a body, 日本語 and no frontmatter\n")
    (root / "unclosed.md").write_text("---\nname: a\ndescription: never closed\n\nbody\n")
    (root / "binary.md").write_bytes(b"---\nname: b\xff\xfe\ndescription: bad bytes\n---\n\n\x00body\n")
    (root / "linked.md").symlink_to(root / "m00003.md")
    return Store(root)


def _fts_rows(index: SearchIndex) -> list[tuple[Any, ...]]:
    return index.db.execute(
        "SELECT docs.slug, docs.sha, docs_fts.name, docs_fts.description, docs_fts.body FROM docs "
        "JOIN docs_fts ON docs_fts.rowid = docs.fts ORDER BY docs.slug"
    ).fetchall()


@pytest.mark.parametrize("catalog_first", [False, True])
def test_the_first_update_parses_each_memory_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, catalog_first: bool
) -> None:
    """Issue 33: the first recall on a big store parsed every file twice (the catalog's scan,
    then ``show`` per memory). One parse per file, whether or not the catalog was current."""
    store = _mixed_store(tmp_path / "store")
    if catalog_first:
        catalog.entries(store)  # a weave ran before: the catalog is current, the index empty
    parsed: list[str] = []
    real = memory_file.from_bytes

    def counted(data: bytes, label: str) -> Any:
        parsed.append(label)
        return real(data, label)

    monkeypatch.setattr(memory_file, "from_bytes", counted)
    monkeypatch.setattr(catalog, "from_bytes", counted)
    index = SearchIndex(store, embedder=Unavailable("no model in this test"))  # type: ignore[arg-type]
    assert index.update(budget=None) == 155
    assert len(parsed) == len(set(parsed)) == 155  # each file once; before: 310 on a cold catalog


def test_the_index_holds_what_show_reads_for_every_kind_of_file(tmp_path: Path) -> None:
    """What the fast path indexes (the FTS rows, hence what is embedded) is what ``show``
    reads, file by file: flat frontmatter, CJK text, broken files and a link."""
    store = _mixed_store(tmp_path / "store")
    index = SearchIndex(store, embedder=Unavailable("no model in this test"))  # type: ignore[arg-type]
    index.update(budget=None)
    rows = _fts_rows(index)
    expected = []
    for slug, sha, *_ in rows:
        data, memory = store.read(slug)
        assert hashlib.sha256(data).hexdigest() == sha
        expected.append((slug, sha, memory.name, memory.description, memory.note.body))
    assert rows == expected
    assert len(rows) == 155
    shas = [row[1] for row in rows]
    assert index_build.texts(index.db, shas) == [
        (sha, index_build.text_of(name, description, body)[: index_build.TEXT_CAP])
        for _, sha, name, description, body in expected
    ]
