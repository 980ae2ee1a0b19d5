"""A question in the person's language finds their memory by its words (issue 31): over a
real store and a real SQLite FTS5 index, words only (no embedder), then through a real
``kura recall`` process with the built-in embedder, where the words are the fused score's
lexical share. Chinese and Japanese have no spaces and Korean glues particles to its
words, so these fail when a run of letters is one token."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import make_store

from kura.recall.embed import Embedder, Unavailable, load_embedder
from kura.recall.search import SearchIndex, query_words
from kura.store.store import Store

# (language, the store's memories as (slug, description), a question, the memory it asks about)
SETS = [
    ("ja", [
        ("staging-host", "ステージング環境は kobo-8 で動いている"),
        ("backup-time", "本番データベースのバックアップは毎晩二時に取る"),
        ("deploy-day", "デプロイは火曜日の午後だけに行う"),
        ("coffee", "事務所のコーヒー豆は近所の焙煎所で買う"),
    ], "ステージングはどのサーバーで動いていますか？", "staging-host"),
    ("ja", [
        ("staging-host", "ステージング環境は kobo-8 で動いている"),
        ("backup-time", "本番データベースのバックアップは毎晩二時に取る"),
        ("deploy-day", "デプロイは火曜日の午後だけに行う"),
    ], "バックアップは何時？", "backup-time"),
    ("zh", [
        ("staging-host", "预发布环境跑在 kobo-8 上"),
        ("release-branch", "发布分支叫 stable-9，每周二合并"),
        ("backup-time", "生产数据库每天凌晨两点备份"),
        ("lunch", "午饭一般在楼下的面馆吃"),
    ], "数据库什么时候备份？", "backup-time"),
    ("ko", [
        ("staging-host", "스테이징 서버는 kobo-8에서 돌아간다"),
        ("deploy-day", "배포는 화요일에만 한다"),
        ("backup-time", "운영 데이터베이스는 매일 새벽 두 시에 백업한다"),
    ], "데이터베이스 백업은 언제 하나요?", "backup-time"),
    ("es", [
        ("deploy-day", "El despliegue se hace los martes por la tarde"),
        ("staging-host", "La base de datos de pruebas está en kobo-8"),
        ("backup-time", "La copia de seguridad de producción se hace cada noche a las dos"),
    ], "¿Dónde está la base de datos de pruebas?", "staging-host"),
    ("de", [
        ("deploy-day", "Das Deployment läuft immer dienstags am Nachmittag"),
        ("staging-host", "Die Staging-Datenbank liegt auf kobo-8"),
        ("backup-time", "Die Produktionsdatenbank wird jede Nacht um zwei Uhr gesichert"),
    ], "Wann wird die Produktionsdatenbank gesichert?", "backup-time"),
]  # fmt: skip
IDS = [f"{lang}-{n}" for n, (lang, *_) in enumerate(SETS)]


def store_of(root: Path, memories: list[tuple[str, str]]) -> Store:
    return make_store(root, [(slug, "project", said, None) for slug, said in memories])


@pytest.mark.parametrize(("lang", "memories", "question", "target"), SETS, ids=IDS)
def test_a_question_finds_the_memory_by_its_words_without_the_embedder(
    tmp_path: Path, lang: str, memories: list[tuple[str, str]], question: str, target: str
) -> None:
    store = store_of(tmp_path / "store", memories)
    index = SearchIndex(store, embedder=Unavailable("words only, for this test"))
    index.update()
    results = index.search(question, k=3)
    assert results.how == "lexical"
    assert results.hits and results.hits[0].slug == target, results.hits


class _Multilingual:
    """The built-in embedder marked ``multilingual = true``, as a multilingual model folder is:
    the built-in one alone sends a CJK question to the words (``kura.recall.script``), and this
    test is about the fused score a multilingual model's question gets."""

    multilingual = True

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    found = load_embedder()
    assert not isinstance(found, Unavailable), found.reason
    return _Multilingual(found)  # type: ignore[return-value]


@pytest.mark.parametrize(("lang", "memories", "question", "target"), SETS, ids=IDS)
def test_the_fused_score_gives_its_lexical_share_to_the_memory_holding_the_words(
    tmp_path: Path, embedder: Embedder, lang: str, memories: list[tuple[str, str]], question: str, target: str
) -> None:
    store = store_of(tmp_path / "store", memories)
    index = SearchIndex(store, embedder=embedder)
    index.update()
    results = index.search(question, k=len(memories))
    assert results.how == "embedded"
    share = {hit.slug: hit.lexical for hit in results.hits}
    assert share[target] > 0 and all(share[slug] < share[target] for slug in share if slug != target), share


def test_kura_recall_answers_a_japanese_question_with_the_japanese_memory(tmp_path: Path) -> None:
    _, memories, question, target = SETS[0]
    store = store_of(tmp_path / "store", memories)
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store.root), "recall", question, "--json", "--top", "1"],
        capture_output=True, text=True, env=dict(os.environ), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [pick["slug"] for pick in json.loads(done.stdout)["picked"]] == [target], done.stdout


def test_an_edited_memory_is_found_by_its_new_words_and_not_its_old(tmp_path: Path) -> None:
    store = store_of(tmp_path / "store", [("host", "ステージングは kobo-8"), ("other", "デプロイは火曜日")])
    index = SearchIndex(store, embedder=Unavailable("words only, for this test"))
    index.update()
    assert [hit.slug for hit in index.search("ステージング", k=3).hits] == ["host"]
    (store.root / "host.md").write_text(
        "---\nname: host\ndescription: 本番環境は rhino-2\ntype: project\n---\n\n本番環境は rhino-2\n"
    )
    index.update()
    assert index.search("ステージング", k=3).hits == ()
    assert [hit.slug for hit in index.search("本番の環境", k=3).hits] == ["host"]


def test_question_words_cut_cjk_into_bigrams_and_leave_the_rest() -> None:
    assert query_words("本番の環境は kobo-8 ですか？") == ["本番", "環境", "kobo", "8"]
    assert query_words("预发布环境") == ["预发", "发布", "布环", "环境"]
    assert query_words("where is the staging host?") == ["staging", "host"]


def test_an_index_from_before_the_grams_column_is_read_again_keeping_its_vectors(tmp_path: Path) -> None:
    _, memories, question, target = SETS[0]
    store = store_of(tmp_path / "store", memories)
    state = store.root / ".kura"
    state.mkdir(exist_ok=True)
    db = sqlite3.connect(state / "search.db")
    db.executescript(  # schema 2, as kura wrote it before the grams column
        "CREATE TABLE docs (slug TEXT PRIMARY KEY, sha TEXT NOT NULL, fts INTEGER NOT NULL);"
        "CREATE VIRTUAL TABLE docs_fts USING fts5(slug UNINDEXED, name, description, body,"
        " tokenize = 'porter unicode61');"
        "CREATE TABLE kv (key TEXT PRIMARY KEY, value);"
        "CREATE TABLE vectors (sha TEXT NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (sha, model));"
        "INSERT INTO vectors VALUES ('keep-me', 'm', x'00'); PRAGMA user_version = 2;"
    )
    db.commit()
    db.close()
    index = SearchIndex(store, embedder=Unavailable("words only, for this test"))
    assert index.update() == len(memories)
    assert [hit.slug for hit in index.search(question, k=1).hits] == [target]
    assert index.db.execute("SELECT count(*) FROM vectors WHERE sha = 'keep-me'").fetchone()[0] == 1
