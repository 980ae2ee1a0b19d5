"""The WordPiece tokenizer gives exactly the reference tokenizer's ids.

The expected ids were produced once by the Hugging Face `tokenizers` library from the
model's own tokenizer.json (all-MiniLM-L6-v2); the test needs neither that library nor the
model's package.
"""

from __future__ import annotations

import hashlib

import pytest

from kura.recall.wordpiece import MAX_TOKENS, UNREAD_BUDGET, VOCAB, VOCAB_SHA256, basic_split, minilm

KNOWN = [
    ("Hello, world!", [101, 7592, 1010, 2088, 999, 102]),
    (
        "The archive lives on the slow disk (hdd0, 8 TB); the fast NVMe stays scratch",
        [
            101,
            1996,
            8756,
            3268,
            2006,
            1996,
            4030,
            9785,
            1006,
            10751,
            2094,
            2692,
            1010,
            1022,
            26419,
            1007,
            1025,
            1996,
            3435,
            1050,
            2615,
            4168,
            12237,
            11969,
            102,
        ],
    ),
    ("unaffable", [101, 14477, 20961, 3468, 102]),
    ("SSD inference chips", [101, 7020, 2094, 28937, 11772, 102]),
    (
        "running the 2.6T model off an SSD tier",
        [101, 2770, 1996, 1016, 1012, 1020, 2102, 2944, 2125, 2019, 7020, 2094, 7563, 102],
    ),
    ("Café déjà vu — naïve façade", [101, 7668, 2139, 3900, 24728, 1517, 15743, 8508, 102]),
    (
        "蒸留蔵のアーカイブは遅いディスクに置く。",
        [
            101,
            100,
            100,
            100,
            1671,
            30219,
            30265,
            30226,
            30221,
            30246,
            30198,
            100,
            1647,
            30239,
            30220,
            30233,
            30228,
            30194,
            100,
            1653,
            1636,
            102,
        ],
    ),
    ("emoji ⚠️ 🚀 test", [101, 7861, 29147, 2072, 100, 100, 3231, 102]),
    (
        "pre-release what's new? NOT this",
        [101, 3653, 1011, 2713, 2054, 1005, 1055, 2047, 1029, 2025, 2023, 102],
    ),
    ("tab\tand\nnewline\r\nhere", [101, 21628, 1998, 2047, 4179, 2182, 102]),
    (
        "Mika's hours: 09:00–17:30 (WET/WEST, UTC+0/+1)",
        [
            101,
            27857,
            1005,
            1055,
            2847,
            1024,
            5641,
            1024,
            4002,
            1516,
            2459,
            1024,
            2382,
            1006,
            4954,
            1013,
            2225,
            1010,
            11396,
            1009,
            1014,
            1013,
            1009,
            1015,
            1007,
            102,
        ],
    ),
    ("\u200bzero\u200dwidth", [101, 5717, 9148, 11927, 2232, 102]),
    (
        "Ελληνικά и русский",
        [
            101,
            1159,
            29727,
            29727,
            24824,
            16177,
            18199,
            29726,
            14608,
            1188,
            1195,
            29748,
            29747,
            29747,
            23925,
            15414,
            102,
        ],
    ),
    (
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        [101, 100, 102],
    ),
    ("a\x00b�c", [101, 5925, 102]),
    ("ß Straße İstanbul", [101, 1096, 2358, 27807, 9960, 102]),
    (
        "e-mail @user #tag $5.00 100% a&b",
        [
            101,
            1041,
            1011,
            5653,
            1030,
            5310,
            1001,
            6415,
            1002,
            1019,
            1012,
            4002,
            2531,
            1003,
            1037,
            1004,
            1038,
            102,
        ],
    ),
]


def test_the_vendored_vocabulary_is_the_models() -> None:
    assert hashlib.sha256(VOCAB.read_bytes()).hexdigest() == VOCAB_SHA256
    assert len(minilm().vocab) == 30522


@pytest.mark.parametrize(("text", "ids"), KNOWN)
def test_ids_match_the_reference_tokenizer(text: str, ids: list[int]) -> None:
    assert list(minilm().encode(text, max_tokens=10_000).ids) == ids


def test_sequences_are_cut_at_the_128_tokens_the_model_was_trained_on_with_the_markers_kept() -> None:
    encoding = minilm().encode(" ".join(f"word{i}" for i in range(400)))
    assert len(encoding.ids) == MAX_TOKENS == 128
    assert (encoding.tokens[0], encoding.tokens[-1]) == ("[CLS]", "[SEP]")


def test_basic_split() -> None:
    assert basic_split("Don't PANIC: naïve (really)!") == [
        "don",
        "'",
        "t",
        "panic",
        ":",
        "naive",
        "(",
        "really",
        ")",
        "!",
    ]
    assert minilm().tokenize("unaffable") == ["una", "##ffa", "##ble"]


@pytest.mark.parametrize(("text", "ids"), [(text, ids) for text, ids in KNOWN if 100 not in ids])
def test_the_embedder_reads_every_piece_of_a_text_with_no_unknown_piece(text: str, ids: list[int]) -> None:
    assert list(minilm().readable(text).ids) == ids


def test_unknown_pieces_and_japanese_past_the_budget_are_not_read() -> None:
    text = "蒸留蔵のアーカイブは遅いディスクに置く。 nightly backup to hetzner " * 4
    read = minilm().readable(text).tokens
    every = minilm().encode(text, max_tokens=10_000).tokens
    assert "[UNK]" in every and "[UNK]" not in read
    japanese = [piece for piece in read if "\u3040" <= piece[-1] <= "\u9fff"]
    assert japanese == [piece for piece in every if "\u3040" <= piece[-1] <= "\u9fff"][:UNREAD_BUDGET]
    assert [p for p in read if p.isascii()] == [p for p in every if p.isascii() and p != "[UNK]"]
    assert len(minilm().readable("word " * 400).ids) == MAX_TOKENS  # the cap still holds


MIXED = (
    "The archive lives on the slow disk (hdd0, 8 TB);\tthe fast NVMe stays scratch.\r\n"
    "Café déjà vu — naïve résumé\u00a0ΣΟΦΙΑΣ said 東京の会議は何時ですか? x\x00y\u200bz "
    "a-very-long-hyphenated-word-that-goes-on " + "b" * 150 + " end\n"
)


@pytest.mark.parametrize("start", [0, 1, 7, 4000, 4090])
def test_a_long_text_read_a_window_at_a_time_gives_the_pieces_of_the_whole(start: int) -> None:
    """Windows are cut only where a word ends, wherever that falls: the pieces are those of
    the whole text split at once, and the first 128 the same."""
    text = "x" * start + " " + MIXED * 400
    tok = minilm()
    whole = [piece for word in basic_split(text) for piece in tok._word(word)]
    assert tok.tokenize(text) == whole
    assert tok.encode(text).tokens[1:-1] == tuple(whole[: MAX_TOKENS - 2])


def test_a_question_far_past_128_pieces_is_read_only_as_far_as_they_go() -> None:
    """A 10 MB question (a pasted log) was split and cut into pieces whole — every word
    listed, for 126 pieces kept — which for 105 KB took most of a recall's time; now it is
    read a window at a time, so what it costs does not grow with what the embedder never
    reads. Measured as the memory the tokenizer takes (deterministic), not as time."""
    import tracemalloc

    tok = minilm()
    question = "when does the nightly backup run on the storage box " * 200_000
    short = tok.readable(question[:2_000])
    tracemalloc.start()
    try:
        read = tok.readable(question)
        encoded = tok.encode(question)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == short and encoded.ids == read.ids
    assert peak < 1 << 20, peak  # a window's words, not the 2,000,000 of the whole question
