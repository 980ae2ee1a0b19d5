"""bench/eval/team, the recall set written blind: it stays what its figures claim it is.

Its paraphrases must share no content word with their memory (else the dense/lexical split
means nothing), every target must be a memory, the store must be healthy for real ``kura
doctor``, and ``bench/recall_quality.py --set team`` must measure it like the bakery set.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
TEAM = BENCH / "eval" / "team"
STOP = set(
    """a about after all am an and any are as at be been before being but by can could did do
    does doing down each for from get gets go had has have having he her here him his how i if
    in into is it its just me more most my no not now of off on one ones only or our out over
    own same she should so some such than that the their them then there these they this those
    through to too under until up us very was we were what whatever when where which while who
    whom why will with would you your every everything anything something""".split()
)


def questions() -> list[dict[str, str | None]]:
    return [json.loads(line) for line in (TEAM / "questions.jsonl").read_text().splitlines() if line]


def stem(word: str) -> str:
    for end in ("ing", "ed", "es", "s", "ly", "er"):
        if len(word) > 4 and word.endswith(end):
            return word[: -len(end)]
    return word


def content(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower().replace("'s", "")) if w not in STOP}


def shared(question: set[str], memory: set[str]) -> set[str]:
    """The question's stems that a memory's stem equals, or begins or ends a longer one
    (formatter ~ format), counted from five letters."""
    return {
        q
        for q in question
        for m in memory
        if q == m or (min(len(q), len(m)) >= 5 and (q.startswith(m) or m.startswith(q)))
    }


def test_every_target_is_a_memory_and_the_kinds_are_as_documented() -> None:
    slugs = {p.stem for p in (TEAM / "store").glob("*.md") if p.name != "MEMORY.md"}
    asked = questions()
    assert len(slugs) == 60
    assert Counter(q["kind"] for q in asked) == {
        "lexical": 40,
        "paraphrase": 65,
        "identifier": 10,
        "unrelated": 25,
    }
    assert all((q["target"] is None) == (q["kind"] == "unrelated") for q in asked)
    assert {q["target"] for q in asked} - {None} <= slugs
    listed = re.findall(r"\]\(([a-z0-9-]+)\.md\)", (TEAM / "store" / "MEMORY.md").read_text())
    assert sorted(listed) == sorted(slugs)


def test_no_paraphrase_shares_a_content_word_with_its_memory() -> None:
    clashes = {}
    for q in questions():
        if q["kind"] == "paraphrase":
            memory = content((TEAM / "store" / f"{q['target']}.md").read_text())
            if found := shared(content(str(q["q"])), memory):
                clashes[q["q"]] = sorted(found)
    assert clashes == {}


def test_the_store_is_healthy_for_kura_doctor(tmp_path: Path) -> None:
    copy = tmp_path / "team"
    copy.mkdir()
    for path in (TEAM / "store").iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(copy), "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_recall_quality_measures_the_team_set_like_the_bakery() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "recall_quality.py"), "--set", "team", "--misses"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    for line in ("60 memories, 140 questions", "identifier questions (10):", "paraphrase questions (65):"):
        assert line in done.stdout
    assert "fused >= max(parts):" in done.stdout
    assert "unrelated refused" in done.stdout and "/25   target >= 17/25" in done.stdout
