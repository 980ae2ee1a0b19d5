"""A memory's first sentences (``kura.recall.sentences``): each embedded on its own, lifting
the memory's cosine towards the best of them. Real stores, the real model, a real ``kura
index`` process, the real search database."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kura.recall import headline, sentences
from kura.recall.embed import MODEL_ID, Unavailable, load_embedder
from kura.recall.search import SearchIndex
from kura.store.store import Store

TILL = """The till is SumUp POS on the counter iPad, with a SumUp Solo card reader. At close, run the
Z-report and count the cash drawer against it; differences over £5 go in the notebook.

**Why:** Tomas reconciles daily takings against the bank each Monday.
**How to apply:** If the reader won't connect, restart the iPad first, then the reader.

Related: [[guest-wifi]], [[priya-counter]]
"""


def said(store: Path) -> dict[str, bytes]:
    """The sentence vectors the store's search database holds, by slug (empty rows too)."""
    with sqlite3.connect(store / ".kura" / "search.db") as db:
        rows = db.execute(
            "SELECT docs.slug, vectors.vec FROM docs JOIN vectors ON vectors.sha = docs.sha WHERE vectors.model = ?",
            (headline.key(MODEL_ID, headline.SENTENCES),),
        ).fetchall()
    return dict(rows)


def test_the_sentences_of_a_body_leave_out_labels_links_and_what_the_description_says() -> None:
    description = "The till is SumUp POS on the counter iPad, with a SumUp Solo card reader"
    assert sentences.of(TILL, description) == [  # the first said by the description; a wrapped line joined
        "At close, run the Z-report and count the cash drawer against it; differences over £5 go in the notebook.",
        "Tomas reconciles daily takings against the bank each Monday.",
        "If the reader won't connect, restart the iPad first, then the reader.",
    ]
    first = sentences.of(TILL)  # no description: the first three of the four
    assert first[0].startswith("The till is SumUp POS") and len(first) == sentences.FIRST
    assert not any("Related" in piece or "Why" in piece or "**" in piece for piece in first)


def test_a_body_of_few_sentences_has_none_of_its_own() -> None:
    """Two sentences beyond the description (distill-kura's shape: the description, its Why
    and How to apply), a chat's one observation, a list of links: no sentence vectors."""
    distill = "Deploys go through the release branch.\n\n**Why:** It keeps main green.\n**How to apply:** Tag it first."
    assert sentences.of(distill, "Deploys go through the release branch") == []
    assert sentences.of("Caroline went to the LGBTQ support group on 7 May 2023.") == []
    assert sentences.of("Related: [[a]], [[b]]\n- [[c]]\nSee also: [[d]] and [[e]]") == []


def test_sentences_are_cut_where_a_reader_would_cut_them() -> None:
    """Not after "e.g." before a small letter; at a line break and a list item; after a
    full-width stop in Japanese, where no space follows; a long one is cut short."""
    body = "Use the blue tape, e.g. the wide\none from the van.\n- Label every tray by noon.\n- Check the fridge log twice."
    assert sentences.of(body) == [
        "Use the blue tape, e.g. the wide one from the van.",
        "Label every tray by noon.",
        "Check the fridge log twice.",
    ]
    japanese = "本番環境はkobo-8で動いている。デプロイは金曜日にしない。ロールバックは五分以内に行う。"
    assert sentences.of(japanese) == [
        "本番環境はkobo-8で動いている。",
        "デプロイは金曜日にしない。",
        "ロールバックは五分以内に行う。",
    ]
    long = " ".join(["word"] * 300) + ". Second one here now. Third one here now."
    assert 0 < len(sentences.of(long)[0]) <= 4 * sentences.TOKENS + 1


def test_lines_that_only_link_are_no_sentence_in_any_form_people_write() -> None:
    """A footer of links is a list of other memories' names: counted as a sentence, it gave a
    memory of two sentences vectors (``LEAST``), one of them its neighbours' slugs."""
    two = "The oven is lit at five. It takes forty minutes to heat.\n"
    for footer in (
        "Related: [[oven-temp]], [[proof-time]].",
        "See [[oven-temp]] / [[proof-time]]",
        "関連: [[oven-temp]]、[[proof-time]]",
        "See also: [Oven](https://example.org/oven), [Proof](proof.md)",
        "Related memories for this topic: [[oven-temp]], [[proof-time]]",
        "- [[oven-temp]]\n- [[proof-time|the proofing times]]",
    ):
        assert sentences.of(two + footer) == [], footer
    linked = two + "The [[deploy-script|deploy script]] and [the van](van.md) wait for it."
    assert sentences.of(linked)[2] == "The deploy script and the van wait for it."


def test_labels_code_tables_and_comments_are_left_out() -> None:
    body = (
        "**Why**: the oven cracks when cold.\n- **Why:** we said so on Monday.\n"
        "*How to apply:* ask Nell first.\n**決定：** 金曜日はデプロイしない。\n"
    )
    assert sentences.of(body) == ["the oven cracks when cold.", "we said so on Monday.", "ask Nell first."]
    noise = (
        "Deploy with the script below.\n\n```bash\nmake deploy ENV=prod now\n```\n\n| Item | Price | Unit |\n"
        "|---|---|---|\n\n<!-- a note for later, not a sentence -->Rules apply to everyone.\n\n---\n"
        "# Oven rules for the morning shift\nThe oven must be hot first."
    )
    assert sentences.of(noise) == [
        "Deploy with the script below.",
        "Rules apply to everyone.",
        "Oven rules for the morning shift",
    ]


def test_a_sentence_may_open_with_any_capital_a_digit_or_a_quote() -> None:
    """Cut before anything but a small letter: Cyrillic, Greek and Polish capitals outside
    the ranges a pattern would list, digits, quotes; and in scripts with no capitals."""
    assert len(sentences.of("Ёлка стоит в углу. Її поставили вчора. Όλα καλά εδώ πάντα.")) == 3
    assert (
        len(sentences.of("Ścieżka jest długa tutaj. İstanbul çok güzel şehir. Łódź leży daleko stąd.")) == 3
    )
    assert (
        len(
            sentences.of(
                "2024 was a good year. “Never deploy on Friday,” she said. He said “stop.” Then left."
            )
        )
        == 3
    )
    assert (
        len(sentences.of("서버는 매일 밤 재시작된다. 백업은 새벽 세시에 돈다. 로그는 일주일 보관한다.")) == 3
    )
    assert sentences.of("Use flour, e.g. the strong one. Bake it well now. Cool it on racks.")[0] == (
        "Use flour, e.g. the strong one."
    )


def test_a_question_that_one_sentence_answers_finds_that_memory_first(bakery: Path) -> None:
    """The insurance memory says its insurer, sums, policy and renewal, and in one sentence
    that a customer's injury claim could close the business; the car memory says its MOT in
    one of four. By
    their whole vectors a memory that shares the question's setting came first (the tenancy
    deposit, the bakery's van); by the one sentence that answers, the memory meant."""
    index = SearchIndex(Store(bakery))
    try:
        index.update()
        for question, meant in (
            ("If someone slips on our shop floor and sues, are we protected?", "business-insurance"),
            ("When must our station wagon pass its yearly roadworthiness test?", "family-car-skoda"),
        ):
            hits = index.search(question, k=5).hits
            assert hits[0].slug == meant, [(h.slug, h.score) for h in hits]
            assert hits[0].meant is not None and hits[0].cosine is not None and hits[0].meant > hits[0].cosine
    finally:
        index.close()


def test_each_memory_of_many_sentences_keeps_its_first_three_under_their_own_key(bakery: Path) -> None:
    store = Store(bakery)
    found = said(bakery)
    assert set(found) == set(store.slugs())  # a row for each: empty where a memory needs none
    index = SearchIndex(store)
    try:
        name, description, body = index.db.execute(
            "SELECT name, description, body FROM docs_fts JOIN docs ON docs.fts = docs_fts.rowid WHERE docs.slug = ?",
            ("till-system",),
        ).fetchone()
        assert name == "Till and card payments"
        pieces = sentences.of(body, description)
        kept = (
            np.frombuffer(found["till-system"], dtype=np.float16).astype(np.float32).reshape(len(pieces), -1)
        )
        made = index.embedder.embed(pieces)
        assert [float(a @ b) for a, b in zip(kept, made, strict=True)] == pytest.approx(
            [1.0] * len(pieces), abs=2e-3
        )
        assert index.status()["sentences"] == sum(1 for blob in found.values() if blob)
    finally:
        index.close()


def test_an_index_made_before_sentences_gets_them_from_kura_index_which_says_so(
    bakery: Path, tmp_path: Path
) -> None:
    """An older kura's index: every memory's vector and headline, marked complete the old way.
    ``kura index`` makes the sentence vectors without embedding a memory again, says so and
    exits 0; again, nothing to do, exit 2."""
    older = tmp_path / "older"
    shutil.copytree(bakery, older)
    with sqlite3.connect(older / ".kura" / "search.db") as db:
        db.execute("DELETE FROM vectors WHERE model = ?", (headline.key(MODEL_ID, headline.SENTENCES),))
        db.execute("UPDATE kv SET value = (SELECT value FROM kv WHERE key = 'stamp') || ':' || ? "
                   "WHERE key = 'filled'", (headline.key(MODEL_ID),))  # fmt: skip
    assert said(older) == {}
    many = sum(1 for blob in said(bakery).values() if blob)
    done = subprocess.run([sys.executable, "-m", "kura", "-s", str(older), "index"], capture_output=True, text=True,
                          check=False, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"0 embedded, sentence vectors for {many} memories (first sentences on their own);" in done.stdout
    assert said(older) == said(bakery)
    again = subprocess.run([sys.executable, "-m", "kura", "-s", str(older), "index"], capture_output=True, text=True,
                           check=False, timeout=600)  # fmt: skip
    assert again.returncode == 2 and again.stdout.startswith("unchanged:"), again.stdout


def test_planted_sentence_rows_of_the_wrong_size_are_not_read(bakery: Path, tmp_path: Path) -> None:
    """The state folder may come from someone else's clone: a row that is not whole vectors,
    or more of them than a memory is given, is left alone, and one of NaN and infinity
    lifts nothing: the question is answered as if those memories had none."""
    planted = tmp_path / "planted"
    shutil.copytree(bakery, planted)
    question = "If someone slips on our shop floor and sues, are we protected?"
    key = headline.key(MODEL_ID, headline.SENTENCES)
    with sqlite3.connect(planted / ".kura" / "search.db") as db:
        (sha,) = db.execute("SELECT sha FROM docs WHERE slug = 'business-insurance'").fetchone()
        (other,) = db.execute("SELECT sha FROM docs WHERE slug = 'tenancy-deposit'").fetchone()
        near = load_embedder().embed([question]).astype(np.float16)  # type: ignore[union-attr]
        db.execute("UPDATE vectors SET vec = ? WHERE sha = ? AND model = ?", (near.tobytes()[:-2], sha, key))
        crowd = np.repeat(near, sentences.FIRST + 1, axis=0).tobytes()
        db.execute("UPDATE vectors SET vec = ? WHERE sha = ? AND model = ?", (crowd, other, key))
        (third,) = db.execute("SELECT sha FROM docs WHERE slug = 'gas-safety-certificate'").fetchone()
        odd = np.full((2, near.shape[1]), np.nan, dtype=np.float16)
        odd[1] = np.inf
        db.execute("UPDATE vectors SET vec = ? WHERE sha = ? AND model = ?", (odd.tobytes(), third, key))
    index = SearchIndex(Store(planted))
    try:
        hits = {hit.slug: hit for hit in index.search(question, k=10).hits}
    finally:
        index.close()
    for slug in ("business-insurance", "tenancy-deposit", "gas-safety-certificate"):  # none lifted
        assert hits[slug].meant == pytest.approx(hits[slug].cosine, abs=1e-6)


def test_the_lift_goes_towards_the_best_sentence_after_the_headline(tmp_path: Path) -> None:
    """Real SQLite rows: a memory's cosine is lifted towards its headline's, then by
    ``sentences.LIFT`` of the way to its best sentence's; a sentence farther than the cosine
    leaves it; the floor's cosine (the first array) has no sentence in it."""
    db = sqlite3.connect(tmp_path / "x.db")
    db.executescript(
        "CREATE TABLE docs (slug TEXT PRIMARY KEY, sha TEXT, fts INTEGER);"
        "CREATE TABLE vectors (sha TEXT, model TEXT, vec BLOB, PRIMARY KEY (sha, model));"
    )
    rows = {  # slug: (headline, sentences)
        "both": ([[1.0, 0.0]], [[0.0, 1.0], [0.6, 0.8]]),
        "said": (None, [[1.0, 0.0], [0.0, 1.0]]),
        "far": (None, [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]),
    }
    for i, (slug, (head, pieces)) in enumerate(rows.items()):
        db.execute("INSERT INTO docs VALUES (?, ?, ?)", (slug, f"sha{i}", i))
        if head is not None:
            blob = np.asarray(head, dtype=np.float16).tobytes()
            db.execute("INSERT INTO vectors VALUES (?, ?, ?)", (f"sha{i}", headline.key("m"), blob))
        blob = np.asarray(pieces, dtype=np.float16).tobytes()
        db.execute(
            "INSERT INTO vectors VALUES (?, ?, ?)", (f"sha{i}", headline.key("m", headline.SENTENCES), blob)
        )
    question = np.asarray([[1.0, 0.0]], dtype=np.float32)
    both = np.asarray([[0.2], [0.3], [0.5]], dtype=np.float32)
    headed, whole = headline.lift(db, "m", list(rows), both, question)
    first = 0.2 + headline.LIFT * 0.8
    assert headed[:, 0].tolist() == pytest.approx([first, 0.3, 0.5])
    assert whole[:, 0].tolist() == pytest.approx(
        [first + sentences.LIFT * (0.6 - first), 0.3 + sentences.LIFT * 0.7, 0.5], abs=1e-3
    )


def test_a_crafted_body_of_blank_lines_or_brackets_is_indexed_at_once(tmp_path: Path) -> None:
    """A memory file may come from someone else's repository: one of 64k blank lines took
    24 s to cut into sentences (a pattern that let ``\\s*`` run across lines at every line
    start), one of 32k "[[" 38 s (a link's text searched to the line's end from each), so
    six of them held a real ``kura index`` for minutes."""
    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path / "notes"
    root.mkdir()
    for i, filler in enumerate(("\n", " \n", "\t\n", "[[", "[a](", "**a:** \n")):
        body = f"Note {i} says one thing. It says a second thing. And a third one too.\n" + filler * 65_536
        (root / f"n{i}.md").write_text(
            f"---\nname: n{i}\ndescription: note {i}\ntype: project\n---\n\n{body}"
        )
    done = subprocess.run([sys.executable, "-m", "kura", "-s", str(root), "index"], capture_output=True, text=True,
                          check=False, timeout=90)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([blob for blob in said(root).values() if blob]) == 6  # their three sentences, each


def test_a_planted_row_of_text_is_not_read_as_vectors(bakery: Path, tmp_path: Path) -> None:
    """SQLite keeps what it is given: a headline or sentence row holding text whose length in
    characters is a vector's in bytes passed the length checks and crashed every search that
    had its memory among the 64 best (``b"".join`` of a str)."""
    planted = tmp_path / "planted"
    shutil.copytree(bakery, planted)
    question = "If someone slips on our shop floor and sues, are we protected?"
    with sqlite3.connect(planted / ".kura" / "search.db") as db:
        (sha,) = db.execute("SELECT sha FROM docs WHERE slug = 'business-insurance'").fetchone()
        width = 2 * len(load_embedder().embed(["x"])[0])  # type: ignore[union-attr]
        for key in (headline.key(MODEL_ID), headline.key(MODEL_ID, headline.SENTENCES)):
            db.execute("UPDATE vectors SET vec = ? WHERE sha = ? AND model = ?", ("x" * width, sha, key))
    index = SearchIndex(Store(planted))
    try:
        hits = {hit.slug: hit for hit in index.search(question, k=10).hits}
    finally:
        index.close()
    assert "business-insurance" in hits  # found by its own vector, lifted by neither
