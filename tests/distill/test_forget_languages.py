"""A request to forget ("forget that X") in Chinese, Japanese, Korean and Russian
archives the memory that says X (issue 31). The claim matcher read words as runs of ASCII letters, so a memory written in
these scripts had no words to match and the request found nothing; CJK is now read as
character bigrams, other scripts as their runs of letters. A real ``kura distill run``
reads a real-shaped transcript into a direct store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory
from test_requests_and_not_facts import configured, memories, transcript

from kura.text.claim_match import negated, relation, words

# (language, the memory as written, what the person said)
FORGET = [
    ("ja", "古いデプロイ先は rhino-2 だった", "古いデプロイ先 rhino-2 のことは忘れて。"),
    ("ja", "ステージングは kobo-8 で動いている", "忘れて: ステージングは kobo-8 で動いている"),
    ("zh", "旧的部署主机是 rhino-2", "忘掉旧的部署主机 rhino-2 吧。"),
    ("ko", "예전 배포 서버는 rhino-2였다", "예전 배포 서버 rhino-2는 잊어줘."),
    ("ru", "Старый сервер называется rhino-2", "Забудь, что старый сервер называется rhino-2."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "memory", "said"), FORGET, ids=[f"{a[0]}-{n}" for n, a in enumerate(FORGET)]
)
def test_forget_that_archives_the_memory_that_says_it(
    tmp_path: Path, lang: str, memory: str, said: str
) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    write_memory(store.root, "old-deploy-host", "project", memory)
    write_memory(
        store.root, "coffee", "user", "コーヒーは近所の焙煎所で買う / 咖啡在楼下买 / 커피는 근처에서 산다"
    )
    transcript(journals / "session.jsonl", said)
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "distill", "run"],
        capture_output=True, text=True, env=dict(os.environ), timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    assert "test/old-deploy-host:1: archived: the user asked to forget this" in done.stderr
    assert "test/coffee" not in done.stderr
    assert memories(store) == ["coffee", "old-deploy-host"]  # kept on disk, nothing new written


def test_cjk_claims_are_read_as_bigrams_and_other_scripts_as_words() -> None:
    assert words("ステージングは kobo-8 で動いている") == {
        "ステ",
        "テー",
        "ージ",
        "ジン",
        "ング",
        "kobo-8",
        "動",
    }
    assert words("Le déploiement") == {"le", "déploiement"}  # no "d" and "ploiement" left behind
    assert words("сервер называется") == {"сервер", "называется"}
    assert words("the deploy runs on Fly.io") == {"deploy", "run", "fly.io"}  # ASCII as before


def test_a_cjk_claim_with_one_name_changed_revises_the_other() -> None:
    assert relation("ステージングは kobo-9 で動いている", "ステージングは kobo-8 で動いている") == "revision"
    assert relation("ステージングは kobo-8 で動いている", "ステージングは kobo-8 で動いている") == "same"
    assert relation("本番は火曜日にデプロイする", "ステージングは kobo-8 で動いている") == "different"


@pytest.mark.parametrize(
    ("said", "negative"),
    [
        ("ステージングは kobo-8 で動いていない", True),
        ("金曜日にはデプロイしません", True),
        ("不要在周五部署", True),
        ("这两个配置不同", False),  # 不同 is "different", not "not"
        ("금요일에는 배포하지 않는다", True),
        ("деплой не по пятницам", True),
        ("Wir deployen nicht am Freitag", True),
        ("O deploy não é às sextas", True),
        ("my niece denied the password", False),
    ],
)
def test_a_claim_says_not_in_the_persons_language(said: str, negative: bool) -> None:
    assert negated(said) is negative


def test_forget_that_spares_the_memory_that_says_the_opposite(tmp_path: Path) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    path = write_memory(store.root, "staging-host", "project", "ステージングは kobo-8 で動いていない")
    before = path.read_bytes()
    transcript(journals / "session.jsonl", "忘れて: ステージングは kobo-8 で動いている")
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "distill", "run"],
        capture_output=True, text=True, env=dict(os.environ), timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    assert "archived" not in done.stderr
    assert path.read_bytes() == before
