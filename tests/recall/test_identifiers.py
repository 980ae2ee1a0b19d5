"""An identifier in a question is one word, and the memories naming it are evidence
whatever the meaning says (kura.recall.identifiers): the reader, the join, the lift, and
real ``kura recall`` processes on a small store of its own: incidents, regions, flags and
profiles. Before, "What happened in INC-318?" picked every incident (the others share "INC"
and its meaning), a question naming a region was refused (its one memory is far from it in
meaning), and a flag's name led to a memory that only mentions the flow, not where flags
are configured."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_converse import embedded, recall

from kura.recall import fusion, identifiers

MEMORIES = {
    "inc-302-cert-expiry": (
        "INC-302 expired certificate",
        "INC-302 (2026-02-03): the wildcard TLS certificate expired and the API returned errors for 40 minutes",
        "The wildcard certificate was renewed by hand; renewals are now automated with cert-manager.",
    ),
    "inc-318-queue-backlog": (
        "INC-318 queue backlog",
        "INC-318 (2026-03-11): a stuck consumer let the invoice queue grow to 90,000 messages",
        "A consumer deadlocked on a database lock. We added an alert on queue depth and a consumer watchdog.",
    ),
    "inc-325-login-outage": (
        "INC-325 login outage",
        "INC-325 (2026-04-20): logins failed for an hour after an identity provider change",
        "An expired client secret at the identity provider blocked every login until it was rotated.",
    ),
    "invoice-worker": (
        "Invoice worker",
        "The invoice worker consumes the invoice queue and renders PDFs",
        "It runs as three replicas. Since [[inc-318-queue-backlog]] it has a watchdog.",
    ),
    "queue-alerts": (
        "Queue alerts",
        "Queue depth alerts page the on-call engineer above 5,000 messages",
        "Thresholds were set after [[inc-318-queue-backlog]].",
    ),
    "customer-lindqvist": (
        "Lindqvist Logistics",
        "Lindqvist Logistics is our largest customer; their tenant runs in europe-north1 for data residency",
        "They signed a three-year contract. Their account owner is Maja.",
    ),
    "customer-oakridge": (
        "Oakridge Health",
        "Oakridge Health needs audit logs kept for seven years",
        "They asked for quarterly access reviews. Their account owner is Tom.",
    ),
    "flags-service": (
        "Feature flags",
        "Flags live in the flag service; names take the team prefix, like billing.dunning_v2",
        "Every flag has an owner and a removal date.",
    ),
    "dunning-emails": (
        "Dunning emails",
        "Failed card payments trigger three reminder emails over ten days before an account is paused",
        "The reminder copy was rewritten in March; the new dunning_v2 flow sends the first email sooner.",
    ),
    "deploy-pipeline": (
        "Deploy pipeline",
        "Merges to main build an image and deploy to production through the pipeline within ten minutes",
        "Rollbacks redeploy the previous image tag.",
    ),
}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What happened in INC-318?", ["inc-318"]),
        ("Who is hosted in europe-north1?", ["europe-north1"]),
        ("Where is billing.dunning_v2 configured?", ["billing.dunning_v2"]),
        ("Do we run k8s or ec2 for it?", ["k8s", "ec2"]),
        ("What is in apps/api/values.yaml?", ["apps/api/values.yaml"]),
        ("What do I need --profile tally-payments for?", ["tally-payments"]),  # after an option: a name
        ("What is `drop-offs`?", ["drop-offs"]),  # quoted: a name
        ("In what order are the drop-offs done?", []),  # a hyphen alone joins English words
        ("How fast was the 10k at 3pm on the 5th?", []),  # amounts, times, ordinals
        ("Is Python 3.11 newer than 3.12? At 12:30?", []),  # numbers
    ],
)
def test_what_is_written_as_an_identifier(question: str, expected: list[str]) -> None:
    assert identifiers.found(question) == expected


def _lookup(table: dict[str, list[int]]) -> identifiers.Lookup:
    return lambda queries: [np.asarray(table.get(query, []), dtype=np.int64) for query in queries]


def test_an_identifier_some_memory_names_stands_for_its_parts() -> None:
    words, rows = ["happened", "inc", "318"], [np.array([]), np.array([1, 2, 3]), np.array([2, 4, 5])]
    table = {'"inc-318"': [2, 4, 5], identifiers.NAMED + '"inc-318"': [2]}
    said = identifiers.join("What happened in INC-318?", words, rows, _lookup(table), 10)
    assert said.words == ["happened", "inc-318"]
    assert said.rows[1].tolist() == [2]  # the memory naming it in its headline, not the two linking to it
    assert said.exact == [False, True]


def test_a_part_also_asked_on_its_own_stays_and_an_unknown_id_changes_nothing() -> None:
    words, rows = ["inc", "318", "incidents"], [np.array([1, 2]), np.array([2]), np.array([7])]
    said = identifiers.join("INC-318 and other inc incidents?", words, rows, _lookup({'"inc-318"': [2]}), 10)
    assert said.words == ["inc", "incidents", "inc-318"] and said.exact == [False, False, True]
    unknown = identifiers.join("What happened in INC-999?", words, rows, _lookup({}), 10)
    assert unknown.words == words and unknown.exact == [False, False, False]


def test_a_memory_naming_the_id_rises_however_far_its_meaning() -> None:
    dense = np.array([0.40, 0.15, 0.30], dtype=np.float32)  # the id's memory is far in meaning
    holders = [np.array([1])]
    plain = fusion.fuse(dense, dense, holders)
    exact = fusion.fuse(dense, dense, holders, exact=[True])
    assert int(np.argmax(plain)) == 0  # as an ordinary rare word, the low cosine holds it back
    assert int(np.argmax(exact)) == 1


def written(root: Path, memories: dict[str, tuple[str, str, str]], kind: str, cache: Path) -> Path:
    """A store at ``root`` of ``memories`` (slug: name, description, body) of type ``kind``,
    with its index and every vector made (``test_converse.embedded``)."""
    root.mkdir()
    lines = []
    for slug, (name, description, body) in memories.items():
        text = f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"
        (root / f"{slug}.md").write_text(text, encoding="utf-8")
        lines.append(f"- [{name}]({slug}.md) — {description}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return embedded(root, cache)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    return written(tmp_path_factory.mktemp("identifiers") / "store", MEMORIES, "project", user_cache)


@pytest.mark.parametrize(
    ("question", "picked"),
    [
        ("What happened in INC-318?", ["inc-318-queue-backlog"]),  # before: all three incidents
        ("Who is hosted in europe-north1?", ["customer-lindqvist"]),  # before: refused
        ("Where is billing.dunning_v2 configured?", ["flags-service", "dunning-emails"]),  # before: reversed
    ],
)
def test_the_memory_naming_the_id_is_recalled_first(store: Path, question: str, picked: list[str]) -> None:
    code, found = recall(store, question, "--explain")
    assert code == 0, found
    assert found["explain"][0]["slug"] == picked[0], found["explain"][:3]
    assert [p["slug"] for p in found["picked"]] == picked


def test_a_pasted_log_of_hyphenated_words_costs_one_pass() -> None:
    """Each hyphenated word was checked for an option before it by reading the question from
    its start: 20,000 of them took 14 s, 40,000 took 58. A real process given 80,000 has a minute,
    and a log of ids stops at ``MOST``."""
    import subprocess
    import sys

    code = (
        "from kura.recall import identifiers as i\n"
        "print(len(i.found(' '.join(['ab-cd'] * 80_000))), len(i.found(' '.join(f'x{n}-y' for n in range(80_000)))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout.split()) == (0, ["0", str(identifiers.MOST)]), done.stderr


def _store(root: Path, cache: Path, extra: dict[str, tuple[str, str, str]]) -> Path:
    """A store of ``MEMORIES`` and ``extra``, every memory embedded."""
    return written(root, {**MEMORIES, **extra}, "project", cache)


LAPTOP = {
    "onboarding-laptop": (
        "Onboarding laptop",
        "New engineers get a MacBook with the dev tools preinstalled, e.g. Docker and the CLI",
        "Setup takes a day; the checklist is in the wiki.",
    )
}


@pytest.mark.parametrize("abbreviation", ["e.g.", "i.e.", "a.m.", "U.S.", "A/B"])
def test_an_abbreviation_of_single_letters_is_no_identifier(abbreviation: str) -> None:
    assert identifiers.found(f"Which ones, {abbreviation} the first?") == []


def test_an_e_g_in_the_question_does_not_answer_it(tmp_path: Path, user_cache: Path) -> None:
    """ "e.g." read as the identifier e.g: the one memory writing "e.g." was named by the
    question, so it bore on it (cosine 0.04) and an unrelated question was answered with it."""
    store = _store(tmp_path / "store", user_cache, LAPTOP)
    code, found = recall(store, "What is a good sourdough starter, e.g. rye or wheat?")
    assert (code, found["picked"]) == (2, []), found["picked"]
    code, found = recall(store, "How are certificates renewed now, e.g. by hand?")
    assert [p["slug"] for p in found["picked"]] == ["inc-302-cert-expiry"]


VERSIONED = {  # "v2" in 7 of 15 memories: two in their headline, five in their prose
    "api-gateway": (
        "API gateway",
        "The API gateway routes public traffic; v2 routes need a bearer header",
        "It runs on two nodes behind the load balancer.",
    ),
    "search-service": (
        "Search service",
        "The search service indexes invoices and customers every night",
        "Since March it accepts v2 tokens only; older tokens are rejected with a 401.",
    ),
    "mobile-app": (
        "Mobile app",
        "The mobile app is built with React Native and ships every two weeks",
        "It moved to v2 of the design system in May.",
    ),
    "python-sdk": (
        "Python SDK",
        "The Python SDK wraps the public API for customers",
        "The SDK v2 dropped Python 3.8 support.",
    ),
    "webhooks": (
        "Webhooks",
        "Webhooks notify customers of invoice events",
        "Payloads are v2 since January; retries back off for a day.",
    ),
}


def test_an_id_half_the_store_holds_is_a_common_word(tmp_path: Path, user_cache: Path) -> None:
    """ "v2" is held by 7 of 15 memories, named in the headline of two: those two were its only
    holders, rare there, so they rose whatever their meaning and bore on any question saying
    "v2": the gateway came first for the webhooks' payloads, and a question about pizza was
    answered with the gateway and the flags."""
    store = _store(tmp_path / "store", user_cache, VERSIONED)
    code, found = recall(store, "When did payloads become v2?", "--explain")
    assert found["explain"][0]["slug"] == "webhooks", found["explain"][:3]
    code, found = recall(store, "What is our favourite pizza in v2?")
    assert (code, found["picked"]) == (2, []), found["picked"]
    code, found = recall(store, "What happened in INC-318?")  # a rare id in the same store still counts
    assert [p["slug"] for p in found["picked"]] == ["inc-318-queue-backlog"]


TOPICS = (
    "her cat being ill", "his new bike", "a gallery opening", "a leak in the kitchen", "a pottery class",
    "his band's first gig", "a job interview", "running a half marathon", "a painting of the harbour",
    "a landlord raising the rent", "a trip to Lisbon", "selling two paintings", "learning Portuguese",
    "a new flat", "a recipe for soup", "a broken phone screen", "a book about whales", "a dentist visit",
    "a birthday party", "a film about spies", "the garden's tomatoes", "a chess tournament",
    "a noisy neighbour", "a yoga class", "a new coffee machine", "the train strike", "a lost wallet",
    "a wedding invitation", "a camping weekend", "a board game night",
)  # fmt: skip


def _chats() -> dict[str, tuple[str, str, str]]:
    """Twenty chats a fortnight apart, three things said in each, every one dated in its prose."""
    import datetime as dt

    out = {}
    for at in range(20):
        day = (dt.date(2025, 10, 31) + dt.timedelta(days=14 * at)).isoformat()  # the 6th: 2026-01-09
        for n in range(3):
            who, what = ("Nadia", "Owen")[n % 2], TOPICS[(at * 3 + n) % len(TOPICS)]
            said = f"In the chat of {day}, {who} talked about {what}"
            out[f"chat-{day}-{n}"] = (f"{who} on {what}", said, f"{said}.")
    return out


def test_an_iso_date_is_a_date_not_an_identifier(tmp_path: Path, user_cache: Path) -> None:
    """ "2026-01-09" read as an identifier: the three memories of that day's chat named it,
    so they led and bore on any question giving the date, whatever it asked (kura.recall.when
    reads a date: it lifts the day's memories a little and leaves the meaning to choose)."""
    chats = _chats()
    assert "chat-2026-01-09-0" in chats and "her cat being ill" in chats["chat-2025-10-31-0"][0]
    store = written(tmp_path / "store", chats, "user", user_cache)
    assert identifiers.found("What did we say on 2026-01-09 or 09/01/2026?") == []
    code, found = recall(store, "What did Nadia say about her cat being ill on 2026-01-09?", "--explain")
    assert found["explain"][0]["slug"] == "chat-2025-10-31-0", found["explain"][:3]
    code, found = recall(store, "Which index fund has the lowest fees as of 2026-01-09?")
    assert (code, found["picked"]) == (2, []), found["picked"]


def test_an_identifier_replaces_its_parts_as_either_reader_splits_them(store: Path) -> None:
    """The index splits billing.dunning_v2 at "_" (dunning, v2), the question's words do not
    (dunning_v2): that word stayed beside the identifier, its tail counted twice, and the
    memories saying "dunning_v2" in their prose lifted by it as an ordinary word."""
    from kura.recall.search import SearchIndex, query_words
    from kura.recall.word_rows import WordRows
    from kura.store.store import Store

    index = SearchIndex(Store(store))
    try:
        question = "Where is billing.dunning_v2 configured?"
        words = query_words(question)
        assert words == ["billing", "dunning_v2", "configured"]
        said = identifiers.join(
            question, words, index.word_rows(words), WordRows(index.db).rows, len(MEMORIES)
        )
    finally:
        index.close()
    assert said.words == ["configured", "billing.dunning_v2"] and said.exact == [False, True]


def test_a_memory_naming_the_id_bears_unless_it_is_far_from_the_question() -> None:
    """Holding the id the question names counts as holding its words: below the floor it
    bears when not far in meaning (``WORDS_FLOOR``), as "Who is hosted in europe-west3?" is
    to its one memory (0.22); an id alone in a memory about nothing asked does not."""
    from kura.recall.recall import FLOOR, WORDS_FLOOR, _bears
    from kura.recall.search import Hit

    assert _bears(Hit("customer", 0.9, WORDS_FLOOR + 0.01, 0.5, named=True), FLOOR)
    assert not _bears(Hit("customer", 0.9, WORDS_FLOOR + 0.01, 0.5), FLOOR)
    assert not _bears(Hit("stray", 0.9, WORDS_FLOOR - 0.15, 0.5, named=True), FLOOR)
