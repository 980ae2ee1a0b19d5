"""The person's own language (issue 31): requests to remember, requests not to, "forget
that …" and corrections, as people say them in Japanese, Chinese, Korean, Spanish, French,
German, Portuguese and Russian, read from a real-shaped Claude Code transcript by a real
``kura distill run`` subprocess. With no model, the memory keeps their words in their
language, under a valid slug."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import write_memory
from test_requests_and_not_facts import configured, memories, transcript

from kura.distill.rules import forgets, not_kept, request_of, sentences, spot
from kura.files.slugs import new_slug
from kura.store.store import Store
from kura.transcripts.segments import Segment

# (language, what the person said, what the memory must hold in their words)
ASKED = [
    ("ja", "覚えておいて: ステージングは kobo-8 で動いている", "ステージングは kobo-8 で動いている"),
    ("ja", "ステージングは kobo-8 で動いていることを覚えといて。", "ステージングは kobo-8 で動いている"),
    ("ja", "本番のデータベースは毎晩バックアップされるのでメモしておいてください。", "本番のデータベースは毎晩バックアップされる"),
    ("zh", "记住：预发布环境跑在 kobo-8 上，不要直接改配置。", "预发布环境跑在 kobo-8 上"),
    ("zh", "别忘了，发布分支叫 stable-9，每周二合并。", "发布分支叫 stable-9"),
    ("ko", "스테이징 서버는 kobo-8에서 돌아간다는 걸 기억해 줘.", "스테이징 서버는 kobo-8에서 돌아간다"),
    ("ko", "기억해 둬: 배포는 화요일에만 한다.", "배포는 화요일에만 한다"),
    ("es", "Recuerda que el despliegue es los martes.", "el despliegue es los martes"),
    ("es", "Acuérdate de que la base de datos de pruebas está en kobo-8.", "la base de datos de pruebas está en kobo-8"),
    ("fr", "Souviens-toi que le déploiement se fait le mardi.", "le déploiement se fait le mardi"),
    ("fr", "N'oublie pas que la branche de release s'appelle stable-9.", "la branche de release s'appelle stable-9"),
    ("de", "Merk dir, dass das Deployment immer dienstags läuft.", "das Deployment immer dienstags läuft"),
    ("de", "Denk daran, dass die Staging-Datenbank auf kobo-8 liegt.", "die Staging-Datenbank auf kobo-8 liegt"),
    ("pt", "Lembre-se de que o deploy é feito às terças.", "o deploy é feito às terças"),
    ("pt", "Não esqueça que o banco de homologação fica no kobo-8.", "o banco de homologação fica no kobo-8"),
    ("ru", "Запомни, что деплой у нас по вторникам.", "деплой у нас по вторникам"),
    ("ru", "Не забудь, что staging крутится на kobo-8.", "staging крутится на kobo-8"),
]  # fmt: skip
NEGATED = [
    ("ja", "バックアップの時間は覚えなくていいよ。"),
    ("ja", "古いデプロイ先のことは忘れて。"),
    ("zh", "这个不用记，备份时间以后会改。"),
    ("zh", "忘掉旧的部署主机 rhino-2 吧。"),
    ("ko", "백업 시간은 기억하지 마."),
    ("ko", "예전 배포 서버 rhino-2는 잊어줘."),
    ("es", "No recuerdes que la copia de seguridad es a las tres."),
    ("es", "Olvida que el servidor viejo es rhino-2."),
    ("fr", "Ne retiens pas que la sauvegarde tourne à trois heures."),
    ("fr", "Oublie que l'ancien serveur est rhino-2."),
    ("de", "Merk dir nicht, dass das Backup um drei Uhr läuft."),
    ("de", "Vergiss, dass der alte Server rhino-2 heißt."),
    ("pt", "Não lembre que o backup roda às três."),
    ("pt", "Esqueça que o servidor antigo é o rhino-2."),
    ("ru", "Не запоминай, что бэкап идёт в три часа."),
    ("ru", "Забудь, что старый сервер называется rhino-2."),
]
FORGET = [
    ("ja", "古いデプロイ先 rhino-2 のことは忘れて。", "古いデプロイ先 rhino-2"),
    ("zh", "忘掉旧的部署主机 rhino-2 吧。", "旧的部署主机 rhino-2"),
    ("ko", "예전 배포 서버 rhino-2는 잊어줘.", "예전 배포 서버 rhino-2"),
    ("es", "Olvida que el servidor viejo es rhino-2.", "el servidor viejo es rhino-2"),
    ("fr", "Oublie que l'ancien serveur est rhino-2.", "l'ancien serveur est rhino-2"),
    ("de", "Vergiss, dass der alte Server rhino-2 heißt.", "der alte Server rhino-2 heißt"),
    ("pt", "Esqueça que o servidor antigo é o rhino-2.", "o servidor antigo é o rhino-2"),
    ("ru", "Забудь, что старый сервер называется rhino-2.", "старый сервер называется rhino-2"),
]
CORRECTED = [
    ("ja", "違う、ステージングは kobo-8 じゃなくて kobo-9 だよ。"),
    ("zh", "不对，预发布环境在 kobo-9 上。"),
    ("ko", "아니야, 스테이징은 kobo-9에서 돌아가."),
    ("es", "Eso está mal, el despliegue es los martes."),
    ("fr", "Non, le déploiement se fait le mardi."),
    ("de", "Nein, das Deployment läuft dienstags."),
    ("pt", "Na verdade, o deploy é feito às terças."),
    ("ru", "Нет, деплой у нас по вторникам."),
]


def run(config: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "distill", "run", "--json"],
        capture_output=True, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def memory_text(store: Store, slug: str) -> str:
    return (store.root / f"{slug}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("lang", "said", "kept"), ASKED, ids=[f"{a[0]}-{n}" for n, a in enumerate(ASKED)])
def test_a_request_in_the_persons_language_is_a_memory_in_their_words(
    tmp_path: Path, lang: str, said: str, kept: str
) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / "session.jsonl", said)
    report = run(config)
    assert (report["kept"], report["poured"]) == (1, 1), report
    [slug] = memories(store)
    assert new_slug(slug) == slug
    text = memory_text(store, slug)
    assert kept in text
    assert "The user said" not in text and "The user" not in text  # no English wrapped round their words


@pytest.mark.parametrize(("lang", "said"), NEGATED, ids=[f"{a[0]}-{n}" for n, a in enumerate(NEGATED)])
def test_a_negated_request_in_the_persons_language_is_not_kept(tmp_path: Path, lang: str, said: str) -> None:
    assert not_kept(said)
    assert spot([Segment("USER", said)]) == []
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / "session.jsonl", said)
    report = run(config)
    assert (report["candidates"], report["drafts"]) == (0, [])
    assert memories(store) == []


@pytest.mark.parametrize(("lang", "said", "what"), FORGET, ids=[a[0] for a in FORGET])
def test_forget_that_in_the_persons_language_names_what_to_forget(lang: str, said: str, what: str) -> None:
    assert forgets([Segment("USER", said)]) == [what]


@pytest.mark.parametrize(("lang", "said"), CORRECTED, ids=[a[0] for a in CORRECTED])
def test_a_correction_in_the_persons_language_is_spotted(lang: str, said: str) -> None:
    segments = [Segment("SELF", "I set the staging host to kobo-8 as you asked."), Segment("USER", said)]
    assert [c["rule"] for c in spot(segments)] == ["correction"]


def test_cjk_sentences_split_on_their_own_punctuation() -> None:
    text = "デプロイは火曜日。覚えておいて: ステージングは kobo-8 で動いている！本当？"
    assert sentences(text) == [
        "デプロイは火曜日。",
        "覚えておいて: ステージングは kobo-8 で動いている！",
        "本当？",
    ]
    [found] = spot([Segment("USER", text)])
    assert request_of(found["said"]) == "ステージングは kobo-8 で動いている"


def test_a_statement_with_no_latin_word_still_gets_a_valid_slug(tmp_path: Path) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / "session.jsonl", "覚えておいて：本番のデプロイは毎週火曜日の午後に行う。")
    assert run(config)["poured"] == 1
    [slug] = memories(store)
    assert new_slug(slug) == slug and "本番のデプロイは毎週火曜日の午後に行う" in memory_text(store, slug)


# The phrasings docs/distill.md shows, each as a whole sentence a person would say.
MORE_ASKED = [
    "これからは、プルリクエストは必ずスカッシュでマージする。",
    "忘れないで、リリースブランチは stable-9 だよ。",
    "记一下，测试数据库在 kobo-8 上。",
    "发布分支叫 stable-9，记住。",
    "앞으로는 배포 전에 항상 테스트를 돌려.",
    "Ten en cuenta que la rama de release es stable-9.",
    "Désormais, on déploie uniquement le mardi.",
    "Retiens que la base de test est sur kobo-8.",
    "Vergiss nicht, dass die Release-Branch stable-9 heißt.",
    "A partir de agora, o deploy é só às terças.",
    "Имей в виду, что тестовая база на kobo-8.",
]
MORE_NEGATED = [
    "テストの手順は覚えないでください。",
    "这个别记，以后会改。",
    "백업 시간은 기억 안 해도 돼.",
    "No hace falta recordar la contraseña del wifi.",
    "Pas besoin de noter que la sauvegarde tourne à trois heures.",
    "Du musst dir das nicht merken, das Backup läuft um drei.",
    "Não precisa guardar que o backup roda às três.",
    "Не нужно это запоминать, бэкап в три часа.",
]
MORE_CORRECTED = [
    "いや、ステージングは kobo-9 だよ。",
    "其实预发布环境在 kobo-9 上。",
    "그게 아니라 스테이징은 kobo-9야.",
    "Te dije que el despliegue es los martes.",
    "C'est faux, le déploiement se fait le mardi.",
    "Das stimmt nicht, das Deployment läuft dienstags.",
    "Nicht kobo-8, sondern kobo-9.",
    "Isso está errado, o deploy é às terças.",
    "Это не так, деплой по вторникам.",
]


@pytest.mark.parametrize("said", MORE_ASKED)
def test_more_requests_are_requests(said: str) -> None:
    assert not not_kept(said)
    assert [c["rule"] for c in spot([Segment("USER", said)])] == ["remember"]


@pytest.mark.parametrize("said", MORE_NEGATED)
def test_more_negated_requests_are_no_requests(said: str) -> None:
    assert not_kept(said) and spot([Segment("USER", said)]) == []


@pytest.mark.parametrize("said", MORE_CORRECTED)
def test_more_corrections_are_corrections(said: str) -> None:
    segments = [Segment("SELF", "I set the staging host to kobo-8 as you asked."), Segment("USER", said)]
    assert [c["rule"] for c in spot(segments)] == ["correction"]


@pytest.mark.parametrize(
    ("memory", "said"),
    [
        (
            "El servidor viejo de despliegue es rhino-2",
            "Olvida que el servidor viejo de despliegue es rhino-2.",
        ),
        ("Der alte Deploy-Server heißt rhino-2", "Vergiss, dass der alte Deploy-Server rhino-2 heißt."),
    ],
    ids=["es", "de"],
)
def test_forget_that_in_the_persons_language_archives_the_memory_in_a_direct_store(
    tmp_path: Path, memory: str, said: str
) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    write_memory(store.root, "old-deploy-host", "project", memory)
    transcript(journals / "session.jsonl", said)
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "distill", "run"],
        capture_output=True, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    assert "test/old-deploy-host:1: archived: the user asked to forget this" in done.stderr
    assert "old-deploy-host" not in (store.root / "MEMORY.md").read_text(encoding="utf-8")
    assert memories(store) == ["old-deploy-host"]  # kept on disk, and nothing new written


@pytest.mark.parametrize(
    "said",
    ["Recuerda que la ventana de despliegue es de 30 minutos.", "デプロイの時間枠は 30 分だと覚えておいて。"],
    ids=["es", "ja"],
)
def test_a_number_only_the_person_gave_keeps_their_sentence_attributed(tmp_path: Path, said: str) -> None:
    """The floor licenses a bare number from tools alone; the person's sentence, quoted as
    theirs, still carries it (kura's one English attribution, their words untouched)."""
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / "session.jsonl", said)
    assert run(config)["poured"] == 1
    [slug] = memories(store)
    assert said in memory_text(store, slug)
