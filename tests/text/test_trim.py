"""Triggers keep what makes a line recognisable, and a model's trigger must stay grounded."""

from __future__ import annotations

import pytest

from kura.text.tokens import estimate_tokens
from kura.text.triggers import grounded, mechanical

LONG = "⚠️ never force-push to main: branch protection is off for admins since the March migration, and Tomasz lost two days of work to it"


def test_short_lines_pass_through() -> None:
    assert mechanical("make test runs pytest", 24) == "make test runs pytest"


def test_trimmed_lines_fit_and_keep_the_recognisable_words() -> None:
    short = mechanical(LONG, 12)
    assert estimate_tokens(short) <= 12
    for word in ("⚠️", "never", "force-push", "Tomasz"):
        assert word in short
    words = short.split()
    assert words == [w for w in LONG.split() if w in words or w.rstrip(":,") in words]  # original order


def test_numbers_units_identifiers_and_code_spans_survive() -> None:
    line = "the archive lives on the slow disk (hdd0, 8 TB) and `rsync -a /srv/archive` runs nightly at 02:30"
    short = mechanical(line, 16)
    assert "8 TB" in short and "hdd0" in short and "02:30" in short
    assert short.count("`") % 2 == 0
    assert short.count("(") == short.count(")")


def test_never_empty_and_never_cuts_a_word() -> None:
    word = "supercalifragilisticexpialidocious-antidisestablishmentarianism"
    assert mechanical(word, 2) == word
    assert mechanical("the of and to a", 1) != ""


def test_cjk_is_cut_at_its_own_punctuation_and_between_its_phrases() -> None:
    line = "蒸留蔵のアーカイブは遅いディスクに置く。速いディスクはスクラッチ用。"
    assert mechanical(line, 24) == "蒸留蔵のアーカイブは遅いディスクに置く。速い"
    # one clause with no punctuation to cut at: its phrases, from the start, no spaces put in
    line = "本番データベースのバックアップは毎晩二時に取り三十日分を保存して週末は別のサーバーに複製する"
    assert mechanical(line, 12) == "本番データベースの"
    assert mechanical(line, 24) == "本番データベースのバックアップは毎晩二時に取り"


@pytest.mark.parametrize(
    ("trigger", "verdict"),
    [
        ("archive on slow disk, 8 TB", None),
        ("archive on slow disk, 16 TB", "adds the number 16"),
        ("never put the archive on fast disk", "adds the negation 'never'"),
        ("archive moved to Hetzner", "adds the name 'Hetzner'"),
        ("   ", "the trigger is empty"),
    ],
)
def test_grounding(trigger: str, verdict: str | None) -> None:
    assert (
        grounded(trigger, "the archive lives on the slow disk (8 TB); the fast one stays scratch") == verdict
    )


@pytest.mark.parametrize(
    "line", ["— " * 60, ", , ; : " * 10, "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("]
)
def test_punctuation_only_lines_are_never_emptied(line: str) -> None:
    assert mechanical(line, 4).strip()


def test_a_link_in_a_trigger_survives_the_cut() -> None:
    short = mechanical(
        "see [the runbook](runbook.md) for the archive on the slow disk because NVMe wears out fast", 10
    )
    assert "](runbook.md)" in short and short.count("[") == short.count("]")


@pytest.mark.parametrize(
    ("trigger", "verdict"),
    [
        ("archive isn't on the slow disk", 'adds the negation "isn\'t"'),
        ("archive shouldn’t be on the slow disk", 'adds the negation "shouldn\'t"'),
        ("archive on an iPhone", "adds the name 'iPhone'"),
        ("archive on ten slow disks", "adds the number 'ten'"),
    ],
)
def test_grounding_catches_quiet_additions(trigger: str, verdict: str) -> None:
    assert grounded(trigger, "the archive lives on the slow disk (8 TB)") == verdict
