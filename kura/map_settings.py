"""The map's settings (``[prefill]``) and the fixed frame they give it: fences and header.

The weave, the prefill hook, ``kura weave`` and ``kura context`` all read these, so they
sit below all four, and on the shell-hook path: this module imports nothing heavy. A
header is checked when it is used, not when the config is read, because a header that
ticks (a date, a counter) silently costs every turn its prompt cache: it is refused,
naming what in it would change.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from kura.errors import ConfigError, InvalidRequest

MIN_CHARS = 1000  # a ceiling must leave room for the smallest honest block (the sector map, rung 4)
CEILING_ENV = "KURA_PREFILL_MAX_CHARS"
OPEN = "<<<KURA-MAP store={name}>>>"
CLOSE = "<<<END KURA-MAP>>>"
DEFAULT_HEADER = (
    "This is the map of what you remember (kura store '{name}'), one line per memory. "
    "If a topic is on this list, it is remembered: open that memory (kura show SLUG, or the "
    "kura_read tool) before you answer about it. If a topic is not on this list, it is not "
    "remembered: say so instead of guessing."
)
SECTOR_HEADER = (
    "This is an outline of what you remember (kura store '{name}'): the index's sections, not one "
    "line per memory. A topic missing here may still be remembered: recall it before you say it is not."
)
_VOLATILE = (
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "a date"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"), "a time of day"),
    (
        re.compile(r"(?i)\b(?:today|tonight|yesterday|tomorrow|now|current(?:ly)? time)\b"),
        "a moving time word",
    ),
    (re.compile(r"(?i)\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*day\b"), "a weekday"),
    (re.compile(r"\{\{?\s*\w+\s*\}?\}|%[a-zA-Z]|\$\(|\$\{?[A-Z_]{2,}"), "a placeholder that expands"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-|\b[0-9a-f]{16,}\b", re.I), "an id"),
    (re.compile(r"(?i)\b(?:session|turn|run|request|build)\s*(?:id|#|no\.?|number)"), "a session or turn id"),
    (re.compile(r"(?i)\b\d+\s+(?:memories|lines|entries|items|tokens)\b"), "a counter"),
)


@dataclass(kw_only=True, frozen=True, slots=True)
class MapSettings:
    """``[prefill]`` (and ``[stores.NAME.prefill]``): the same keys as distill-kura, and
    ``max_chars``, a host's character ceiling (0: none)."""

    window_tokens: int = 131072
    budget_fraction: float = 0.05
    hard_fraction: float = 0.20
    fresh_days: float = 14
    pinned_types: tuple[str, ...] = ("feedback", "user")
    trigger_tokens: int = 24
    header: str = ""
    cloth_path: str = ""
    sector_header: str = ""  # over the hard limit or a ceiling: the outline's own header
    verbatim_after: str = ""  # an index heading: from it on, every line goes into the map as written
    max_chars: int = 0

    @classmethod
    def from_tables(cls, *tables: dict[str, Any]) -> MapSettings:
        merged: dict[str, Any] = {}
        for table in tables:
            merged.update(table)
        known = {k: merged[k] for k in cls.__dataclass_fields__ if k in merged}
        if "pinned_types" in known:
            known["pinned_types"] = tuple(known["pinned_types"])
        return cls(**known)

    @property
    def budget(self) -> int:
        return int(self.window_tokens * self.budget_fraction)

    @property
    def hard_limit(self) -> int:
        return int(self.window_tokens * self.hard_fraction)

    def key(self) -> str:
        """What the woven map depends on: every setting but the ceiling, which prefill
        applies to the cloth — so hosts with different ceilings share one woven map."""
        return json.dumps({k: v for k, v in asdict(self).items() if k != "max_chars"}, sort_keys=True)


def header_text(settings: MapSettings, name: str) -> str:
    """The block's fixed header; a header of your own is refused if anything in it would
    change between builds (the default names only the store, which does not change)."""
    return _steady(settings.header, "header") if settings.header else DEFAULT_HEADER.format(name=name)


def sector_header_text(settings: MapSettings, name: str) -> str:
    """The sector map's header. Never ``header``: a header written for the map may promise
    that what is not on it is not remembered, which under an outline is false — so the
    outline comes under ``sector_header``, by default one that says it is an outline."""
    if not settings.sector_header:
        return SECTOR_HEADER.format(name=name)
    return _steady(settings.sector_header, "sector_header")


def _steady(header: str, key: str) -> str:
    for pattern, what in _VOLATILE:
        found = pattern.search(header)
        if found is not None:
            raise ConfigError(
                f"[prefill] {key} contains {what} ({found.group(0)!r}); the map must not change "
                f"between turns or every turn pays a cold prompt cache — remove it from the {key}"
            )
    return header


def wrap(name: str, header: str, body: str) -> str:
    return f"{OPEN.format(name=name)}\n{header}\n\n{body.rstrip()}\n{CLOSE}\n"


def checked(value: Any, where: str) -> int:
    """A ceiling as configured: 0 (none) or room for at least the smallest honest block."""
    if type(value) is not int:
        raise ConfigError(f"{where} must be a whole number of characters, got {value!r}")
    if value < 0 or 0 < value < MIN_CHARS:
        raise ConfigError(f"{where} must be 0 (no ceiling) or at least {MIN_CHARS} characters, got {value}")
    return value


def parsed(raw: str, where: str) -> int:
    """A ceiling given as text (an option or an environment variable): a bad one is the
    caller's value (``InvalidRequest``), not kura.toml's."""
    text = raw.strip()
    if not (text.isascii() and text.lstrip("-").isdigit()):
        raise InvalidRequest(f"{where} must be a whole number of characters, got {raw!r}")
    try:
        return checked(int(text), where)
    except ConfigError as err:
        raise InvalidRequest(str(err)) from None
