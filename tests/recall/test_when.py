"""A season in a question is read as a window of days against the memories' dates
(``kura.recall.when``): through a real ``kura recall --at`` on a small chat store where two
visits differ by their day alone, then the windows themselves."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from kura.recall import when
from kura.recall.embed import Unavailable, load_embedder
from tests.recall.test_converse import embedded, picked, recall

VISITS = """\
ruth-joan-summer | 2024-08-03 | Ruth | Joan came over from Cork and Ruth took her to an open-air Shakespeare in the castle grounds.
ruth-joan-winter | 2025-01-11 | Ruth | Joan visited again and Ruth took her to see a play at the Grand Theatre.
ruth-choir-fete | 2024-07-06 | Ruth | The choir sang at the fete on the village green.
ruth-knee | 2024-09-14 | Ruth | Ruth's knee is sore after a long walk on the coast path.
kofi-ama-summer | 2024-07-20 | Kofi | Ama stayed with Kofi for a week and they went to the seaside at Whitby.
kofi-ama-winter | 2024-12-28 | Kofi | Ama stayed with Kofi over Christmas and they watched old films every night.
kofi-ama-spring | 2024-04-06 | Kofi | Kofi visited Ama in Leeds and helped paint her kitchen.
kofi-chess | 2024-10-12 | Kofi | Kofi joined a chess club that meets in a pub on Tuesdays.
"""


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path_factory.mktemp("visits") / "store"
    root.mkdir()
    for line in VISITS.splitlines():
        slug, day, who, said = (part.strip() for part in line.split("|", 3))
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug.replace('-', ' ')}\ndescription: {said}\ntype: user\n---\n\n"
            f"Said by {who} in the chat of {day}: {said}\n",
            encoding="utf-8",
        )
    return embedded(root, user_cache)


def test_a_season_in_the_question_picks_the_memory_dated_in_it(visits: Path) -> None:
    """Before: the winter play first (0.700), the summer Shakespeare second (0.655)."""
    code, found = recall(visits, "What did Ruth take Joan to see last summer?", "--at", "2025-02-01")
    assert (code, picked(found)[:2]) == (0, ["ruth-joan-summer", "ruth-joan-winter"])


@pytest.mark.parametrize(
    ("said", "first", "last"),
    [
        ("in the summer", "2024-06-01", "2024-08-31"),  # the latest summer begun by 1 February 2025
        ("last summer", "2024-06-01", "2024-08-31"),
        ("this winter", "2024-12-01", "2025-02-28"),  # winter runs into the next year
        ("last winter", "2023-12-01", "2024-02-29"),  # the latest ended: this one has not
        ("during the spring of 2023", "2023-03-01", "2023-05-31"),
        ("in early autumn", "2024-09-01", "2024-09-30"),
        ("over the fall", "2024-09-01", "2024-11-30"),
    ],
)
def test_the_window_a_season_names(said: str, first: str, last: str) -> None:
    found = when.window(f"What did Ruth do {said}?", dt.date(2025, 2, 1))
    assert found is not None and (found.first.isoformat(), found.last.isoformat()) == (first, last)


def test_a_season_that_is_no_time_is_no_window() -> None:
    for question in ("Where is the summer house?", "Which winter coat did Kofi buy?"):
        assert when.window(question, dt.date(2025, 2, 1)) is None, question


@pytest.mark.parametrize(
    "question",
    [
        "What port is set in the Spring Boot config?",  # a product named for a season
        "What's in the spring config?",
        "What do we do in fall back mode?",
        "What is in the Spring Cloud gateway?",
    ],
)
def test_a_season_word_before_a_noun_is_no_window(question: str) -> None:
    """Before: each was read as three months, so recall searched deeper and lifted every
    memory written in them."""
    assert when.window(question, dt.date(2026, 12, 6)) is None


@pytest.mark.parametrize(
    "question",
    ["What did we ship in the summer of 0000?", "What happened in March 0000?", "What broke on 3 May 0000?"],
)
def test_a_year_no_calendar_holds_is_no_window(question: str) -> None:
    """Before: ``ValueError: year 0 is out of range`` out of ``when.window`` (recall's traceback)."""
    assert when.window(question, dt.date(2026, 12, 6)) is None


def test_recall_of_a_day_before_year_one_answers_without_a_traceback(visits: Path) -> None:
    """Before: ``kura recall "What happened in March 0000?"`` ended in a traceback (exit 1)."""
    for question in ("What happened in March 0000?", "What did Kofi do in the winter of 9999?"):
        code, found = recall(visits, question)
        assert code in (0, 2) and "picked" in found, question
