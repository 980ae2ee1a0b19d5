"""The store's own relevance floor (``kura.recall.floor``) on a store of long notes with
templated near-twins, and below the bar on a chat store, through real ``kura recall``
processes, the real model and the real search database."""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from kura.recall.embed import Unavailable, load_embedder
from tests.recall.test_converse import chat_store, embedded, picked, recall

BENCH = Path(__file__).parents[2] / "bench"
PADDING = 300  # bench/distractors.py's notes: enough near-twins to lift the bar to 0.29
FILLER = 600  # one-line notes from one template: the bar of the short ones is at its ceiling
PARAPHRASES = [  # bench/eval/queries.jsonl's, with no content word of their memory
    "Where are we going across the Channel this summer, and when do we shut up shop?",
    "When must our station wagon pass its yearly roadworthiness test?",
    "Which bank do the monthly payments from upstairs go into?",
]
TOPICS = "kayak harbour violin chess telescope beekeeping pottery marathon origami falconry".split()


def distractors() -> Any:
    """bench/distractors.py, the padding bench/recall_quality.py's ``--pad`` writes."""
    spec = importlib.util.spec_from_file_location("distractors", BENCH / "distractors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def padded(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    """bench/eval's bakery store (64 long notes) with 300 of the bench's distractors: notes
    written from templates, so most have a near twin."""
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path_factory.mktemp("padded") / "store"
    shutil.copytree(BENCH / "eval" / "store", root, ignore=shutil.ignore_patterns(".kura"))
    distractors().write(root, PADDING)
    return embedded(root, user_cache)


@pytest.fixture(scope="module")
def undescribed(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    """The padded store with every ``description:`` line taken out, as long notes kept by hand
    often are: a note's length, not its missing description, says it is no question-sized one."""
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path_factory.mktemp("undescribed") / "store"
    shutil.copytree(BENCH / "eval" / "store", root, ignore=shutil.ignore_patterns(".kura"))
    distractors().write(root, PADDING)
    for note in root.glob("*.md"):
        lines = note.read_text(encoding="utf-8").splitlines(keepends=True)
        note.write_text(
            "".join(line for line in lines if not line.startswith("description:")), encoding="utf-8"
        )
    return embedded(root, user_cache)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    """The bakery's 64 long notes among 600 one-line notes written from one template
    (bench/recall_quality.py's ``--pad-style templated``): a store mostly of short near-twins."""
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path_factory.mktemp("filled") / "store"
    shutil.copytree(BENCH / "eval" / "store", root, ignore=shutil.ignore_patterns(".kura"))
    rng = random.Random(3)
    for i in range(FILLER):
        a, b = rng.sample(TOPICS, 2)
        (root / f"pad-{i:05d}.md").write_text(
            f"---\nname: {a} note {i}\ndescription: {a} and {b} details number {i} for the club\n"
            f"type: reference\n---\n\nSomething about {a} and {b}, entry {i}.\n",
            encoding="utf-8",
        )
    return embedded(root, user_cache)


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    return embedded(chat_store(tmp_path_factory.mktemp("longchat") / "store"), user_cache)


@pytest.mark.parametrize("question", PARAPHRASES)
def test_a_paraphrase_on_a_store_of_long_templated_notes_is_answered(padded: Path, question: str) -> None:
    """The notes' near-twins stand far closer to one another than a question to its note (the
    memories' p10 0.33: a bar of 0.28), and these paraphrases stand 0.22–0.23 above the store
    (cosines 0.35–0.39): the bar refused them. A store of long notes is left to the fixed floor."""
    code, found = recall(padded, question)
    assert (code, len(picked(found)) > 0) == (0, True)
    kept = _kept(padded)
    assert (kept["short"], kept["margin"]) == (0.0, 0.0)


@pytest.mark.parametrize("question", PARAPHRASES)
def test_long_notes_without_descriptions_are_no_question_sized_memories(
    undescribed: Path, question: str
) -> None:
    """With no description a note has no headline of its own: its first words stand for one,
    so a long note still counts as long and the store is left to the fixed floor."""
    code, found = recall(undescribed, question)
    assert (code, len(picked(found)) > 0) == (0, True)
    kept = _kept(undescribed)
    assert kept["short"] < 0.1 and kept["margin"] == 0.0  # every note was question-sized (1.0) before


@pytest.mark.parametrize(
    "question", ["What's our policy on flying drones?", "What's the combination for the bike lock?"]
)
def test_an_unrelated_question_far_from_every_note_is_still_refused(padded: Path, question: str) -> None:
    """Refused by the fixed floor: no note comes within a cosine of 0.27 (on that store no rule
    of the cosines or the words tells a paraphrase from an unrelated question that comes
    nearer: docs/recall.md)."""
    code, found = recall(padded, question)
    assert (code, picked(found)) == (2, [])


@pytest.mark.parametrize("question", PARAPHRASES)
def test_among_short_near_twins_a_question_whose_best_memory_is_a_long_note_is_answered(
    filled: Path, question: str
) -> None:
    """The store's bar is its one-line notes' (at the ceiling, 0.40: they are near-twins), and
    it judges only a question whose best memory is one of them; these paraphrases' best
    memories are the bakery's long notes, which the fixed floor judges."""
    code, found = recall(filled, question)
    assert (code, len(picked(found)) > 0) == (0, True)
    kept = _kept(filled)
    assert kept["margin"] == 0.4 and 0.8 < kept["short"] < 1.0


@pytest.mark.parametrize(
    "question",
    ["Which charity are we sponsoring in the fun run?", "When is the mooring fee for the boat due?"],
)
def test_among_short_near_twins_a_question_whose_best_memory_is_one_of_them_meets_the_bar(
    filled: Path, question: str
) -> None:
    """Their best memories are one-line notes (marathon, harbour: cosines 0.38–0.39, above the
    fixed floor) that stand no further above the store than the notes' near-twins do."""
    code, found = recall(filled, question)
    assert (code, picked(found)) == (2, [])


def test_a_calibration_kept_by_an_older_kura_is_made_again(padded: Path, tmp_path: Path) -> None:
    """One kept without ``short`` (an older kura's: the bar at its ceiling, 0.40) would refuse
    the paraphrase again; it is made again instead."""
    store = tmp_path / "store"
    shutil.copytree(padded, store)
    recall(store, "Which bank do the monthly payments from upstairs go into?")
    kept = _kept(store)
    older = {key: value for key, value in kept.items() if key != "short"} | {"margin": 0.4}
    with sqlite3.connect(store / ".kura" / "search.db") as db:
        db.execute("UPDATE kv SET value = ? WHERE key = 'floor'", (json.dumps(older),))
    code, found = recall(store, "Which bank do the monthly payments from upstairs go into?")
    assert (code, len(picked(found)) > 0) == (0, True)
    assert _kept(store) == kept


def test_a_rare_word_that_singles_out_the_first_hit_answers_below_the_bar(chat: Path) -> None:
    """Every memory names Nadia or Owen, so the bar is 0.35, and this question stands 0.34
    above the store; but its first hit is the one memory holding most of its rare words (Bea
    is in 7 of 249 memories, singing in 2), which an unrelated question's words do not single
    out."""
    code, found = recall(chat, "What does Bea play besides singing?")
    assert (code, picked(found)[:1]) == (0, ["owen-band-recording"])


@pytest.mark.parametrize(
    "question",
    [
        "Which gym does Owen go to?",
        "What is Nadia's car insurance company?",
        "What is Tilly's surname?",
    ],
)
def test_a_question_the_chat_never_touched_is_still_refused(chat: Path, question: str) -> None:
    code, found = recall(chat, question)
    assert (code, picked(found)) == (2, [])


def _kept(store: Path) -> dict[str, Any]:
    with sqlite3.connect(store / ".kura" / "search.db") as db:
        (value,) = db.execute("SELECT value FROM kv WHERE key = 'floor'").fetchone()
    kept: dict[str, Any] = json.loads(value)
    return kept
