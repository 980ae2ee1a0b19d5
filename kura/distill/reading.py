"""How much the brain reads at once, and how many candidates it may name from it.

These are distill-kura's ``[distill] chunk_chars`` and ``max_items`` (a store's own
``[stores.NAME.distill]`` over the shared table), with its meaning: ``chunk_chars`` is the
most transcript, in characters, one brain call is sent (what the brain swallows in one
gulp); ``max_items`` is the most candidates one call may yield — the brain is told the
number, and anything past it is not taken. 0 (unset) keeps kura's own defaults: pieces
sized by the model's ``budget`` and no cap beyond what the brain proposes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Reading:
    chunk_chars: int = 0
    max_items: int = 0

    @classmethod
    def of(cls, *tables: Mapping[str, Any]) -> Reading:
        """From ``[distill]`` tables, later ones over earlier (the store's last)."""
        merged: dict[str, Any] = {}
        for table in tables:
            merged.update(table)
        return cls(int(merged.get("chunk_chars") or 0), int(merged.get("max_items") or 0))

    def told(self) -> str:
        """The line added to the brain's instructions ("" with no cap)."""
        return f"\n\nPropose at most {self.max_items} candidates." if self.max_items else ""
