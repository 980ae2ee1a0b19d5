"""The conversation's recall through real ``kura recall`` processes on real stores: the second
hop (``kura.recall.hop``), dates in questions (``kura.recall.when``) and the floor calibrated
per store (``kura.recall.floor``)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

LONGCHAT = Path(__file__).parents[2] / "bench" / "eval" / "longchat" / "observations.txt"


def chat_store(root: Path) -> Path:
    """bench/eval/longchat as a store: one observation a memory, dated in its text."""
    root.mkdir(parents=True)
    lines = []
    for line in LONGCHAT.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        slug, day, who, said = (part.strip() for part in line.split("|", 3))
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug.replace('-', ' ')}\ndescription: {said}\ntype: user\n---\n\n"
            f"Said by {who} in the chat of {day}: {said}\n",
            encoding="utf-8",
        )
        lines.append(f"- [{slug.replace('-', ' ')}]({slug}.md) — {said}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def recall(store: Path, question: str, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store), "recall", question, "--json", "--no-model", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    return done.returncode, json.loads(done.stdout)


def picked(found: dict[str, Any]) -> list[str]:
    return [p["slug"] for p in found["picked"]]


def embedded(root: Path, cache: Path) -> Path:
    """``root`` with every memory's vector made here, with the user's state kept in tmp: a
    first ``kura recall`` on a loaded machine otherwise answers from a part-built index
    (partial: the rest found by words) while its background build finishes."""
    from kura.recall.search import SearchIndex
    from kura.store.store import Store

    with pytest.MonkeyPatch.context() as patch:
        for key in [key for key in os.environ if key.startswith(("KURA_", "OPENAI_"))]:
            patch.delenv(key)
        patch.setenv("XDG_CACHE_HOME", str(cache))
        patch.setenv("HOME", str(root.parent))
        patch.setenv("KURA_HOME", str(root.parent))
        index = SearchIndex(Store(root))
        try:
            index.update()
        finally:
            index.close()
    return root


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    return embedded(chat_store(tmp_path_factory.mktemp("longchat") / "store"), user_cache)


def test_the_second_hop_finds_what_only_the_first_pick_names(chat: Path) -> None:
    """The question names the book's hero, not Bruno: the book's memory says "a greyhound
    afraid of stairs", and those words find the real dog (ranked past 30th by the question).
    The shelter's greyhound, which holds the head's "dog" (``kura.recall.headed``), now comes
    before the book, and the real dog is 4th, not 3rd: its fear is "scared", no head word."""
    _, found = recall(
        chat, "Which real dog shares a fear with the hero of Priya's children's book?", "--explain"
    )
    order = [row["slug"] for row in found["explain"]]
    assert "nadia-book-project" in picked(found)
    assert "nadia-bruno-afraid-stairs" in order[:4], order[:6]


def test_the_second_hop_leaves_a_plain_question_alone(chat: Path) -> None:
    _, found = recall(chat, "Which subject does Owen teach?")
    assert picked(found)[0] == "owen-teaches-geography"


@pytest.mark.parametrize(
    "question",
    ["Which gym does Owen go to?", "What is Nadia's car insurance company?", "What colour is Owen's car?"],
)
def test_a_question_the_chat_never_touched_is_refused(chat: Path, question: str) -> None:
    """Every memory names Nadia or Owen, so the best cosine of an unrelated question about them
    clears the fixed floor; against this store's own calibration nothing stands out."""
    code, found = recall(chat, question)
    assert (code, picked(found)) == (2, [])


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What did Nadia paint in September?", "nadia-paints-varna-sea"),
        ("What did Owen run last October?", "owen-half-result"),
    ],
)
def test_a_month_in_the_question_picks_that_months_chat(chat: Path, question: str, first: str) -> None:
    """A dozen paintings, a dozen runs: the chat's date in each observation tells them apart
    (the dated search goes deeper, and the second hop keeps that depth)."""
    _, found = recall(chat, question, "--at", "2026-01-31")
    assert picked(found)[0] == first


def test_the_calibration_is_kept_and_made_again_when_the_index_changes(
    chat: Path, tmp_path: Path, user_cache: Path
) -> None:
    store = embedded(chat_store(tmp_path / "copy"), user_cache)
    recall(store, "Which gym does Owen go to?")
    first = _kept(store)
    assert first["margin"] > 0.2 and len(first["centroid"]) == 384
    recall(store, "Which subject does Owen teach?")
    assert _kept(store)["stamp"] == first["stamp"]  # nothing changed: read back, not made again
    (store / "owen-gym.md").write_text(
        "---\nname: owen gym\ndescription: Owen joined the Pulse gym on Mill Road\ntype: user\n---\n\n"
        "Owen joined the Pulse gym on Mill Road.\n",
        encoding="utf-8",
    )
    code, found = recall(store, "Which gym does Owen go to?")
    assert _kept(store)["stamp"] != first["stamp"]
    assert (code, picked(found)[:1]) == (0, ["owen-gym"])


def _kept(store: Path) -> dict[str, Any]:
    with sqlite3.connect(store / ".kura" / "search.db") as db:
        (value,) = db.execute("SELECT value FROM kv WHERE key = 'floor'").fetchone()
    kept: dict[str, Any] = json.loads(value)
    return kept


DATED = {
    "nadia-paints-lake": ("2025-03-02", "Nadia painted a lake at sunrise and loved how it came out"),
    "nadia-paints-harbour": (
        "2025-06-14",
        "Nadia finished a small canvas of the fishing boats in the harbour",
    ),
    "nadia-paints-sunflowers": ("2025-08-10", "Nadia painted the sunflowers in her mother's garden"),
    "lena-wedding": ("2025-09-20", "Lena and Marco got married in Sofia, a small wedding in the old town"),
    "nadia-buys-shoes": ("2025-09-06", "Nadia bought new trail running shoes at the outdoor shop"),
    "nadia-buys-bike": ("2025-04-01", "Nadia bought a second-hand road bike from a colleague"),
    "owen-buys-amp": ("2025-11-15", "Owen bought a new bass amplifier for the band"),
}


@pytest.fixture(scope="module")
def dated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dated") / "store"
    root.mkdir()
    for slug, (day, said) in DATED.items():
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug}\ndescription: {said}\ntype: user\ncreated: {day}\n---\n\n{said}.\n",
            encoding="utf-8",
        )
    (root / "MEMORY.md").write_text("".join(f"- [{s}]({s}.md) — {d}\n" for s, (_, d) in DATED.items()))
    return root


@pytest.mark.parametrize(
    ("question", "at", "first"),
    [
        ("What did Nadia paint last June?", "2026-01-10", "nadia-paints-harbour"),
        ("What did Nadia paint in March?", "2026-01-10", "nadia-paints-lake"),
        ("What did Nadia paint in August?", "2026-01-10", "nadia-paints-sunflowers"),
        ("What did Nadia buy two weeks before the wedding?", "2026-01-10", "nadia-buys-shoes"),
        ("What did Nadia paint last month?", "2025-09-02", "nadia-paints-sunflowers"),
        ("What did Nadia paint three months ago?", "2025-09-14", "nadia-paints-harbour"),
    ],
)
def test_a_date_in_the_question_is_read_against_the_memories_dates(
    dated: Path, question: str, at: str, first: str
) -> None:
    """Relative dates resolve against the ``--at`` day; "before the wedding" against the
    wedding's own memory."""
    _, found = recall(dated, question, "--at", at)
    assert picked(found)[0] == first


class Counting:
    """An embedder that counts what it is asked to embed, over the built-in one."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.asked = inner, []  # type: list[str]
        self.model_id = inner.model_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: list[str], progress: Any = None) -> Any:
        self.asked.extend(texts)
        return self.inner.embed(texts, progress)


def test_the_floor_judges_the_question_by_the_vector_the_search_made(chat: Path, tmp_path: Path) -> None:
    """Recall's per-store floor reads the question's vector; it is the one the search just made
    (embedding it again cost a warm recall twice the work), and a question the search did not
    just ask is embedded through the same query side."""
    from kura.recall import floor
    from kura.recall.embed import load_embedder
    from kura.recall.search import SearchIndex
    from kura.store.store import Store

    store = tmp_path / "store"
    shutil.copytree(chat, store, ignore=shutil.ignore_patterns(".kura"))
    built = SearchIndex(Store(store))
    built.update()
    built.close()
    counting = Counting(load_embedder())
    index = SearchIndex(Store(store), embedder=counting)  # type: ignore[arg-type]
    try:
        index.update()
        question = "Which gym does Owen go to?"
        found = index.search(question, k=5)
        index.search("owen gym membership", k=5)  # the second hop searches in between
        asked = len(counting.asked)
        floor.stands_out(index, question, found)
        assert len(counting.asked) == asked, counting.asked[asked:]
        floor.stands_out(index, "What did Nadia paint?", found)
        assert counting.asked[asked:] == ["What did Nadia paint?"]
    finally:
        index.close()
