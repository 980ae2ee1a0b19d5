"""Token estimates without a tokenizer.

The map is budgeted in tokens, but kura must not load a model's tokenizer to print a
prompt block. The estimate is the usual rule of thumb — about four characters of Latin
text per token — with every CJK character (and any other character past U+2000: kana,
hangul, symbols, arrows, emoji) counted as a token of its own, which is close for Chinese
and Japanese, and the letters of the other alphabets (accented Latin, Greek, Cyrillic,
Hebrew, Arabic: U+0080 to U+1FFF) as half a token each: Russian runs at two to four
characters a token in current tokenizers, so a whole token per letter made a Russian line
look three times its cost, and the trimmer cut it to a word or two. Budgets are soft targets
with margins, so a consistent, slightly pessimistic estimate is what matters. Counted in
quarter tokens (``quarters``), the rule adds up over pieces exactly as over the whole text.
"""

from __future__ import annotations

# In UTF-8 each character of U+0080 to U+1FFF starts with a byte of C2 to E1 and no other
# character holds one: deleting every other byte leaves one byte per letter (a byte loop in
# C, twice as fast as a pattern over the text; a 3 MB map is counted in 4 ms)
_NOT_LETTER_LEADS = bytes(b for b in range(256) if not 0xC2 <= b <= 0xE1)


def quarters(text: str) -> int:
    """What ``text`` costs in quarter tokens: 1 an ASCII character, 2 a letter of another
    alphabet, 4 anything else."""
    if text.isascii():
        return len(text)
    narrow = len(text.encode("ascii", "ignore"))
    letters = len(text.encode("utf-8", "surrogatepass").translate(None, _NOT_LETTER_LEADS))
    return narrow + 2 * letters + 4 * (len(text) - narrow - letters)


def estimate_tokens(text: str) -> int:
    """Roughly how many tokens ``text`` costs in a prompt."""
    if text.isascii():
        return (len(text) + 3) // 4
    return (quarters(text) + 3) // 4
