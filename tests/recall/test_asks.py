"""A question of several asks finds the memory that answers each (kura.recall.asks): the
asks as split, and through a real ``kura recall`` on a small store of its own, where the
till (card payments and counting the drawer at close) was second to the complaints desk
(a customer's money back) before each ask was embedded on its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_converse import embedded, recall

from kura.recall import asks

MEMORIES = {
    "till-system": (
        "Till and cashing up",
        "Card and cash go through the Square till; at close we count the drawer against the Z report",
        "Customers pay by card or cash on the Square till. At close the drawer is counted against "
        "the Z report and the takings are bagged for the bank.",
    ),
    "complaint-handling": (
        "Complaints at the counter",
        "A customer unhappy with a purchase gets their money back or a replacement, no questions asked",
        "If a customer is unhappy, refund the money or replace the item on the spot and note it in the book.",
    ),
    "celebration-deposits": (
        "Celebration order deposits",
        "Customers pay a 30% deposit by bank transfer when they order a celebration cake",
        "Celebration orders need a 30% deposit, paid by bank transfer, before we start.",
    ),
    "leftover-bread": (
        "Leftover bread",
        "Unsold bread goes to the food bank after we shut",
        "After trading ends, unsold loaves are boxed for the food bank pickup at 16:00.",
    ),
    "morning-float": (
        "Morning float",
        "The till float is £100 in coins, counted each morning from the safe",
        "Each morning take £100 in coins from the safe for the float.",
    ),
}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How do customers pay, and how do we balance the money after trading stops?",
         ["How do customers pay", "how do we balance the money after trading stops?"]),
        ("What's our per-unit power price and when does the contract lapse?",
         ["What's our per-unit power price", "when does the contract lapse?"]),
        ("If someone slips on our shop floor and sues, are we protected?",
         ["If someone slips on our shop floor and sues", "are we protected?"]),
        ("A visitor wants to get online; what's the code for the internet?",
         ["A visitor wants to get online", "what's the code for the internet?"]),
        ("Who is the GP, who is the dentist, and when is the next check-up?",
         ["Who is the GP", "who is the dentist", "when is the next check-up?"]),
    ],
)  # fmt: skip
def test_each_ask_of_a_question_is_a_part(question: str, expected: list[str]) -> None:
    assert asks.split(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "How do customers pay at the till?",  # one ask
        "Whose tent did Owen take to Cornwall, and what happened to it?",  # the second points back
        "When is Walt leaving and where is he going?",  # so does this one
        "What did Sam cook on Friday, do you remember?",  # a tag asks nothing
        "Which cafés take bread and cakes?",  # "and" joins two things, not two asks
        "Who bakes, who serves, who drives, and who does the books?",  # a list of four: no parts
        "We moved the app to Fly.io. How do we deploy, and who can approve it?",  # a prompt, not one question
        "¿Cómo pagan los clientes, y cuándo cerramos la caja?",  # another language
    ],
)
def test_a_question_of_one_ask_has_no_parts(question: str) -> None:
    assert asks.split(question) == []


def test_a_memory_gains_by_the_part_it_answers_least() -> None:
    meaning = np.array([0.40, 0.40, 0.40, 0.45], dtype=np.float32)
    rows = np.array([0, 1, 2])  # the fourth was not read: it keeps its meaning
    parts = np.array([[0.5, 0.5], [0.9, 0.1], [0.1, 0.9]], dtype=np.float32)  # both asks; one; the other
    lifted = asks.lift(meaning, rows, parts)
    assert lifted[0] > lifted[1] == lifted[2]
    assert lifted[0] == pytest.approx(0.40 + asks.WEIGHT * 0.5)
    assert lifted[3] == meaning[3] and meaning[0] == pytest.approx(0.40)  # a new array


def test_only_the_memories_nearest_the_whole_question_are_read() -> None:
    meaning = np.arange(asks.DEPTH * 2, dtype=np.float32)
    assert sorted(asks.candidates(meaning)) == list(range(asks.DEPTH, asks.DEPTH * 2))
    assert sorted(asks.candidates(meaning[:5])) == [0, 1, 2, 3, 4]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    root = tmp_path_factory.mktemp("asks") / "store"
    root.mkdir()
    lines = []
    for slug, (name, description, body) in MEMORIES.items():
        text = f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n"
        (root / f"{slug}.md").write_text(text, encoding="utf-8")
        lines.append(f"- [{name}]({slug}.md) — {description}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return embedded(root, user_cache)


def test_the_memory_that_answers_both_asks_comes_first(store: Path) -> None:
    code, found = recall(
        store, "How do customers pay, and how do we balance the money after trading stops?", "--explain"
    )
    assert code == 0, found
    order = [row["slug"] for row in found["explain"]]
    assert order[0] == "till-system", order
    assert found["picked"][0]["slug"] == "till-system"
