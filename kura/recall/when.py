"""Dates in questions, read against the dates of memories.

"What did Nadia paint last June?" names no painting: the date is what tells the right memory
from a dozen like it, and meaning alone cannot read it (to an embedder "last June" is two
words like any other). So the question's date phrase becomes a window of days — resolved
against today, or the ``--at`` day, never against the clock of whoever wrote the memory —
and memories with a date inside it (the frontmatter's ``created``/``date``/``updated``, an
ISO date or "24 May 2025" in the text, which is where a distilled observation keeps the day
it was said) are lifted by ``LIFT`` before picking. Nothing is dropped: a memory without a
date is not evidence against the question, and the date phrase may be about something
else.

"Two weeks before the wedding" is relative to an event, not to today: the event's words
are searched, the best memory's date is the anchor, and the window is the offset from it,
give or take a quarter of the offset.

Read in plain Python (no ``dateutil``: it is not a dependency, and the phrases people use
in questions are few): ISO dates, "24 May [2025]", "[in|last|this|early|late] June
[2025]", "in 2025", "in the summer", "last winter", "during the spring of 2025" (the northern
hemisphere's seasons), "yesterday", "last week", "last month", "N days/weeks/months ago",
"N days/weeks/months before/after the EVENT". "May" is a month only when it is written
"May" and something (a day, a year, "in", "last") says it is one.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime as dt
import re
from dataclasses import dataclass

from kura.errors import KuraError
from kura.files.witness import parse_when
from kura.recall.search import Results, SearchIndex

LIFT = 0.15  # added to the score of a memory dated inside the question's window
WIDER = 3  # a dated question searches this many times deeper: the right day may rank low by meaning
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH = "(?:(?i:" + "|".join(sorted(set(_MONTHS) - {"may"}, key=len, reverse=True)) + r")\.?|May)"
_COUNTED = "a one two three four five six seven eight nine ten eleven twelve".split()
_NUMBERS = {word: max(i, 1) for i, word in enumerate(_COUNTED)}  # "a week ago" is one
_N = r"(?P<n>\d{1,3}|(?i:" + "|".join(_NUMBERS) + "))"
_UNIT = r"(?P<unit>(?i:day|week|month|year))s?"
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR_AFTER = r"(?:,?\s+(?P<year>\d{4}))?"
_DAY_MONTH = re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>{_MONTH}){_YEAR_AFTER}\b")
_MONTH_DAY = re.compile(rf"\b(?P<month>{_MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?{_YEAR_AFTER}\b")
_NAMED = re.compile(
    rf"\b(?:(?P<word>(?i:in|last|this|early|late|mid|during|since|by))\s+(?:(?i:the)\s+)?)?"
    rf"(?P<month>{_MONTH})(?![\w-]){_YEAR_AFTER}"
)
_YEAR = re.compile(r"\b(?i:in|during|of)\s+(\d{4})\b")
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month; three months each
_SEASON = re.compile(  # a season as a time: not "the Spring Boot config", "fall back mode"
    r"\b(?P<word>in|during|over|this|last|early|late)\s+(?:the\s+)?"
    r"(?P<season>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(?P<year>\d{4}))?\b"
    r"(?=['’]s\b|\s*(?:$|[?.!,;:)])|\s+(?:of|in|at|on|for|with|to|and|or|but|when|before|after|while|so"
    r"|we|I|he|she|they|you|it|did|was|were|had|have|has|is|are)\b)",
    re.IGNORECASE,
)
_AGO = re.compile(rf"\b{_N}\s+{_UNIT}\s+(?i:ago)\b")
_RELATIVE = re.compile(
    rf"\b{_N}\s+{_UNIT}\s+(?P<side>(?i:before|after))\s+(?:(?i:the|my|our|his|her|their)\s+)?(?P<event>[^?.!,;]+)"
)


@dataclass(frozen=True, slots=True)
class Window:
    """The days a question's date phrase names (``first`` to ``last``, both included); for an
    event-relative phrase, ``event`` and ``offset`` (days, negative: before) instead, resolved
    against the event's memory by ``dated``."""

    first: dt.date
    last: dt.date
    said: str
    event: str = ""
    offset: int = 0

    def holds(self, day: dt.date) -> bool:
        return self.first <= day <= self.last


def window(question: str, today: dt.date) -> Window | None:
    """The window ``question``'s first date phrase names (None: it names none)."""
    for reader in (_relative, _exact, _ago, _named, _season, _words, _year):
        try:
            found = reader(question, today)
        except (ValueError, OverflowError):  # "in March 0000", "31 December 9999": no such days
            continue
        if found is not None:
            return found
    return None


def dated(index: SearchIndex, results: Results, asked: Window, *, k: int) -> Results:
    """``results`` with the memories dated inside ``asked`` lifted by ``LIFT``, best first, at
    most ``k`` (``results`` cut to ``k`` when an event's date cannot be found)."""
    if asked.event:
        anchor = _anchor(index, asked)
        if anchor is None:
            return dataclasses.replace(results, hits=results.hits[:k])
        asked = anchor
    inside = {hit.slug for hit in results.hits if any(map(asked.holds, memory_dates(index, hit.slug)))}
    lifted = [dataclasses.replace(h, score=h.score + LIFT) if h.slug in inside else h for h in results.hits]
    lifted.sort(key=lambda hit: (-hit.score, hit.slug))
    return dataclasses.replace(results, hits=tuple(lifted[:k]))


def memory_dates(index: SearchIndex, slug: str) -> list[dt.date]:
    """The days memory ``slug`` is dated by or speaks of (none when it cannot be read)."""
    try:
        data, memory = index.store.read(slug)
    except KuraError:
        return []
    meta = memory.note.meta if memory is not None else {}
    found = [parse_when(meta.get(key)) for key in ("created", "date", "updated")]
    text = data.decode("utf-8", errors="replace")
    days = [d for d in found if d is not None]
    days += [d for d in (_day(*m.groups()) for m in _ISO.finditer(text)) if d is not None]
    year = days[0].year if days else None
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for match in pattern.finditer(text):
            days += _days(match["day"], match["month"], match["year"], year)
    return days


def _days(day: str, month: str, year: str | None, default: int | None) -> list[dt.date]:
    """The day "24 May [2025]" names (``default``: the year when it says none), or none."""
    number = _MONTHS.get(month.lower().rstrip("."))
    chosen = int(year) if year else default
    if number is None or chosen is None:
        return []
    found = _day(str(chosen), str(number), day)
    return [] if found is None else [found]


def _day(year: str, month: str, day: str) -> dt.date | None:
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:
        return None


def _anchor(index: SearchIndex, asked: Window) -> Window | None:
    """``asked``'s event found in the store: its best memory's date, moved by the offset."""
    for hit in index.search(asked.event, k=3).hits[:1]:
        days = memory_dates(index, hit.slug)
        if days:
            centre = max(days) + dt.timedelta(days=asked.offset)
            spread = dt.timedelta(days=max(abs(asked.offset) // 4, 2))
            return Window(centre - spread, centre + spread, asked.said)
    return None


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _span(unit: str, count: int) -> int:
    return count * {"day": 1, "week": 7, "month": 30, "year": 365}[unit.lower()]


def _relative(question: str, today: dt.date) -> Window | None:
    match = _RELATIVE.search(question)
    if match is None:
        return None
    days = _span(match["unit"], _count(match["n"]))
    event = match["event"].strip()
    if not event:
        return None
    offset = -days if match["side"].lower() == "before" else days
    return Window(today, today, match.group(0), event=event, offset=offset)


def _exact(question: str, today: dt.date) -> Window | None:
    for match in _ISO.finditer(question):
        iso = _day(*match.groups())
        if iso is not None:
            return Window(iso, iso, match.group(0))
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for match in pattern.finditer(question):
            day, month, year = match["day"], match["month"], match["year"]
            found = _days(day, month, year, today.year)
            if found and not year and found[0] > today:  # "on 24 May" asked in March: last year's
                found = _days(day, month, None, today.year - 1)
            if found:
                one = dt.timedelta(days=1)
                return Window(found[0] - one, found[0] + one, match.group(0))
    return None


def _ago(question: str, today: dt.date) -> Window | None:
    match = _AGO.search(question)
    if match is None:
        return None
    days = _span(match["unit"], _count(match["n"]))
    centre = today - dt.timedelta(days=days)
    spread = dt.timedelta(days=max(days // 4, 1))
    return Window(centre - spread, centre + spread, match.group(0))


def _named(question: str, today: dt.date) -> Window | None:
    for match in _NAMED.finditer(question):
        word, year = (match["word"] or "").lower(), match["year"]
        if not word and year is None:
            continue  # a bare "March" may be a name; "in March", "last March", "March 2025" are months
        month = _MONTHS[match["month"].lower().rstrip(".")]
        this_year = month < today.month or (month == today.month and word != "last")
        chosen = int(year) if year else today.year if this_year else today.year - 1
        first = dt.date(chosen, month, 1)
        last = dt.date(chosen, month, calendar.monthrange(chosen, month)[1])
        if word == "early":
            last = dt.date(chosen, month, 10)
        elif word == "late":
            first = dt.date(chosen, month, 20)
        return Window(first, last, match.group(0))
    return None


def _season(question: str, today: dt.date) -> Window | None:
    """ "In the summer", "last winter", "during the spring of 2025": the season's three months
    (the northern hemisphere's; winter runs from December into the next year's February). "Last"
    is the latest season that has ended, any other word the latest that has begun."""
    match = _SEASON.search(question)
    if match is None:
        return None
    month = _SEASONS[match["season"].lower()]
    word = match["word"].lower()
    if match["year"]:
        first = dt.date(int(match["year"]), month, 1)
    else:
        first = dt.date(today.year, month, 1)
        while first > today or (word == "last" and _after(first, 3) > today):
            first = dt.date(first.year - 1, month, 1)
    last = _after(first, 3) - dt.timedelta(days=1)
    if word == "early":
        last = _after(first, 1) - dt.timedelta(days=1)
    elif word == "late":
        first = _after(first, 2)
    return Window(first, last, match.group(0))


def _after(first: dt.date, months: int) -> dt.date:
    """The first day of the month ``months`` after ``first``'s."""
    shifted = first.month - 1 + months
    return dt.date(first.year + shifted // 12, shifted % 12 + 1, 1)


def _words(question: str, today: dt.date) -> Window | None:
    lowered = question.lower()
    if "yesterday" in lowered:
        day = today - dt.timedelta(days=1)
        return Window(day, day, "yesterday")
    if "last week" in lowered:
        return Window(today - dt.timedelta(days=13), today - dt.timedelta(days=1), "last week")
    if "last month" in lowered:
        end = today.replace(day=1) - dt.timedelta(days=1)
        return Window(end.replace(day=1), end, "last month")
    return None


def _year(question: str, today: dt.date) -> Window | None:
    match = _YEAR.search(question)
    if match is None or not 1900 <= int(match.group(1)) <= today.year:
        return None
    year = int(match.group(1))
    return Window(dt.date(year, 1, 1), dt.date(year, 12, 31), match.group(0))
