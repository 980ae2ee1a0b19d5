"""One process serving several stores: what the HTTP service and the MCP server both call.

A host switches what its agent remembers by switching mode, so every call names a store
(or a mode that maps to one) or gets the default. Only configured stores are served — a
selector is a name, never a folder path, so a client cannot point the service at an
arbitrary directory. The service keeps what is expensive warm between calls: each store's
search index (and with it the embedding model and the vector matrix) stays open, behind a
lock per store, because requests arrive on many threads.

Freshness without a walk per request: a write through the service refreshes the index for
that memory at once; edits from elsewhere (an editor, the CLI, git) are noticed at once when
the edge's file watcher calls ``changed``, else by the stamp check, run at most every
``FRESH_SECONDS``. A watched store (``watching``) is walked only every ``WATCHED_SECONDS``,
as a safety net: its watcher says what changed (and when the kernel lost events), and the
walk cost a request 0.1 s of CPU every second at 20,000 memories. What recall reads of the
files is kept while each file is unchanged (``kura.recall.read_memo``), checked by a stat.
Write policies are enforced by the store itself, and ``readonly`` refuses every write here
before the store is asked.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from kura.errors import InvalidRequest as InvalidRequest  # its home was here; callers import it from here
from kura.errors import KuraError, PolicyRefused, UnknownStore
from kura.files.memory_file import TYPES
from kura.files.witness import Witness
from kura.health.doctor import diagnose
from kura.health.picture import Picture, of_store
from kura.life.corrections import remember
from kura.life.lifecycle import witnessed
from kura.life.recent import DEFAULT_SINCE
from kura.life.recent import recent as recent_activity
from kura.map.prefill import build
from kura.recall.context import Beside, context
from kura.recall.index_build import AT_ONCE, Background, env_budget
from kura.recall.joint import joined
from kura.recall.read_memo import ReadMemo
from kura.recall.recall import Recall, recall
from kura.recall.search import SearchIndex, remote_embedder
from kura.request import CONTEXT, RECALL, ContextRequest, RecallRequest
from kura.serve.compat import labelled, role_models
from kura.store.catalog import listing  # kura.store.listing's answer, from the catalog
from kura.store.named import linked, read_named
from kura.store.store import Store

if TYPE_CHECKING:
    from kura.config import Config, StoreConfig
    from kura.life.corrections import Remembered
    from kura.map.prefill import Block
    from kura.recall.index_build import Background
    from kura.recall.search import SearchIndex

_ABSOLUTE = re.compile(r"(?<![\w.<'/\"])/[\w.-]+(?:/[\w.-]+)+")  # a folder path; not a quoted slug
P = ParamSpec("P")
T = TypeVar("T")
FRESH_SECONDS = 1.0
WATCHED_SECONDS = 30.0
MAX_TOP = RecallRequest.RANGES["top"][1]
MAX_HOPS = RecallRequest.RANGES["hops"][1]
MAX_CHARS = RecallRequest.RANGES["chars"][1]
MIN_BUDGET, MAX_BUDGET = ContextRequest.RANGES["budget"]  # tokens


@dataclass
class _Served:
    config: StoreConfig
    store: Store
    lock: threading.Lock = field(default_factory=threading.Lock)  # the search index's
    map_lock: threading.Lock = field(default_factory=threading.Lock)  # one map build at a time
    index: SearchIndex | None = None
    checked: float = 0.0  # when the index was last compared with the files
    build: Background | None = None  # the vectors a big store still lacks, made in a thread
    memo: ReadMemo = field(default_factory=ReadMemo)  # files recall read, kept while unchanged


def _private_paths(method: Callable[Concatenate[StorePool, P], T]) -> Callable[Concatenate[StorePool, P], T]:
    """Errors leave the service naming stores, never the folders they live in on this machine."""

    @functools.wraps(method)
    def wrapper(self: StorePool, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(self, *args, **kwargs)
        except KuraError as err:
            text = self.private(str(err))
            if text == str(err):
                raise
            try:
                scrubbed = type(err)(text)
            except TypeError:
                raise err from None
            raise scrubbed from None

    return wrapper


class StorePool:
    """The configured stores, served. ``readonly`` refuses writes whatever the policy."""

    def __init__(
        self, config: Config, *, readonly: bool = False, bound: str | None = None, detach: bool = False
    ) -> None:
        """``detach``: big stores' vectors made by a detached build (kura.recall.index_job),
        which outlives this process, instead of a thread."""
        self.config = config
        self.readonly = readonly
        self.detach = detach
        self.bound = self._name(bound) if bound else None
        config.store_config(self.bound)  # nothing to serve by default: refuse to start (NoStore)
        self._served: dict[str, _Served] = {}
        self._watched: set[str] = set()  # stores whose file watcher tells ``changed``
        self._hearers: list[Callable[[], None]] = []  # told after each change is taken in
        self._changes: dict[str, int] = {}  # per store: changes taken in (a proxy polls them)
        self._lock = threading.Lock()
        self.started = time.time()

    def private(self, text: str) -> str:
        """``text`` naming stores instead of their folders, and no other absolute path."""
        for name, config in self.config.stores.items():
            for form in sorted({str(config.path), os.path.realpath(config.path)}, key=len, reverse=True):
                text = text.replace(form, f"<store {name}>")
        return _ABSOLUTE.sub("<path>", text)

    # -- choosing a store --------------------------------------------------------------

    def _name(self, selector: str | None) -> str:
        key = selector or self.config.default_store
        if key in self.config.stores:
            return key
        if key in self.config.modes:
            return self.config.modes[key]
        stores = ", ".join(sorted(self.config.stores)) or "none"
        modes = ", ".join(sorted(self.config.modes)) or "none"
        raise UnknownStore(f"no store or mode named {key!r} (stores: {stores}; modes: {modes})")

    def name(self, selector: str | None = None) -> str:
        """The store a selector names; a bound service serves only its own store."""
        if self.bound is not None:
            try:
                other = self._name(selector) if selector else self.bound
            except UnknownStore:
                other = None  # never list the others: a bound service discloses only its own
            if other != self.bound:
                raise UnknownStore(
                    f"this service is bound to store {self.bound!r}; {selector!r} is not served"
                )
            return self.bound
        return self._name(selector)

    def served(self, selector: str | None = None, *, beside: bool = False) -> _Served:
        """``beside``: the person's store read beside the project's (``Config.beside``),
        which a service bound to the project's store reads too, for recall only."""
        name = selector if beside and selector == self.config.person else self.name(selector)
        config = self.config.store_config(name)  # its folder deleted meanwhile: NoStore, never a new one
        with self._lock:
            if name not in self._served:
                self._served[name] = _Served(config, config.open())
            return self._served[name]

    # -- reading -----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        stores = 1 if self.bound else len(self.config.stores)  # a bound service discloses no others
        return {"ok": True, "stores": stores, "uptime": round(time.time() - self.started, 1)}

    def stores(self) -> list[dict[str, Any]]:
        names = [self.bound] if self.bound else sorted(self.config.stores)
        return [
            {
                "name": name,
                "label": self.config.stores[name].label,
                "write_policy": self.config.stores[name].write_policy,
                "writable": self.writable(name),
                "modes": sorted(m for m, s in self.config.modes.items() if s == name),
                "default": name == self.config.default_store,
                "models": role_models(self.config.models_for(name)),
                "changes": self._changes.get(name, 0),
            }
            for name in names
        ]

    def writable(self, selector: str | None = None) -> bool:
        return not self.readonly and self.config.stores[self.name(selector)].write_policy == "direct-allowed"

    @_private_paths
    def picture(self, selector: str | None = None) -> Picture:
        """The store's link graph, for the graph page."""
        return of_store(self.served(selector).store)

    @_private_paths
    def index_text(self, selector: str | None = None) -> str:
        store = self.served(selector).store  # a link out of the store, a FIFO, a huge file: refused
        return store.index_bytes().decode("utf-8", errors="replace")

    @_private_paths
    def prefill(self, selector: str | None = None) -> Block:
        served = self.served(selector)
        settings = self.config.map_settings(served.config)
        with served.map_lock:  # not the index's lock: a slow recall must not hold up the map
            return build(
                served.store.root, served.store.name, settings, scribe=self.config.scribe_for(served.config)
            )

    def profile(self, selector: str | None = None) -> dict[str, Any]:
        config = self.served(selector).config
        return {
            "store": config.name,
            "label": config.label,
            "charter": config.charter,
            "persona": config.persona,
        }

    @_private_paths
    def memory(self, slug: str, selector: str | None = None) -> dict[str, Any]:
        store = self.served(selector).store
        data, memory = read_named(store, slug)  # by slug, else by the title or alias a link uses
        return {
            **memory.to_dict(),
            "linked": linked(store, memory.note.links),
            "path": _rel(store, memory.path),
            "text": data.decode("utf-8", "replace"),
        }

    @_private_paths
    def memories(
        self, type: str | None = None, selector: str | None = None, *, everything: bool = False
    ) -> list[dict[str, Any]]:
        """The current memories (of ``type``); ``everything``: archived and superseded too."""
        if type is not None and type not in TYPES:
            raise InvalidRequest(f"type {type!r} is not one of {', '.join(TYPES)}")
        found = listing(self.served(selector).store, type=type, everything=everything)
        return [m.to_dict() for m in found.memories]

    def recent(
        self, selector: str | None = None, *, since: str = DEFAULT_SINCE, type: str | None = None
    ) -> dict[str, Any]:
        """The memories created, changed, superseded or forgotten since ``since``, newest first."""
        if type is not None and type not in TYPES:
            raise InvalidRequest(f"type {type!r} is not one of {', '.join(TYPES)}")
        return recent_activity(self.served(selector).store, since=since, type=type).to_dict()

    @_private_paths
    def doctor(self, selector: str | None = None) -> dict[str, Any]:
        name = self.name(selector)
        try:
            served = self.served(name)
            report: dict[str, Any] = diagnose(served.store, self.config.map_settings(served.config)).to_dict()
        except KuraError as err:  # a store too broken to examine (or gone) is a finding, not a failed request
            finding = {"check": "store", "severity": "error", "path": name, "line": 1,
                       "message": self.private(str(err))}  # fmt: skip
            report = {"store": name, "memories": 0, "types": {}, "healthy": False,
                      "findings": [finding]}  # fmt: skip
        return report

    @_private_paths
    def recall(
        self,
        question: str,
        *,
        top: int = RECALL.top,
        hops: int = RECALL.hops,
        chars: int = RECALL.chars,
        selector: str | None = None,
        at: str = "",
    ) -> dict[str, Any]:
        """What the store remembers about ``question`` (``at``: as it stood on that day)."""
        if not question.strip():
            raise InvalidRequest("the question is empty; ask about something")
        day = RecallRequest(question, top=top, hops=hops, chars=chars, at=at).checked().day()
        served = self.served(selector)
        found = self._recall(served, question, top=top, hops=hops, chars=chars, at=day)
        person = self.config.beside(served.config)
        if person is None:
            return labelled(found.to_dict())
        other = self.served(person.name, beside=True)
        also = self._recall(other, question, top=top, hops=hops, chars=chars, at=day)
        both = joined((served.store, other.store), (found, also), question, top=top, chars=chars)
        return labelled(both.to_dict())

    def _beside(self, served: _Served) -> Beside | None:
        """The person's store beside the project's, its index fresh, for context."""
        person = self.config.beside(served.config)
        if person is None:
            return None
        other = self.served(person.name, beside=True)
        with other.lock:
            index = self._fresh_index(other)
        return Beside(other.store, self.config.map_settings(person), index=index, guard=other.lock)

    def _recall(
        self, served: _Served, question: str, *, top: int, hops: int, chars: int, at: _dt.date | None = None
    ) -> Recall:
        with served.lock:
            index = self._fresh_index(served)
        thinker = self.config.thinker_for(served.config)
        return recall(served.memo.over(served.store), question, top=top, hops=hops, chars=chars, index=index,
                      thinker=thinker, guard=served.lock, at=at)  # fmt: skip

    @_private_paths
    def context(
        self,
        task: str,
        *,
        budget: int = CONTEXT.budget,
        selector: str | None = None,
        recent: int = 0,
        journal: Path | None = None,
    ) -> dict[str, Any]:
        """What a model about to do ``task`` would be told (``kura.recall.context``)."""
        if not task.strip():
            raise InvalidRequest("the task is empty; say what the model is about to do")
        ContextRequest(task, budget=budget).checked()
        served = self.served(selector)
        with served.lock:
            index = self._fresh_index(served)
        thinker = self.config.thinker_for(served.config)
        told = context(served.store, task, budget=budget, settings=self.config.map_settings(served.config),
                       index=index, thinker=thinker, guard=served.lock, recent=recent,
                       journal=journal, beside=self._beside(served))  # fmt: skip
        return told.to_dict()

    # -- writing -----------------------------------------------------------------------

    @_private_paths
    def remember(
        self,
        slug: str,
        description: str,
        body: str | None = None,
        *,
        type: str | None = None,
        title: str | None = None,
        selector: str | None = None,
        session: str = "",
        supersedes: str | None = None,
    ) -> dict[str, Any]:
        """Write a memory for an agent over a tool: its witness is MANUAL (kura.files.witness), so
        on its own it is on record, not asserted, until other evidence joins it. ``supersedes``:
        the memory it replaces (``kura.life.corrections``)."""
        served = self.served(selector)
        if self.readonly:
            raise PolicyRefused(f"this service is read-only; store '{served.store.name}' is not written here")
        seen = Witness(kind="MANUAL", when=_dt.date.today(), session=" ".join(session.split())[:120])
        done = remember(  # the witness goes in with the write, under its lock
            served.store, slug, description, body, type=type, title=title, supersedes=supersedes,
            amend=functools.partial(witnessed, witness=seen, slug=slug),
        )  # fmt: skip
        result = done.result
        with served.lock:
            if served.index is not None:
                served.index.refresh([result.slug, *([done.superseded] if done.superseded else [])])
        return {
            "store": served.store.name, "slug": result.slug, "path": _rel(served.store, result.path),
            "created": result.created, "changed": result.changed, "index_changed": result.index_changed,
            "body_kept": result.body_kept, "superseded": done.superseded or None,
            "revises": done.revises or None, "notes": _notes(done),
        }  # fmt: skip

    def watching(self, name: str) -> None:
        """A file watcher now tells this store's changes to ``changed``: its files are walked
        for the stamp only every ``WATCHED_SECONDS``."""
        self._watched.add(name)

    def changed(self, rels: set[str], selector: str | None = None) -> None:
        """Files changed on disk (the edge's watcher says which): refresh what is warm,
        then tell whoever listens (``hear``: MCP sessions, whose resource lists moved)."""
        served = self.served(selector)
        with served.lock:
            if served.index is not None:
                slugs = [rel[:-3] for rel in rels if rel.endswith(".md") and rel != "MEMORY.md"]
                if any(rel.endswith("/") for rel in rels):
                    served.checked = 0.0  # a folder moved: let the next call compare everything
                elif slugs:
                    served.index.refresh(slugs)
        with self._lock:
            self._changes[served.config.name] = self._changes.get(served.config.name, 0) + 1
            hearers = list(self._hearers)
        for tell in hearers:
            tell()

    def hear(self, tell: Callable[[], None]) -> None:
        """Call ``tell()`` after each change ``changed`` takes in (from the caller's thread)."""
        with self._lock:
            self._hearers.append(tell)

    def close(self) -> None:
        with self._lock:
            for served in self._served.values():
                if served.build is not None:
                    served.build.stop()
                if served.index is not None:
                    served.index.close()
            self._served.clear()

    def _fresh_index(self, served: _Served) -> SearchIndex:
        """The store's index, its words current; a small store's vectors too, a big one's
        made by a background build while questions are answered from what there is."""
        if served.index is None:
            embedder = remote_embedder(self.config.embedder_for(served.config))
            served.index = SearchIndex(served.memo.over(served.store), embedder=embedder, shared=True)
            detach = (served.config.path, self.config.source) if self.detach else None
            served.build = Background(served.index, served.lock, detach=detach)
        every = WATCHED_SECONDS if served.config.name in self._watched else FRESH_SECONDS
        if time.monotonic() - served.checked >= every:
            building = served.build is not None and served.build.running
            served.index.update(budget=None if building else env_budget(AT_ONCE))
            served.checked = time.monotonic()
            if served.build is not None:  # it decides: build, follow another process's build, or nothing
                served.build.start()
        return served.index


def _notes(done: Remembered) -> list[str]:
    """What the writer should know, said for a client (``kura.cli.commands`` says it for a shell)."""
    notes = []
    if done.result.body_kept:
        notes.append("the body was not changed: it is not the old description, so it was written on purpose "
                     "and may still say what the old one said — send body as well to change it")  # fmt: skip
    if done.result.revived:
        notes.append(f"{done.result.slug} was forgotten (archived {done.result.revived}); this write "
                     "made it current again — if it should stay forgotten, the person can forget it "
                     "again")  # fmt: skip
    if done.revises:
        notes.append(f'{done.result.slug} appears to revise {done.revises} ("{done.revised_claim}"), which '
                     f'stays current beside it; if it replaces that one, write it again with supersedes: '
                     f'"{done.revises}"')  # fmt: skip
    return notes


def _rel(store: Store, path: Path) -> str:
    """A memory's path as the store knows it (never the folder it lives in on this machine)."""
    try:
        return path.relative_to(store.root).as_posix()
    except ValueError:
        return path.name
