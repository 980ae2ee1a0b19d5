"""The trimmer's quicker loop keeps the words its first version kept: ``reference`` below
is that version, word for word, and both trim the same lines to the same triggers — plain
ASCII lines (the quick way), and lines with code spans, links, CJK, accents, arrows and
landmines (the way that must be declined to the careful word split)."""

from __future__ import annotations

import random

import pytest

from kura.text import triggers
from kura.text.tokens import estimate_tokens, quarters


def reference(line: str, budget: int) -> str:
    text = " ".join(line.split())
    if estimate_tokens(text) <= budget or not text:
        return text
    words, glued = triggers._units(text)  # the units are not what is compared here
    conclusion = _conclusion_start(words)
    scores = [
        triggers._score(word, words[i - 1] if i else None, i >= conclusion) for i, word in enumerate(words)
    ]
    keep: set[int] = set()
    used = 0
    floor = 0
    run = False  # the tier stops at once at a piece of a CJK run that does not fit
    for i in sorted(range(len(words)), key=lambda i: (-scores[i], i)):
        if scores[i] < max(floor, 2) + run:
            break
        cost = quarters(words[i]) + (1 if keep else 0)
        if scores[i] >= 100 or (used + cost + 3) // 4 <= budget:
            keep.add(i)
            used += cost
        elif not floor:
            floor = scores[i]
            run = i in glued or i + 1 in glued
    return triggers._join(words, keep or {0}, glued) or text


def _conclusion_start(words: list[str]) -> int:
    ends = [
        i + 1
        for i, word in enumerate(words[:-1])
        if triggers._CLAUSE.search(word + " ") or word in ("—", "–", "→")
    ]
    return ends[-1] if ends else len(words)


CRAFTED = [
    "", "one", "the of and to a", "make test runs pytest", "⚠️ never run migrations on Friday without a backup; it broke prod twice",
    "Deploy `docker compose up -d` on hetzner-2 (8 TB NVMe) — then check [the runbook](runbook.md) → done",
    "Mika said: the staging DB is postgres 16.2, not 15; use `uv run pytest -x` and never `pip install`",
    "東京のサーバーは毎晩バックアップされる。復元手順はランブックにある、確認すること。" * 2,
    "café résumé naïve façade — Zoë’s coöperative smörgåsbord → Ångström units: 5 Å",
    "a; b; c; d; e; f; g; h; i; j; k; l; m; n; o; p; q; r; s; t; u; v; w; x; y; z",
    "Keep   spaces\tand\nnewlines  normalised ; then → conclude => finally: done",
    "ticket ABC-1234 routes via webhook /api/v2/hooks?x=1 @oncall #incident 3 min SLA",
    "`unclosed code span and [a link](x.md without close plus — dash – en dash",
    "(((nested))) [[wiki]] {braces} ``double`` ~~strike~~ **bold** _under_",
    "Sam pytest migration on port 8003 uses flaky (33 GB) because restore webhook caddy; lockfile stays staging",
]  # fmt: skip


@pytest.mark.parametrize("budget", [1, 4, 8, 16, 24, 40])
@pytest.mark.parametrize("line", CRAFTED)
def test_crafted_lines_trim_as_before(line: str, budget: int) -> None:
    assert triggers.mechanical(line, budget) == reference(line, budget)


WORDS = ("deploy staging postgres redis caddy hetzner migration rollback incident runbook oncall "
         "pytest flaky fixture coverage the of and to never not no ⚠️ — → ; : , 8 TB 3.5 GB "
         "Mika Tomasz `make x` [doc](d.md) café 東京の ABC-123 /srv/x a.b v2").split(" ")  # fmt: skip


def test_random_lines_trim_as_before() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))
        budget = rng.choice([2, 6, 12, 24, 32])
        assert triggers.mechanical(line, budget) == reference(line, budget), (line, budget)
