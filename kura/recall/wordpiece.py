"""WordPiece: the tokenizer all-MiniLM-L6-v2 was trained with, in plain Python.

The dense embedder runs an int8 ONNX export of MiniLM whose package ships no tokenizer,
and pulling in a tokenizer library (or a hub download) for a 30,522-line vocabulary would
cost more than it saves. This is BERT's uncased scheme: clean the text (drop control
characters, unify whitespace), put spaces around CJK ideographs, lower-case and strip
accents, split on whitespace and punctuation, then cut each word greedily into the longest
pieces found in the vocabulary (continuations carry ``##``), a word longer than 100
characters or with no match being ``[UNK]``. Sequences are ``[CLS] … [SEP]``, at most 128
tokens: all-MiniLM-L6-v2 was trained on 128 (sentence-transformers lets it read 256), a
sequence's cost grows with its length, and cutting long memories there moved
bench/recall_quality.py by one question at most. ``tests/recall/test_wordpiece.py`` pins it
to the reference tokenizer's ids.

What the embedder is given is ``readable``: the same pieces, less what the English model
cannot read. An ``[UNK]`` piece is one vector for every unknown character, so it says
nothing about the text; and a script written one piece per character (CJK ideographs, kana,
hangul) runs a mixed Japanese and English memory to the 128 cap, where each piece costs as
much as an English word piece and the model reads little of them — past the first
``UNREAD_BUDGET`` such pieces of a text, they are left out. Measured (bench/index_levers.py,
distill-kura's shape): 121 → 83 pieces a memory, CPU a memory −33 %; the vector-only MRR
of bench/eval/lang's questions in their own script (ja, zh, ko, ru) 0.80/0.66/0.46/0.83 →
0.83/0.71/0.47/0.83 (questions in those scripts are answered from words anyway:
kura.recall.script). A text in Latin letters is unchanged unless it holds ``[UNK]``.

A text is read a window at a time (``windows``, cut where a word ends), so taking 128 pieces
of a long one reads only as far as they go: a 105 KB question was cleaned, split and cut into
pieces whole (~0.25 s, most of a warm recall's time) for the 126 the model reads, and a 10 MB
one took 247 MB to do it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path

VOCAB = Path(__file__).parent.parent / "data" / "minilm-vocab.txt"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
MAX_TOKENS = 128
MAX_WORD_CHARS = 100
UNREAD_BUDGET = 16  # pieces of one-piece-a-character scripts a text keeps (``readable``)
WINDOW = 4096  # characters read at a time: a 105 KB question was read whole for its 128 pieces
_BREAK = re.compile(r"[ \t\n\r]")  # what ``_clean`` makes a space: a word never spans one


@dataclass(frozen=True, slots=True)
class Encoding:
    ids: tuple[int, ...]
    tokens: tuple[str, ...]


class WordPiece:
    """A tokenizer over one vocabulary (one token per line, the id is the line number)."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.unk = vocab["[UNK]"]
        self.cls = vocab["[CLS]"]
        self.sep = vocab["[SEP]"]

    def tokenize(self, text: str) -> list[str]:
        return list(self.pieces(text))

    def pieces(self, text: str) -> Iterator[str]:
        """``tokenize``'s pieces, the text read a window at a time (``windows``), so a caller
        that stops at 128 pieces has not read the rest of a long text."""
        for window in windows(text):
            for word in basic_split(window):
                yield from self._word(word)

    def encode(self, text: str, *, max_tokens: int = 0) -> Encoding:
        """``[CLS] … [SEP]``, at most ``max_tokens`` (0: ``MAX_TOKENS``, read now, so a bench may set it)."""
        tokens = ["[CLS]", *islice(self.pieces(text), (max_tokens or MAX_TOKENS) - 2), "[SEP]"]
        return Encoding(tuple(self.vocab.get(t, self.unk) for t in tokens), tuple(tokens))

    def readable(self, text: str) -> Encoding:
        """``encode``, without ``[UNK]`` pieces and with at most ``UNREAD_BUDGET`` pieces of a
        one-piece-a-character script (the module's docstring says why)."""
        kept: list[str] = []
        unread = 0
        for piece in self.pieces(text):
            if piece == "[UNK]":
                continue
            if _one_per_character(piece):
                unread += 1
                if unread > UNREAD_BUDGET:
                    continue
            kept.append(piece)
            if len(kept) == MAX_TOKENS - 2:
                break
        tokens = ["[CLS]", *kept, "[SEP]"]
        return Encoding(tuple(self.vocab[t] for t in tokens), tuple(tokens))

    def _word(self, word: str) -> list[str]:
        if len(word) > MAX_WORD_CHARS:
            return ["[UNK]"]
        pieces: list[str] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                return ["[UNK]"]
            pieces.append(piece)
            start = end
        return pieces


@lru_cache(maxsize=1)
def minilm() -> WordPiece:
    """The tokenizer for all-MiniLM-L6-v2, from the vendored vocabulary."""
    lines = VOCAB.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return WordPiece({token: i for i, token in enumerate(lines)})


def windows(text: str) -> Iterator[str]:
    """``text`` in windows of about ``WINDOW`` characters, each cut at a space, tab or line
    break: where a word always ends, so the windows' words are the text's, in order."""
    start = 0
    while len(text) - start > WINDOW:
        cut = _BREAK.search(text, start + WINDOW)
        if cut is None:
            break
        yield text[start : cut.start()]
        start = cut.end()
    yield text[start:]


def basic_split(text: str) -> list[str]:
    """BERT's basic tokenizer, uncased: words and punctuation marks, accents stripped."""
    words: list[str] = []
    for chunk in _clean(text).split():
        chunk = _strip_accents(chunk.lower())
        current = ""
        for char in chunk:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                words.append(char)
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


def _clean(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or _is_control(char):
            continue
        if _is_whitespace(char):
            out.append(" ")
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    return "".join(out)


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _one_per_character(piece: str) -> bool:
    """A piece of CJK ideographs, kana or hangul: scripts the vocabulary holds a character
    at a time (a continuation ``##`` is not counted)."""
    code = ord(piece[2] if piece.startswith("##") and len(piece) > 2 else piece[0])
    return _is_cjk(code) or 0x3040 <= code <= 0x30FF or 0xFF66 <= code <= 0xFF9F or _is_hangul(code)


def _is_hangul(code: int) -> bool:
    return 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F
    )  # fmt: skip
