"""A finding: something wrong in a file that a person should fix.

The reader is tolerant — a broken file is read as well as it can be and never skipped —
which is only safe because every problem it tolerated is recorded as one of these, with
the path and line, for ``kura doctor`` to show.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """Something wrong in a file that a person should fix; ``kura doctor`` shows these."""

    path: str
    line: int
    message: str
    severity: str = "error"  # "warning": reads fine but may mislead; "note": an observation

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"
