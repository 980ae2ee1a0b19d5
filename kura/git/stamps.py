"""A git timestamp as a time and a day, when it is one a calendar holds.

A commit's dates are whatever its author wrote, and git takes ``@99999999999999``: a
repository someone else made can carry such a commit, while Python's dates end with the
year 9999. Every reader of git's ``%at``/``%ct`` turns them into times here, so such a
commit is a commit with no date — never a ValueError in a weave, a prompt hook's prefill,
``kura history`` or ``recall --at``.
"""

from __future__ import annotations

import datetime as dt


def when(stamp: str) -> dt.datetime | None:
    """The local time of ``stamp`` (git's seconds since the epoch); None when it is not a
    number or no calendar holds it."""
    try:
        return dt.datetime.fromtimestamp(int(stamp))
    except (ValueError, OverflowError, OSError):
        return None


def day(stamp: str) -> dt.date | None:
    """The local day of ``stamp`` (``when``'s rules)."""
    moment = when(stamp)
    return None if moment is None else moment.date()
