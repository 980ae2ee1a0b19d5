"""A question about what someone thought or said lifts the memories that report it
(``kura.recall.speech``): first on the longchat store with the real model, where the fact
the question is about ranked above the memory of who said it; then which questions ask,
which texts report, and that the body's provenance line does not count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_memory

from kura.recall import speech
from kura.recall.embed import Unavailable
from kura.recall.search import SearchIndex
from kura.store.store import Store

LONGCHAT = Path(__file__).resolve().parents[2] / "bench" / "eval" / "longchat" / "observations.txt"


def test_who_said_it_ranks_above_what_it_was_about(tmp_path: Path) -> None:
    """Before: "Jess is learning Bulgarian on an app" first and Owen's advice second; Nadia's
    advice to take the acting head job third, under two memories of the job itself."""
    for line in LONGCHAT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            slug, day, who, said = (part.strip() for part in line.split("|", 3))
            (tmp_path / f"{slug}.md").write_text(  # as bench/recall_quality.py writes it
                f"---\nname: {slug.replace('-', ' ')}\ndescription: {said}\ntype: user\n---\n\n"
                f"Said by {who} in the chat of {day}: {said}\n"
            )
    index = SearchIndex(Store(tmp_path))
    index.update()
    bulgarian = [h.slug for h in index.search("Who said Jess ought to pick up some Bulgarian?", k=3).hits]
    assert bulgarian[:2] == ["owen-advice-bulgarian", "nadia-jess-bulgarian"]
    head = [h.slug for h in index.search("Who told Owen to accept the acting head job?", k=3).hits]
    assert head.index("nadia-advice-head") == 1
    index.close()


def test_which_questions_ask_and_which_texts_report() -> None:
    for asking in (
        "What did Owen think of the portrait?",
        "How does Nadia feel about camping?",
        "Who told Owen to accept the job?",
        "Who recommended the novel Piranesi?",
        "What did Owen make of Piranesi?",
    ):
        assert speech.asks_opinion(asking), asking
    for other in (
        "What fossil did a student find?",
        "What is the roaster called?",
        "Where is the studio?",
        "Tell me the deploy command",  # a request, not a question about what someone said
        "Can you tell us where the backups go?",
        "What do you think the port is?",  # the asker's hedge, not someone's opinion
    ):
        assert not speech.asks_opinion(other), other
    assert speech.reports("Owen said a painted portrait was the best wedding present")
    assert speech.reports("Nadia told Owen to take the acting head job")
    assert not speech.reports("Nadia painted Lena and Marco a portrait from their engagement photo")


def _scored(tmp_path: Path, memories: dict[str, tuple[str, str]]) -> tuple[SearchIndex, list[str]]:
    for slug, (description, body) in memories.items():
        write_memory(tmp_path, slug, "user", description, body=body)
    index = SearchIndex(Store(tmp_path), embedder=Unavailable("the words are enough here"))
    index.update()
    return index, [slug for (slug,) in index.db.execute("SELECT slug FROM docs ORDER BY slug")]


def test_only_the_description_reports_and_only_when_it_tells_candidates_apart(tmp_path: Path) -> None:
    """Every body says who said it: that counts for nothing. The one description that reports
    an opinion is lifted; when every candidate's does, none is."""
    index, slugs = _scored(
        tmp_path,
        {
            "a-fact": ("Nadia painted a portrait of Lena", "Said by Nadia in the chat of 2025-09-23: …"),
            "b-opinion": (
                "Owen said the portrait was the best present",
                "Said by Owen in the chat of 2025-09-23",
            ),
            "c-fact": ("Lena hung the portrait in the hall", "Said by Nadia in the chat of 2025-10-07: …"),
        },
    )
    scores = np.array([0.6, 0.5, 0.4], dtype=np.float32)
    assert speech.lift(index.db, "Where is the portrait?", slugs, scores) is scores
    lifted = speech.lift(index.db, "What did Owen think of the portrait?", slugs, scores)
    assert lifted.tolist() == pytest.approx([0.6, 0.5 + speech.LIFT, 0.4])
    index.close()
    index, slugs = _scored(
        tmp_path / "all",
        {f"{n}-said": (f"Owen said portrait {n} was fine", "") for n in ("a", "b")},
    )
    pair = np.array([0.6, 0.5], dtype=np.float32)
    assert speech.lift(
        index.db, "What did Owen think of the portrait?", slugs, pair
    ).tolist() == pytest.approx([0.6, 0.5])
    index.close()
