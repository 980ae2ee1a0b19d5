"""The attention's NaN guard dropped where it can never fire.

The pinned model was exported from PyTorch's ``scaled_dot_product_attention``, which guards
every softmax against a row whose keys are all masked out: ``Where(IsNaN(p), 0, p)`` over
the whole (batch, 12 heads, tokens, tokens) tensor, in each of the 6 layers. Here that guard
cannot fire. The mask it protects against is an ``Add`` of ``Where(keep, 0, fill)`` with a
finite ``fill`` (the export writes −3.4e38, the lowest float, not −inf): a masked score stays
finite, so the softmax of a row — masked keys and all — is a finite distribution, never NaN
(and every row the embedder feeds holds at least ``[CLS]`` and ``[SEP]``). Yet the guard
reads and writes that tensor twice: 5 % of the model's kernel time on the distill-kura shape
(``bench/index_levers.py``'s profile). Without it the vectors are the same bit for bit.

The guard is dropped only where the graph has exactly that shape; anything else is left as
it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def unguarded(nodes: list[Any], finite: Callable[[str], bool]) -> list[Any]:
    """``nodes`` without each ``Where(IsNaN(p), _, p)`` after a ``Softmax`` of ``x + mask``
    where the mask is ``Where(_, a, b)`` of two constants that ``finite`` says are (a name
    that is no constant: False); whatever read the guard's output reads ``p``."""
    made_by = {out: old for old in nodes for out in old.output}
    dropped: set[int] = set()
    renamed: dict[str, str] = {}
    for old in nodes:
        if old.op_type != "Where" or len(old.input) != 3:
            continue
        test = made_by.get(old.input[0])
        softmax = made_by.get(old.input[2])
        if test is None or test.op_type != "IsNaN" or test.input[0] != old.input[2]:
            continue
        if softmax is None or softmax.op_type != "Softmax":
            continue
        if not _masked(made_by.get(softmax.input[0]), made_by, finite):
            continue
        dropped |= {id(old), id(test)}
        renamed[old.output[0]] = old.input[2]
    kept = [old for old in nodes if id(old) not in dropped]
    for old in kept:
        for at, name in enumerate(old.input):
            if name in renamed:
                old.input[at] = renamed[name]
    return kept


def _masked(add: Any, made_by: dict[str, Any], finite: Callable[[str], bool]) -> bool:
    """``add`` is ``scores + Where(_, a, b)`` with ``a`` and ``b`` finite constants."""
    if add is None or add.op_type != "Add" or len(add.input) != 2:
        return False
    mask = made_by.get(add.input[1])
    if mask is None or mask.op_type != "Where" or len(mask.input) != 3:
        return False
    return all(finite(name) for name in mask.input[1:])
