"""The question's two parts read with plain rules (``kura.recall.clauses``): what it asks, and
what it says to point at it. A question with one part, or in another language, is ``None``."""

from __future__ import annotations

import pytest

from kura.recall.clauses import Clauses, answer_of, parse


@pytest.mark.parametrize(
    ("question", "first", "second"),
    [
        ("Which bridge did Ana cross in the town where her cousin was born?", "Which bridge did Ana cross in the town", "her cousin was born"),
        ("Who painted the mural that Kofi saw in Lagos?", "Who painted the mural", "Kofi saw in Lagos"),
        ("What colour is the van Theo bought last spring?", "What colour is the van", "Theo bought last spring"),
        ("What broke in the caddy service Sam restarted?", "What broke in the caddy service", "Sam restarted"),
        ("What did the mechanic replace in the car she drives to work?", "What did the mechanic replace in the car", "she drives to work"),
        ("The flat Yusuf rented: how much was the deposit?", "how much was the deposit", "The flat Yusuf rented"),
        ("Which island is the hero of Lior's novel from?", "Which island is the hero", "Lior's novel from"),
    ],
)  # fmt: skip
def test_a_modifier_is_what_the_question_says_to_point_at_the_head(
    question: str, first: str, second: str
) -> None:
    assert parse(question) == Clauses("modifier", first, second, answer_of(first))  # the asking part's kind


@pytest.mark.parametrize(
    ("question", "first", "second"),
    [
        ("How much heavier was the parcel to Oslo than the one to Bergen?", "the parcel to Oslo", "the one to Bergen"),
        ("How much did the fridge and the oven cost together?", "the fridge", "the oven cost together"),
        ("Where did Priti park, and when did the ticket arrive?", "Where did Priti park", "when did the ticket arrive"),
    ],
)  # fmt: skip
def test_a_comparison_or_a_list_asks_the_first_named_first(question: str, first: str, second: str) -> None:
    found = parse(question)
    assert found is not None and (found.kind, found.first, found.second) == ("list", first, second)


@pytest.mark.parametrize(
    "question",
    [
        "What did the vet take out?",
        "Where is the spare key?",
        "Who wrote the song Low Light?",  # a title after a noun, no verb: no clause
        "What did Sam say that he wanted?",  # what was said, not a relative clause
        "What is the guest Wi-Fi password?",
        "Whose costume won the school Halloween competition?",
        "Which crops go where in the veg patch?",  # "where" after a verb opens no clause
        "Is it more than 3 miles to the station?",  # "more than": no two things compared
        "What does Owen think of Tilly's singing?",  # "think of" someone's thing: what is asked
        "deploy script postgres backup",  # no question at all
        "Fix the deploy script that Sam wrote. What did the tests say?",  # a prompt, not one question
        "What did the vet take out?\nAnd the greyhound Nadia adopted?",
        "What did the mechanic replace in the car " + "and the van " * 20 + "she drives?",  # too long
        "",
    ],
)
def test_a_question_with_one_part_is_none(question: str) -> None:
    assert parse(question) is None


@pytest.mark.parametrize(
    "question",
    [
        "¿Qué pintó Nadia en la ciudad donde se casó su hermana?",
        "Qu'a peint Nadia dans la ville où sa sœur s'est mariée ?",
        "Was hat Nadia in der Stadt gemalt, in der ihre Schwester geheiratet hat?",
        "妹が結婚した街でナディアは何を描きましたか？",
        "Что Надя нарисовала в городе, где вышла замуж её сестра?",
    ],
)
def test_other_languages_are_left_alone(question: str) -> None:
    assert parse(question) is None


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How much did the boiler cost?", "amount"),
        ("How many cousins came?", "amount"),
        ("When did the roof start leaking?", "date"),
        ("Which city did they move to?", "place"),
        ("What was the name of the horse?", "name"),
        ("Who fixed the gate?", "name"),
        ("Why did the bus stop?", "any"),
    ],
)
def test_the_kind_of_answer_is_read_from_the_wh_word(question: str, answer: str) -> None:
    assert answer_of(question) == answer


@pytest.mark.parametrize(
    "question",
    ["Which branch that we merged broke the build?", "Which commit that we reverted broke login?"],
)
def test_a_clause_that_holds_the_asked_verb_is_no_modifier(question: str) -> None:
    """Before: "we merged broke the build" was read as the modifier of "Which branch", so the
    memory that the branch broke the build was taken for the bridge and put second."""
    assert parse(question) is None


def test_the_answer_kind_is_the_asking_parts() -> None:
    """Before: "where" in the modifier made "What did she paint …" ask for a place, and "who"
    in a second question made the first ask for a name."""
    found = parse("What did Nadia paint in the city where her sister got married?")
    assert found is not None and found.answer == "any"
    found = parse("Why did the build fail and who fixed it?")
    assert found is not None and found.answer == "any"
    found = parse("Whose tent did Owen take to Cornwall, and what happened to it?")
    assert found is not None and found.answer == "name"
