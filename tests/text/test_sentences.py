"""Where a sentence ends: never at a dot inside a word (dotted names, versions, URLs), nor
after an abbreviation that always goes on; after one that may end a sentence, only before a
capital. Each piece is a verbatim slice of the text."""

from __future__ import annotations

import pytest

from kura.text.sentences import sentences

CASES = [
    ("We moved the app off Heroku to Fly.io last month.", ["We moved the app off Heroku to Fly.io last month."]),
    ("Bump node.js to v20.11.1 and Python to 3.12. Then rebuild.",
     ["Bump node.js to v20.11.1 and Python to 3.12.", "Then rebuild."]),
    ("The docs are at https://fly.io/docs/apps. Read them.", ["The docs are at https://fly.io/docs/apps.", "Read them."]),
    ("Staging is db-staging.internal on port 5433. Prod is db-main.", ["Staging is db-staging.internal on port 5433.", "Prod is db-main."]),
    ("Use a runner, e.g. make test. Then push.", ["Use a runner, e.g. make test.", "Then push."]),
    ("Pick one, i.e. the faster. It wins.", ["Pick one, i.e. the faster.", "It wins."]),
    ("Ask Dr. Okafor about it. She knows.", ["Ask Dr. Okafor about it.", "She knows."]),
    ("Tabs vs. spaces is settled. Spaces.", ["Tabs vs. spaces is settled.", "Spaces."]),
    ("The backup runs at 3 a.m. every day.", ["The backup runs at 3 a.m. every day."]),
    ("The backup runs at 3 a.m. Then the report goes out.", ["The backup runs at 3 a.m.", "Then the report goes out."]),
    ("Logs, traces, etc. go to Loki. Metrics do not.", ["Logs, traces, etc. go to Loki.", "Metrics do not."]),
    ("We tried it etc. and it failed.", ["We tried it etc. and it failed."]),
    ("1. Install it. 2. Run it.", ["1. Install it.", "2. Run it."]),
    ("Wait... the cache was stale. Clear it!", ["Wait... the cache was stale.", "Clear it!"]),
    ("Really? Yes!", ["Really?", "Yes!"]),
    ('He said "ship it." Then he left.', ['He said "ship it."', "Then he left."]),
    ("first line\nsecond line", ["first line", "second line"]),
    ("覚えておいて。ステージングは kobo-8 で動いている", ["覚えておいて。", "ステージングは kobo-8 で動いている"]),
    ("   ", []),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:30] for c in CASES])
def test_sentences_end_where_a_reader_would_end_them(text: str, expected: list[str]) -> None:
    found = sentences(text)
    assert found == expected
    assert all(piece in text for piece in found)  # verbatim slices
