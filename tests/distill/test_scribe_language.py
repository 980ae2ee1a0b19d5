"""The scribe writes in the person's language (issue 31): ``[distill] language``, or the
language of the evidence when unset, travels in the scribe's request, and the final-surface
floor reads a draft in that language the way it reads English: the user's own words in
「…」 with the verb after them license the number inside, and a 「…」 the evidence never
said is refused. A scripted OpenAI-compatible server on 127.0.0.1 plays brain and scribe;
a real ``kura distill run`` process reads a real-shaped transcript."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ModelServer
from test_brain import Script, run, staged
from test_requests_and_not_facts import transcript

from kura.distill.final_check import violations
from kura.distill.scribe_language import NAMES, configured, of_text
from kura.store.store import Store, init_store
from kura.transcripts.segments import Segment

ENGLISH = "Remember that the staging database lives on db-staging.internal, not on the primary host."
JAPANESE = "覚えておいて: デプロイの時間枠は 30 分"
DRAFT = {
    "title": "デプロイの時間枠",
    "description": "ユーザーは「デプロイの時間枠は 30 分」と言った",
    "body": "ユーザーは「デプロイの時間枠は 30 分」と言った。\n\n**Why:** 作業の予定を立てるため。\n\n"
    "**How to apply:** デプロイの前に時間枠を確かめる。",
}


def setup(tmp_path: Path, server: ModelServer, said: str, language: str = "") -> tuple[Store, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    transcript(journals / "session.jsonl", said)
    config = tmp_path / "kura.toml"
    table = f'[distill]\nlanguage = "{language}"\n\n' if language else ""
    config.write_text(
        f'{table}[stores.test]\npath = "{store.root}"\nwrite_policy = "distiller-only"\n\n'
        f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n\n'
        f'[models.thinker]\nurl = "{server.url}"\nmodel = "m"\ntimeout = 5\n'
    )
    return store, config


def asked_in(script: Script) -> list[str]:
    return [json.loads(body["messages"][1]["content"])["language"] for body in script.asked["scribe"]]


def titles(store: Store) -> list[str]:
    return [draft.title for draft in staged(store).values()]


def test_the_configured_language_travels_in_the_scribes_request(
    tmp_path: Path, model_server: ModelServer
) -> None:
    written = {"title": "ステージングのデータベース", "description": "ステージングのデータベースは db-staging.internal",
               "body": "ステージングのデータベースは db-staging.internal にあり、本番ホストではない。"}  # fmt: skip
    script = Script({"candidates": []}, scribe=written)
    model_server.respond = script
    store, config = setup(tmp_path, model_server, ENGLISH, language="ja")
    run(config)
    assert asked_in(script) == ["Japanese (日本語)"]
    assert titles(store) == ["ステージングのデータベース"]


@pytest.mark.parametrize(
    ("said", "language"),
    [(JAPANESE, "Japanese (日本語)"), ("Recuerda que el despliegue es los martes.", "Spanish (español)"),
     (ENGLISH, "English")],
    ids=["ja", "es", "en"],
)  # fmt: skip
def test_unset_the_scribe_is_asked_for_the_language_of_the_evidence(
    tmp_path: Path, model_server: ModelServer, said: str, language: str
) -> None:
    script = Script({"candidates": []}, scribe="no answer")
    model_server.respond = script
    _, config = setup(tmp_path, model_server, said)
    run(config)
    assert asked_in(script) == [language]


def test_a_japanese_draft_quoting_the_users_number_passes_the_floor(
    tmp_path: Path, model_server: ModelServer
) -> None:
    model_server.respond = Script({"candidates": []}, scribe=DRAFT)
    store, config = setup(tmp_path, model_server, JAPANESE)
    run(config)
    [draft] = staged(store).values()
    assert (draft.title, draft.description) == (DRAFT["title"], DRAFT["description"])


# (language, the request, the scribe's title, its sentence quoting the person, attributed)
NUMBERED = [
    ("ja", JAPANESE, "デプロイの時間枠", "ユーザーは「デプロイの時間枠は 30 分」と言った。"),
    ("zh", "记住：部署窗口是 30 分钟", "部署窗口", "用户说：“部署窗口是 30 分钟”。"),
    ("ko", "기억해 둬: 배포 시간은 30분이다.", "배포 시간", '사용자는 "배포 시간은 30분이다"라고 말했다.'),
    ("es", "Recuerda que la ventana de despliegue es de 30 minutos.", "Ventana de despliegue",
     'El usuario dijo: "la ventana de despliegue es de 30 minutos".'),
    ("fr", "Souviens-toi que la fenêtre de déploiement dure 30 minutes.", "Fenêtre de déploiement",
     "L'utilisateur a dit : « la fenêtre de déploiement dure 30 minutes »."),
    ("de", "Merk dir, dass das Deployment-Fenster 30 Minuten dauert.", "Deployment-Fenster",
     "Der Nutzer sagte: „das Deployment-Fenster 30 Minuten dauert“."),
    ("pt", "Lembre-se de que a janela de deploy é de 30 minutos.", "Janela de deploy",
     'O usuário disse: "a janela de deploy é de 30 minutos".'),
    ("ru", "Запомни, что окно деплоя — 30 минут.", "Окно деплоя", "Пользователь сказал: «окно деплоя — 30 минут»."),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "said", "title", "sentence"), NUMBERED, ids=[n[0] for n in NUMBERED])
def test_a_draft_in_the_persons_language_quoting_their_number_passes_the_floor(
    tmp_path: Path, model_server: ModelServer, lang: str, said: str, title: str, sentence: str
) -> None:
    script = Script({"candidates": []}, scribe={"title": title, "description": sentence, "body": sentence})
    model_server.respond = script
    store, config = setup(tmp_path, model_server, said)
    run(config)
    assert asked_in(script) == [NAMES[lang]]
    [draft] = staged(store).values()
    assert (draft.title, draft.body.strip()) == (title, sentence)


def test_a_japanese_draft_putting_words_in_the_users_mouth_is_refused(
    tmp_path: Path, model_server: ModelServer
) -> None:
    invented = {"title": "デプロイの曜日", "description": "デプロイは金曜日だけ",
                "body": "ユーザーは「デプロイは金曜日に限る」と言った。"}  # fmt: skip
    model_server.respond = Script({"candidates": []}, scribe=invented)
    store, config = setup(tmp_path, model_server, JAPANESE)
    run(config)
    [draft] = staged(store).values()  # the template's, in the person's words
    assert draft.title != invented["title"] and "金曜日" not in draft.body
    assert "デプロイの時間枠は 30 分" in draft.body


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("ユーザーは「デプロイの時間枠は 30 分」と言った。", []),
        ("Der Nutzer sagte: „Das Deployment dauert 30 Minuten“", []),
        ("ユーザーは「デプロイは金曜日」と言った。", ['the quotation "デプロイは金曜日" is not verbatim in the evidence']),
        ("『本番は毎晩止める』", ['the quotation "本番は毎晩止める" is not verbatim in the evidence']),
        ("「保存」ボタンを押す", []),  # two characters: a name, not speech
        ("デプロイの時間枠は 30 分。", ['the number "30" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)']),
    ],
)  # fmt: skip
def test_the_floor_reads_quotations_in_the_persons_language(text: str, found: list[str]) -> None:
    evidence = [Segment("USER", JAPANESE), Segment("USER", "Merk dir: Das Deployment dauert 30 Minuten")]
    assert violations(text, evidence, []) == found


def test_the_language_is_read_from_config_and_text() -> None:
    assert configured({"language": "ja"}, {}) == "ja"
    assert configured({"language": "ja"}, {"language": "Deutsch"}) == "de"
    assert configured({"language": "pt-BR"}, {}) == "pt"
    assert configured({"language": "auto"}, {}) == configured({}, {}) == ""
    assert configured({"language": "Swahili"}, {}) == "Swahili"  # asked for as written
    cases = {"ステージングは kobo-8": "ja", "预发布环境在 kobo-9 上": "zh", "배포는 화요일": "ko",
             "деплой по вторникам": "ru", "la base de datos está en el servidor": "es",
             "die Datenbank ist auf dem Server": "de", "the database is on the server": "en"}  # fmt: skip
    assert {text: of_text(text) for text in cases} == cases
