"""Token estimates without a tokenizer.

The map is budgeted in tokens, but kura must not load a model's tokenizer to print a
prompt block. The estimate is the usual rule of thumb — about four characters of Latin
text per token — with every non-ASCII character counted as a token of its own, which is
close for CJK and errs high for accented Latin. Budgets are soft targets with margins,
so a consistent, slightly pessimistic estimate is what matters.
"""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """Roughly how many tokens ``text`` costs in a prompt."""
    if text.isascii():
        return (len(text) + 3) // 4
    narrow = len(text.encode("ascii", "ignore"))
    return (narrow + 3) // 4 + len(text) - narrow
