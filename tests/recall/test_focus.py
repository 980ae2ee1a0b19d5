"""The question without the words most memories share (kura.recall.focus)."""

from __future__ import annotations

from kura.recall.focus import AT_LEAST, focused


def test_a_word_most_memories_hold_is_left_out_whatever_its_case() -> None:
    holding = {"nadia": 120, "paint": 9, "lake": 2}
    assert focused("When did Nadia paint the lake?", holding, 249) == "When did paint the lake"


def test_no_common_word_no_second_look() -> None:
    assert focused("When did Nadia paint the lake?", {"nadia": 3, "paint": 9, "lake": 2}, 249) is None


def test_a_handful_of_memories_says_nothing_about_what_is_common() -> None:
    """In a store of three memories a word two hold is in most of them, and means nothing."""
    assert focused("where is the boiler", {"boiler": AT_LEAST - 1}, AT_LEAST - 1) is None
    assert focused("where is the boiler", {"boiler": AT_LEAST}, AT_LEAST) == "where is the"


def test_a_question_of_common_words_only_is_asked_once() -> None:
    assert focused("Nadia?", {"nadia": 120}, 249) is None
