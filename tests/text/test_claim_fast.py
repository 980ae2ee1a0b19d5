"""The quick ways ``claim_match`` reads claims answer what the plain ways answered.

``negated`` is one regular-expression search now, not a list of every run of letters;
``words`` folds through a dict, not an ``lru_cache``; ``_near`` compares two 64-bit lanes
apiece and drops each claim's meeting with itself afterwards. Each is checked here against
the plain definition on crafted text and crafted claim sets (``test_claim_pairs`` pins the
pairs of a big set as well).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict

from kura.text import claim_match
from kura.text.claim_match import CROWD, MAX_CHANGED, _near, negated, words
from kura.text.triggers import STOP_WORDS

NEGATIONS = "not never no don't dont doesn't isn't aren't won't can't cannot without avoid stop".split()
PIECES = [
    *NEGATIONS,
    "nota", "knot", "no'", "'no", "snot", "never-", "stops", "don’t", "NOT", "Never", "K", "İ", "run",
    "tests", "make", "the", "class", "is", "glass", "a.b", "x/y", "port", "8012", "always", "from",
]  # fmt: skip


def plain_negated(text: str) -> bool:
    return not frozenset(NEGATIONS).isdisjoint(re.findall(r"[a-z']+", text.lower().replace("\u2019", "'")))


def plain_words(text: str) -> set[str]:
    out = set()
    for word in re.findall(r"[a-z0-9][a-z0-9_.\-/]*[a-z0-9]|[a-z0-9]", text.lower().replace("\u2019", "'")):
        word = word.rstrip(".")
        if not word or word in STOP_WORDS or word in claim_match._EXTRA_STOP or word in NEGATIONS:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out


def crafted_text(rng: random.Random) -> str:
    text = " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 9)))
    return "".join(c if rng.random() > 0.08 else rng.choice(",.;'’-_/ K\u212a") for c in text)


def test_negated_and_words_answer_as_the_plain_definitions() -> None:
    rng = random.Random(5)
    texts = [crafted_text(rng) for _ in range(20000)] + ["", "'", "no", "no'", "n't", "don’t", "DON'T stop"]
    assert [negated(t) for t in texts] == [plain_negated(t) for t in texts]
    assert [words(t) for t in texts] == [plain_words(t) for t in texts]
    assert all(negated(word) and negated(f"we {word.upper()}, then") for word in NEGATIONS)
    assert all(any(part in word for part in claim_match._NEGATION_PARTS) for word in claim_match._NEGATIONS)
    assert sum(map(negated, texts)) > 5000  # both answers are well represented
    assert sum(not negated(t) for t in texts) > 5000


def test_words_forgets_its_fold_cache_past_its_bound_and_answers_the_same() -> None:
    claim_match._FOLDED.clear()
    for n in range((1 << 16) + 10):
        assert words(f"w{n} things") == {f"w{n}", "thing"}
    assert len(claim_match._FOLDED) < 1 << 16


def plain_near(
    read: list[tuple[set[str], bool]], holding: dict[str, set[int]], rarest: list[list[str]]
) -> tuple[list[int], list[int], list[bool]]:
    """``_near`` as its docstring says, one pair at a time with Python integers."""
    bit = {word: 1 << n % 128 for n, word in enumerate(holding)}
    mask = [sum({bit[w] for w in found}) for found, _ in read]
    could: dict[int, set[int]] = defaultdict(set)
    crowded = [False] * len(read)
    for word in holding:
        for row in range(len(read)):
            if word not in rarest[row] or not 1 < len(holding[word]) <= CROWD or len(read[row][0]) < 2:
                continue
            ok = [
                c for c in holding[word] if c != row and (mask[row] ^ mask[c]).bit_count() <= 2 * MAX_CHANGED
            ]
            if len(ok) > claim_match._FEW:
                crowded[row] = True
            else:
                could[row].update(ok)
    starts, near = [0], []
    for row in range(len(read)):
        near += sorted(could[row])
        starts.append(len(near))
    return starts, near, crowded


def crafted_claims(rng: random.Random, n: int, vocabulary: int) -> dict[str, str]:
    pool = [f"w{k}" for k in range(vocabulary)]
    return {f"k{i:05d}": " ".join(rng.sample(pool, rng.randint(1, min(7, vocabulary)))) for i in range(n)}


def test_near_answers_what_comparing_each_pair_answers() -> None:
    rng = random.Random(11)
    cases = [crafted_claims(rng, n, v) for n, v in ((40, 12), (300, 30), (900, 200), (1500, 25), (2, 3))]
    cases.append(
        {f"k{i:04d}": f"fact {i % 5} port service-{i % 3} w{i % 200}" for i in range(700)}
    )  # crowded
    for claims in cases:
        read, holding, rarest = _args(claims)
        starts, near, crowded = _near(read, holding, rarest)
        assert (starts.tolist(), near.tolist(), crowded.tolist()) == plain_near(read, holding, rarest)
    assert any(plain_near(*_args(cases[-1]))[2])  # the crowded case does crowd


def _args(claims: dict[str, str]) -> tuple[list[tuple[set[str], bool]], dict[str, set[int]], list[list[str]]]:
    read = [(words(claims[key]), negated(claims[key])) for key in sorted(claims)]
    holding: defaultdict[str, set[int]] = defaultdict(set)
    for number, (found, _) in enumerate(read):
        for word in found:
            holding[word].add(number)
    rank = {w: n for n, w in enumerate(sorted(holding, key=lambda w: (len(holding[w]), w)))}
    return read, dict(holding), [sorted(f, key=rank.__getitem__)[: MAX_CHANGED + 2] for f, _ in read]
