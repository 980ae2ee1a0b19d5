"""A question in a script the built-in English embedder cannot read is answered from its
words, and the answer says so; an embedder marked multilingual reads it by meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_folders import minilm_folder

from kura.files.model_table import ModelConfig
from kura.recall.embed import load_embedder
from kura.recall.remote_embed import RemoteEmbedder
from kura.recall.script import reads, unread_script, unreadable
from kura.store.store import init_store


@pytest.mark.parametrize(
    ("question", "script"),
    [
        ("ステージングはどこで動いている？", "Japanese"),
        ("kobo-8 はどこで動いている", "Japanese"),
        ("预发布环境在哪里运行", "CJK"),
        ("스테이징 서버는 어디에 있나요", "Korean"),
        ("где работает стейджинг?", "Cyrillic"),
        ("πού τρέχει το staging", "Greek"),
        ("where does staging run?", None),
        ("¿dónde se ejecuta el despliegue los martes?", None),
        ("Wo läuft die Staging-Umgebung? Größe 8", None),
        ("Môi trường thử nghiệm chạy ở đâu", None),  # Vietnamese: Latin with its extended marks
        ("deploy to the 東京 region", None),
        ("2026-12-06 14:00 #42", None),
        ("", None),
    ],
)
def test_the_script_of_most_of_the_letters_decides(question: str, script: str | None) -> None:
    assert unread_script(question) == script


def test_an_embedder_marked_multilingual_reads_every_script() -> None:
    built_in = load_embedder()
    assert not reads(built_in)
    told = unreadable("где работает стейджинг?", built_in)
    assert told.startswith("the question is written in Cyrillic script, which the built-in embedder "
                           "(all-MiniLM-L6-v2, English only) cannot read, so it was answered from its words")  # fmt: skip
    remote = ModelConfig(role="embedder", url="http://127.0.0.1:9", model="bge-m3")
    assert "the embedder api:bge-m3/t3 (not marked multilingual = true)" in unreadable(
        "где?", RemoteEmbedder(remote)
    )
    marked = ModelConfig(role="embedder", url="http://127.0.0.1:9", model="bge-m3", multilingual=True)
    assert unreadable("где работает стейджинг?", RemoteEmbedder(marked)) == ""


def store_in(root: Path) -> None:
    init_store(root, name="s")
    memories = {
        "staging-host": ("Стейджинг работает на kobo-8", "Стейджинг работает на сервере kobo-8 в подвале."),
        "deploy-days": ("Deploys happen on Tuesdays", "We deploy to production on Tuesdays only."),
    }
    for slug, (description, body) in memories.items():
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug}\ndescription: {description}\ntype: project\n---\n\n{body}\n"
        )
    lines = "\n".join(f"- [{slug}]({slug}.md) — {d}" for slug, (d, _) in memories.items())
    (root / "MEMORY.md").write_text(f"# Memory index\n\n{lines}\n")


def recalled(cwd: Path, question: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "kura", "recall", "--json", "--no-model", question],
                          capture_output=True, text=True, cwd=cwd, env={**os.environ}, timeout=180)  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    said: dict[str, object] = json.loads(done.stdout)
    return said


def test_a_cyrillic_question_is_answered_from_words_and_says_why(tmp_path: Path) -> None:
    store_in(tmp_path / "memory")
    said = recalled(tmp_path, "где работает стейджинг")
    assert said["how"] == "lexical" and said["degraded"] is True
    assert "written in Cyrillic script" in str(said["reason"]) and "multilingual = true" in str(
        said["reason"]
    )
    assert [pick["slug"] for pick in said["picked"]] == ["staging-host"]  # type: ignore[attr-defined]
    english = recalled(tmp_path, "which day do we deploy")
    assert english["how"] == "embedded" and "script" not in str(english["reason"])


def test_a_model_folder_marked_multilingual_searches_it_by_meaning(tmp_path: Path) -> None:
    store_in(tmp_path / "memory")
    folder = minilm_folder(tmp_path / "models" / "minilm")
    (tmp_path / "kura.toml").write_text(
        '[stores.s]\npath = "memory"\n\n[embedder]\npath = "models/minilm"\nmultilingual = true\n'
    )
    said = recalled(tmp_path, "где работает стейджинг")
    assert said["how"] == "embedded" and "script" not in str(said["reason"]), said
    assert folder.is_dir()
