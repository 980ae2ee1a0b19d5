"""The JSON the HTTP service reads and writes, as pydantic models.

FastAPI checks request bodies against these and writes the OpenAPI schema from them, so the
schema a client reads is the check the server applies. Request bodies are strict (a ``"3"``
where a number belongs is refused with 422, not quietly turned into 3) and closed (a
misspelled field is refused instead of dropped, so ``"tpye": "user"`` never writes a
project memory); the ranges are the service's own limits. Responses allow extra keys: the
core may say more than the schema promises, never less.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kura.recall.working import MAX_RECENT
from kura.request import CONTEXT, RECALL, REMEMBER, ContextRequest, RecallRequest

_TOP, _HOPS, _CHARS = (RecallRequest.RANGES[name] for name in ("top", "hops", "chars"))
_BUDGET = ContextRequest.RANGES["budget"]

MemoryType = Literal[
    "user", "feedback", "project", "reference"
]  # kura.files.memory_file.TYPES, spelled out for the schema


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    store: str | None = Field(None, description="Store name (or a mode); default store if omitted.")
    mode: str | None = Field(None, description="Mode name (or a store); an alternative to store.")


class RecallIn(_In):
    question: str = Field(min_length=1, description="What you want to know, in your own words.")
    hops: int = Field(RECALL.hops, ge=_HOPS[0], le=_HOPS[1], description="Follow [[links]] this many steps.")
    top: int = Field(RECALL.top, ge=_TOP[0], le=_TOP[1], description="At most this many memories picked.")
    chars: int = Field(
        RECALL.chars, ge=_CHARS[0], le=_CHARS[1], description="Character budget for the context."
    )
    at: str | None = Field(
        None,
        description="What the store asserted on this day (YYYY-MM-DD): memories current then, "
        "nothing created after it. Omitted: today.",
        examples=["2025-03-01"],
    )


class ContextIn(_In):
    task: str = Field(min_length=1, description="What the model is about to do, in your own words.")
    budget: int = Field(
        CONTEXT.budget, ge=_BUDGET[0], le=_BUDGET[1], description="Tokens the whole context may take."
    )
    recent: int = Field(
        0, ge=0, le=MAX_RECENT, description="Carry the last N messages of journal as working memory."
    )
    journal: str | None = Field(None, description="A transcript among the store's configured journals.")


class RememberIn(_In):
    slug: str = Field(
        min_length=1, max_length=REMEMBER.SLUG_CHARS, description="File name without .md, e.g. deploy-day."
    )
    description: str = Field(min_length=1, description="One line: the recognition trigger.")
    body: str | None = Field(None, description="The memory's text (new memories default to the description).")
    type: MemoryType | None = Field(None, description=f"New memories default to {REMEMBER.NEW_TYPE}.")
    title: str | None = Field(None, description="Short title for the index line.")
    supersedes: str | None = Field(
        None, min_length=1, max_length=REMEMBER.SLUG_CHARS,
        description="The slug of the memory this one replaces: kept as history, out of the index.",
    )  # fmt: skip


class Health(_Out):
    ok: bool
    stores: int
    uptime: float


class StoreInfo(_Out):
    name: str
    label: str
    write_policy: str
    writable: bool
    modes: list[str]
    default: bool
    models: dict[str, str] = Field(
        default_factory=dict,
        description='The model of each role (thinker, brain, scribe, embedder), or "none".',
    )
    changes: int = Field(
        default=0,
        description="Changes to the store's files this server has taken in since it started (a proxy's "
        "`kura mcp` polls it to tell its sessions).",
    )


class Finding(_Out):
    check: str
    severity: str
    path: str
    line: int | None
    message: str


class Doctor(_Out):
    store: str
    memories: int
    types: dict[str, int]
    healthy: bool
    findings: list[Finding]


class Prefill(_Out):
    store: str
    state: str
    etag: str
    tokens: int
    budget: int
    hard_limit: int
    max_chars: int = Field(description="The character ceiling the block was kept under (0: none).")
    chars: int = Field(description="The block's length in characters, as JavaScript counts them.")
    warning: str
    text: str


class Profile(_Out):
    store: str
    label: str
    charter: str
    persona: str = Field(description="Where the persona file is; it is never rendered here.")


class MemoryItem(_Out):
    slug: str
    name: str
    description: str
    type: str | None


class MemoryListed(MemoryItem):
    state: Literal["current", "archived", "superseded"] = Field(
        description="current; or off the index by design (only listed with all=true)."
    )
    archived: str | None = Field(description='The day it was archived ("" when the file gives none).')
    archived_reason: str | None
    superseded_by: str | None = Field(description="The memory that replaced it.")


class RecentItem(_Out):
    slug: str
    type: str | None
    description: str
    what: Literal["created", "changed", "superseded", "forgotten"] = Field(description="Its newest event.")
    day: str = Field(description="YYYY-MM-DD.")
    source: Literal["frontmatter", "git", "uncommitted", "untracked"] = Field(
        description="Where the date comes from."
    )
    detail: str = Field(description='What replaced it ("by SLUG"), why it was forgotten, or "".')
    also: list[str] = Field(description="The other kinds of event it had in the window.")


class RecentOut(_Out):
    store: str
    since: str = Field(description="The window's first day.")
    today: str
    in_git: bool = Field(description="Whether git's commits were read (else the frontmatter's dates alone).")
    items: list[RecentItem] = Field(description="Newest first, each memory once.")


class MemoryOut(MemoryItem):
    path: str
    meta: dict[str, Any]
    body: str
    links: list[str] = Field(description="Its [[links]] as written.")
    linked: list[str] = Field(
        default_factory=list,
        description="The slug each link reaches (by slug, title or alias), or as written.",
    )
    findings: list[str]
    text: str = Field(description="The file exactly as it is on disk.")


class Pick(_Out):
    slug: str
    score: float | None


class RecallOut(_Out):
    store: str
    question: str
    how: str = Field(
        description="meaning (the thinker picked), embedded, or words (word overlap: distill-kura's word)"
    )
    method: str = Field("", description="kura's own label: meaning, embedded or lexical (word overlap alone)")
    degraded: bool
    reason: str
    picked: list[Pick]
    walked: list[str]
    context: str
    chars: int
    elapsed: float
    unread: list[str] = Field(
        default_factory=list, description="Memories that could not be read, so not searched."
    )
    at: str | None = Field(None, description="The day the answer is as of (YYYY-MM-DD); null for today.")


class ContextItem(_Out):
    section: str
    source: str
    tokens: int
    why: str


class ContextOut(_Out):
    store: str
    task: str
    budget: int
    tokens: int
    recall: str
    sections: list[dict[str, Any]]
    items: list[ContextItem]
    left_out: list[ContextItem]
    text: str
    degraded: list[str] = Field(
        default_factory=list, description="What went wrong and what was told instead."
    )


class Remembered(_Out):
    store: str
    slug: str
    path: str
    created: bool
    changed: bool
    index_changed: bool
    body_kept: bool = Field(
        False, description="A body someone wrote was kept under a new description (send body to change it)."
    )
    superseded: str | None = Field(None, description="The memory this write replaced (with supersedes).")
    revises: str | None = Field(
        None, description="A live memory this write appears to revise, left current (see notes)."
    )
    notes: list[str] = Field([], description="What the writer should know, in words.")


class ErrorDetail(_Out):
    status: int
    message: str
    stores: list[str] | None = Field(None, description="With 404 for an unknown store: what is served.")
    details: list[dict[str, Any]] | None = Field(None, description="With 422: each field that failed.")


class ErrorOut(BaseModel):
    error: ErrorDetail


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: these statuses answer with the error shape."""
    return {code: {"model": ErrorOut} for code in codes}
