"""Token estimates count the person's language right (issue 31): a CJK character is about a
token, a letter of another alphabet about half of one, four ASCII characters one. What
trims or cuts by that count — the trigger trimmer, the brain's transcript chunks, the token
tally of a model that reports no usage — counts the same way."""

from __future__ import annotations

from kura.distill.model_steps import chunks
from kura.llm import Usage
from kura.text.tokens import estimate_tokens, quarters
from kura.text.triggers import mechanical
from kura.transcripts.segments import Segment

RUSSIAN = "Производственная база данных резервируется каждую ночь в два часа и хранится тридцать дней."
JAPANESE = "本番データベースのバックアップは毎晩二時に取り、三十日分を保存する。"


def test_each_script_costs_what_a_tokenizer_would_charge_roughly() -> None:
    assert estimate_tokens("make test runs pytest") == 6  # ASCII as before: four characters a token
    assert estimate_tokens(JAPANESE) == len(JAPANESE)  # a CJK character a token, as before
    assert estimate_tokens("kobo-8 で動く") == (len("kobo-8 ") + 3 * 4 + 3) // 4
    assert estimate_tokens(RUSSIAN) == (2 * 78 + 13 + 3) // 4  # 78 Cyrillic letters at half a token
    assert estimate_tokens("déploiement") == 3
    assert quarters("a — é 語") == 1 + 1 + 4 + 1 + 2 + 1 + 4  # a dash or a symbol stays a whole token


def test_a_russian_line_is_trimmed_to_its_words_not_to_one() -> None:
    short = mechanical(RUSSIAN, 20)
    assert estimate_tokens(short) <= 20
    assert short.split()[:3] == ["Производственная", "база", "данных"]
    assert " в " not in f" {short} " and " и " not in f" {short} "  # function words go first


def test_a_japanese_stretch_is_chunked_by_tokens_not_characters() -> None:
    segments = [Segment("USER", f"{n}番目: " + JAPANESE * 4) for n in range(60)]
    pieces = chunks(segments, 1_000)
    longest = max(estimate_tokens(f"#1 [USER] {s.text}") for s in segments)
    assert len(pieces) > 5 and all(estimate_tokens(p) <= 1_000 + longest for p in pieces)
    assert "\n".join(pieces).count("#") == 60


def test_a_model_that_reports_no_usage_is_tallied_by_the_same_estimate() -> None:
    usage = Usage()
    usage.add({}, JAPANESE, RUSSIAN)
    assert (usage.tokens_in, usage.tokens_out, usage.estimated) == (
        estimate_tokens(JAPANESE),
        estimate_tokens(RUSSIAN),
        True,
    )
    assert usage.tokens_in == len(JAPANESE)


def _by_pattern(text: str) -> int:
    """``quarters`` as it was written first: the other alphabets found by a pattern."""
    import re

    narrow = len(text.encode("ascii", "ignore"))
    letters = sum(map(len, re.findall(r"[\u0080-\u1fff]+", text)))
    return narrow + 2 * letters + 4 * (len(text) - narrow - letters)


def test_quarters_counted_on_the_bytes_are_the_quarters_the_pattern_counted() -> None:
    import random

    rng = random.Random(7)
    edges = [
        0x7F,
        0x80,
        0x7FF,
        0x800,
        0x1FFF,
        0x2000,
        0xD7FF,
        0xD800,
        0xDFFF,
        0xE000,
        0xFFFF,
        0x10000,
        0x10FFFF,
    ]
    spans = [
        (0, 0x7F),
        (0x80, 0x7FF),
        (0x800, 0x1FFF),
        (0x2000, 0xD7FF),
        (0xD800, 0xDFFF),
        (0xE000, 0x10FFFF),
    ]
    chars = [chr(c) for c in edges] + [chr(rng.randint(*rng.choice(spans))) for _ in range(20_000)]
    text = "".join(chars)
    assert quarters(text) == _by_pattern(text)  # lone surrogates (U+D800-DFFF) included
    for start in range(0, len(text), 97):
        piece = text[start : start + rng.randint(0, 60)]
        assert quarters(piece) == _by_pattern(piece), repr(piece)
    for line in (RUSSIAN, JAPANESE, "café — naïve ü", "ascii only", ""):
        assert quarters(line) == _by_pattern(line)
