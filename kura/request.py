"""What a surface asks for, defined once.

The CLI, its fast path (``kura.cli.entry``), HTTP, MCP, the MCP proxy and the Python API are
adapters over these: each reads its defaults and ranges here and renders them its own way,
so adding an option is one edit here plus one per surface that shows it. Kept free of any
import a shell hook would pay for.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar, Self

from kura.errors import InvalidRequest

TYPES = ("user", "feedback", "project", "reference")  # a memory's type, as a request names it


class _Ranged:
    """A request whose numbers each have a range (``RANGES``: field name to low and high)."""

    __slots__ = ()
    RANGES: ClassVar[Mapping[str, tuple[int, int]]] = MappingProxyType({})

    def out_of_range(self) -> str:
        """The first value outside its range, said for the person who sent it ("" when none)."""
        for name, (low, high) in self.RANGES.items():
            value = getattr(self, name)
            if not low <= value <= high:
                return f"{name} must be between {low} and {high}, got {value}"
        return ""

    def checked(self) -> Self:
        """This request, or InvalidRequest naming the first value outside its range."""
        problem = self.out_of_range()
        if problem:
            raise InvalidRequest(problem)
        return self


@dataclass(frozen=True, slots=True)
class RecallRequest(_Ranged):
    """One recall: the question, how many memories to pick, how many [[link]] steps to walk
    from each, the character budget for their text, and the day to answer as of ("" for
    today: what the store asserts now)."""

    question: str
    top: int = 3
    hops: int = 1
    chars: int = 6000
    at: str = ""

    RANGES: ClassVar[Mapping[str, tuple[int, int]]] = MappingProxyType(
        {"top": (1, 50), "hops": (0, 5), "chars": (200, 200_000)}
    )

    def out_of_range(self) -> str:
        problem = _Ranged.out_of_range(self)
        return problem or _bad_day(self.at)

    def day(self) -> dt.date | None:
        """The day ``at`` names (None for today), or InvalidRequest saying what a day looks like."""
        if not self.at:
            return None
        self.checked()
        return dt.date.fromisoformat(self.at)


def _bad_day(at: str) -> str:
    """What is wrong with ``at`` as a day to recall as of ("" when nothing is)."""
    if not at:
        return ""
    try:
        day = dt.date.fromisoformat(at) if len(at) == 10 else None
    except ValueError:
        day = None
    if day is None:
        return f"at {at[:40]!r} is not a date: give one as YYYY-MM-DD (e.g. 2025-03-01)"
    if day > dt.date.today():
        return f"at {at} is after today: the store can say what it asserted on a past day, not a future one"
    return ""


@dataclass(frozen=True, slots=True)
class ContextRequest(_Ranged):
    """One context: the task a model is about to do and the tokens the whole answer may take
    (below the low end it tells nothing)."""

    task: str
    budget: int = 4000

    RANGES: ClassVar[Mapping[str, tuple[int, int]]] = MappingProxyType({"budget": (50, 200_000)})


@dataclass(frozen=True, slots=True)
class RememberRequest:
    """One memory to write: its slug and one-line description, and optionally its body, its
    type, its title in the index and the memory it replaces."""

    slug: str
    description: str
    body: str | None = None
    type: str | None = None
    title: str | None = None
    supersedes: str | None = None

    NEW_TYPE: ClassVar[str] = "project"  # a new memory's type when none is given
    TITLE_CHARS: ClassVar[int] = 40  # a longer title is not the index's: it shows the description
    SLUG_CHARS: ClassVar[int] = 200  # the longest slug (or supersedes) a request over HTTP may name


RECALL = RecallRequest("")  # the defaults, for signatures and help texts
CONTEXT = ContextRequest("")
REMEMBER = RememberRequest("", "")


EDIT_OPS = ("append", "prepend", "replace", "section", "rename", "forget", "purge")
_EDIT_NEEDS = {
    "append": ("text",),
    "prepend": ("text",),
    "replace": ("find",),
    "section": ("heading", "text"),
    "rename": ("to",),
    "forget": (),
    "purge": ("confirm",),
}


@dataclass(frozen=True, slots=True)
class EditRequest:
    """One change to a memory in place (``kura.life.edit``): ``op`` and the fields it reads —
    ``text`` (append, prepend; replace's new words, "" to remove the phrase; a section's new
    body), ``find`` (the phrase replace looks for, once), ``heading`` (section), ``to``
    (rename: the new slug), ``reason`` (forget) and ``confirm`` (purge: the slug again, as
    the one real deletion asks)."""

    slug: str
    op: str
    text: str = ""
    find: str = ""
    heading: str = ""
    to: str = ""
    reason: str = ""
    confirm: str = ""

    def problem(self) -> str:
        """What is missing or wrong, said for the person who sent it ("" when nothing is)."""
        if self.op not in EDIT_OPS:
            return f"op {self.op[:40]!r} is not one of {', '.join(EDIT_OPS)}"
        if not self.slug.strip():
            return "slug is empty: name the memory to edit"
        if self.op == "purge" and self.confirm.strip() != self.slug.strip():
            return (
                f"purge deletes {self.slug[:80]!r} for good: send confirm equal to the slug to say so "
                "(nothing was removed)"
            )
        missing = [name for name in _EDIT_NEEDS[self.op] if not getattr(self, name).strip()]
        return f"{self.op} needs {' and '.join(missing)}" if missing else ""

    def checked(self) -> Self:
        """This request, or InvalidRequest saying what it lacks."""
        problem = self.problem()
        if problem:
            raise InvalidRequest(problem)
        return self
