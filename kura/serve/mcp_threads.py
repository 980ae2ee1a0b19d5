"""The MCP tools of threads: ``kura_memory`` (Talon's ``memory_access``) and ``kura_observe``.

``ThreadTools`` is ``kura.serve.mcp_tools.Tools`` with these two added, so the memory tools
are untouched. Which thread a call reaches is the server's decision
(``kura.serve.thread_ops``): ``kura mcp --thread ID`` binds the process, and a host that
connects to ``/mcp?thread=ID`` binds its connection (the URL is the host's configuration,
not the model's words). Bound, the tools lose their ``thread`` argument, as a bound store's
tools lose ``store``, and a call that names another thread anyway is refused. Unbound, the
model names the thread in each call.

``kura_memory`` reads and lists on a read-only server; its writes, and ``kura_observe``
(hidden there), need a writable one.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
from collections.abc import Mapping
from typing import Any

from kura.errors import InvalidRequest, KuraError, PolicyRefused
from kura.recall.recall import FRAME
from kura.recall.working import MAX_RECENT
from kura.serve import thread_ops
from kura.serve.mcp_specs import STORE, Param, Spec
from kura.serve.mcp_text import context_text
from kura.serve.mcp_tools import STDIO_UNLOCK, Backend, Tools, _safe, _value
from kura.serve.pool import StorePool
from kura.threads import NAMESPACES, thread_id

log = logging.getLogger("kura.mcp")

THREAD = Param(
    "thread", "The thread whose memory to use, e.g. support-4711.", ("thread_id", "threadid", "conversation")
)
MEMORY = Spec(
    "kura_memory", "This thread's keyed memory",
    "Keep and read back notes for this thread by key: operation write (key, value, namespace), "
    "read (key), list (optionally one namespace), delete (key), or update (updates: a map of "
    'key to value, e.g. {"work:current-project": "…"}, written in one call). A key is a short '
    "name, e.g. user-format-preference, with ':' for a namespace of your own (work:current-project). "
    "namespace is fact, summary, observation or note. Each item is a file the person can read "
    "and edit: read it again rather than trust what you wrote earlier. Never store secrets.",
    (
        Param("operation", "write, read, list, delete, update or search.", ("op", "action", "do"),
              required=True, choices=thread_ops.OPERATIONS),
        Param("key", "The item's key, e.g. user-format-preference or work:current-project.",
              ("name", "id", "slug")),
        Param("value", "The text to keep under the key (write).", ("text", "content", "body", "note")),
        Param("namespace", "fact, summary, observation or note.", ("type", "kind", "category"),
              choices=NAMESPACES),
        Param("query", "What to look for among the items, in your own words (search).",
              ("question", "q", "search", "about")),
        THREAD,
        STORE,
    ),
    read_only=False, destructive=True,
)  # fmt: skip
OBSERVE = Spec(
    "kura_observe", "Note an observation",
    "Add one line to the observation log: something you noticed that the next session should "
    "know (a decision, a blocker, open work), with its priority — high (🔴, kept until "
    "resolved), medium (🟡) or low (🟢) — and, when it helps, the task you are on and what "
    "should come next. The log is consolidated by itself when it grows; an unresolved high "
    "entry is never dropped.",
    (
        Param("text", "What you noticed, one line.", ("observation", "note", "what"), required=True),
        Param("priority", "high, medium (default) or low.", ("level", "importance"),
              choices=("high", "medium", "low")),
        Param("current_task", "The task you are on.", ("task", "currenttask")),
        Param("suggested_continuation", "What should come next.",
              ("next", "continuation", "suggestedcontinuation")),
        THREAD,
        STORE,
    ),
    read_only=False,
)  # fmt: skip
MEMORY_READING = dataclasses.replace(
    MEMORY,
    help="Read back this thread's notes by key: operation read (key), list (optionally one "
    "namespace) or search (query: the items that bear on it, by meaning). A key is a short name, "
    "e.g. user-format-preference, with ':' for a namespace (work:current-project). This server "
    "is read-only: it keeps no new notes.",
    params=tuple(
        dataclasses.replace(p, help="read, list or search.", choices=thread_ops.READS)
        if p.name == "operation"
        else dataclasses.replace(p, help="Namespace to list: fact, summary, observation or note.")
        if p.name == "namespace"
        else p
        for p in MEMORY.params
        if p.name != "value"
    ),
    read_only=True,
    destructive=False,
)  # what a read-only server offers: the operations it would refuse are not listed
OURS = {MEMORY.name: MEMORY, OBSERVE.name: OBSERVE}
_UPDATES = ("updates", "memoryupdates", "memory_updates", "map")
_WORKING = {
    "recent": {"type": "integer", "minimum": 0, "maximum": MAX_RECENT, "default": 0,
               "description": "Carry the last N messages of journal as working memory."},
    "journal": {"type": "string", "description": "The transcript to carry the last messages of."},
}  # fmt: skip


class ThreadTools(Tools):
    """The memory tools plus the thread tools; ``thread`` binds every call to one thread."""

    def __init__(
        self, backend: Backend, *, readonly: bool, unlock: str = STDIO_UNLOCK, thread: str | None = None
    ) -> None:
        super().__init__(backend, readonly=readonly, unlock=unlock)
        self.thread = thread_id(thread) if thread is not None else None

    def listed(self, session: str | None, thread: str | None = None) -> list[tuple[Spec, dict[str, Any]]]:
        offered = super().listed(session)
        if self._service() is None:
            return offered  # a proxy (KURA_URL) serves the memory tools only
        bound = self._bound_or_none(thread)
        for spec in (MEMORY_READING if self.readonly else MEMORY, OBSERVE):
            if spec is OBSERVE and self.readonly:
                continue
            schema = self.schema(spec, self._stores_hint())
            if bound is not None:
                schema["properties"].pop("thread", None)
            else:
                schema["required"] = sorted({*schema.get("required", []), "thread"})
            if spec is MEMORY:  # the writing one
                schema["properties"]["updates"] = {
                    "type": "object", "additionalProperties": {"type": "string"},
                    "description": 'update: a map of key to value, e.g. {"work:current-project": "…"}.',
                }  # fmt: skip
            offered.append((spec, schema))
        for spec, schema in offered:
            if spec.name == "kura_context":
                schema["properties"].update(copy.deepcopy(_WORKING))
                schema["properties"]["journal"]["description"] += " " + self._journals_hint(session)
        return offered

    def _journals_hint(self, session: str | None) -> str:
        service = self._service()
        try:
            assert service is not None
            return thread_ops.journal_names(service, self._selector(self.current(session)))
        except KuraError:  # no store to name them for: a call says why
            return ""

    def call(
        self, name: str, arguments: Mapping[str, Any] | None, session: str | None, thread: str | None = None
    ) -> tuple[str, bool]:
        given = dict(arguments or {})
        working = {k: given.pop(k) for k in list(given) if k in _WORKING}
        if name == "kura_context" and working and self._service() is not None:
            return self._context(given, session, working)
        if name not in OURS:
            return super().call(name, arguments, session)
        try:
            return self._thread_call(OURS[name], dict(arguments or {}), session, thread), False
        except KuraError as err:
            return _safe(str(err)), True
        except Exception as err:  # an edge: a bug must not take the server down
            log.exception("%s failed", name)
            return _safe(
                f"{name} failed unexpectedly ({type(err).__name__}: {err}); this is a kura bug"
            ), True

    def _thread_call(self, spec: Spec, given: dict[str, Any], session: str | None, thread: str | None) -> str:
        service = self._service()
        if service is None:
            raise InvalidRequest(f"{spec.name} needs the stores in this process; unset KURA_URL to use it")
        bound = self._bound(thread)
        updates = [given.pop(k) for k in list(given) if k.strip().lower().replace("-", "_") in _UPDATES]
        args = self.arguments(spec, given)
        selector = self._selector(args.pop("store", None) or self.current(session))
        common = {"bound": bound, "thread": args.pop("thread", None), "readonly": self.readonly,
                  "unlock": self.unlock}  # fmt: skip
        if spec is OBSERVE:
            done = thread_ops.observation(
                service, selector, text=args["text"], priority=args.get("priority", "medium"),
                task=args.get("current_task", ""), continuation=args.get("suggested_continuation", ""),
                source="mcp", **common,
            )  # fmt: skip
            return _observed_text(done)
        if len(updates) > 1:
            raise InvalidRequest("kura_memory got updates twice; pass one map")
        found = thread_ops.memory(
            service,
            selector,
            operation=args["operation"],
            key=args.get("key"),
            value=args.get("value"),
            namespace=args.get("namespace"),
            updates=_map(updates[0]) if updates else None,
            query=args.get("query"),
            **common,
        )
        return _memory_text(args["operation"], found)

    def _context(
        self, given: dict[str, Any], session: str | None, working: dict[str, Any]
    ) -> tuple[str, bool]:
        """``kura_context`` with working memory: the last ``recent`` messages of ``journal``,
        one of the store's configured journals (never a file the model picks)."""
        try:
            spec = next(s for s, _ in super().listed(session) if s.name == "kura_context")
            args = self.arguments(spec, given)
            recent = _value(spec.name, Param("recent", "", range=(0, MAX_RECENT)), working.get("recent", 0))
            service = self._service()
            assert service is not None
            selector = self._selector(args.pop("store", None) or self.current(session))
            journal = thread_ops.journal_path(service, selector, working.get("journal"), recent=recent)
            told = service.context(args["task"], budget=args["budget"], selector=selector, recent=recent,
                                   journal=journal)  # fmt: skip
            return context_text(told), False
        except KuraError as err:
            return _safe(str(err)), True

    def _service(self) -> StorePool | None:
        service = getattr(self.backend, "service", None)
        return service if isinstance(service, StorePool) else None

    def _bound(self, thread: str | None) -> str | None:
        """The thread this call is bound to: the process's (``--thread``), the connection's
        (``/mcp?thread=``), or none; the two disagreeing is refused."""
        given = thread_id(thread) if thread not in (None, "") else None
        if self.thread is not None and given is not None and given != self.thread:
            raise PolicyRefused(
                f"this server is bound to thread '{self.thread}'; the URL's thread is not served"
            )
        return self.thread or given

    def _bound_or_none(self, thread: str | None) -> str | None:
        try:
            return self._bound(thread)
        except KuraError:
            return self.thread


def _map(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise InvalidRequest("updates must be a map of key to value (JSON object)") from None
    if not isinstance(raw, dict):
        raise InvalidRequest(f"updates must be a map of key to value, got {type(raw).__name__}")
    return raw


def _memory_text(operation: str, found: dict[str, Any]) -> str:
    thread = found.get("thread")
    if operation == "read":
        head = f"{found['key']} ({found['namespace']}, updated {found['updated']}) in thread '{thread}'"
        return f"{head}:\n{found['value']}"
    if operation == "list":
        items = found["items"]
        which = f" in namespace {found['namespace']}" if found.get("namespace") else ""
        if not items:
            return f"thread '{thread}' has no items{which}; operation write keeps one"
        lines = [f"- {i['key']} ({i['namespace']}): {_first_line(i['value'])}" for i in items]
        return f"{len(items)} item(s) in thread '{thread}'{which}:\n" + "\n".join(lines)
    if operation == "delete":
        return f"deleted {found['key']} from thread '{thread}' (its last text is kept in {found['kept']})"
    if operation == "search":
        if not found["items"]:
            return f"nothing in thread '{thread}' bears on {found['query']!r}"
        items = found["items"]
        lines = [f"=== {i['key']} ({i['namespace']}, score {i['score']}) ===\n{i['value']}" for i in items]
        return f"{FRAME}\n\n" + "\n\n".join(lines)
    written = found["written"] if operation == "update" else [found]
    said = [
        f"{w['key']} ({w['namespace']}): "
        + ("created" if w["created"] else "updated" if w["changed"] else "unchanged")
        for w in written
    ]
    return f"wrote in thread '{written[0]['thread']}': " + "; ".join(said)


def _observed_text(done: dict[str, Any]) -> str:
    entry = done["entry"]
    where = f"thread '{done['thread']}'" if done.get("thread") else f"store '{done['store']}'"
    text = f"observed {entry['marker']} {entry['text']} in the log of {where} ({done['log']})"
    if done.get("consolidated"):
        c = done["consolidated"]
        text += f"; the log had grown, so it was consolidated: {c['dropped']} dropped, {c['kept']} kept"
    return text


def _first_line(value: str) -> str:
    line = value.strip().split("\n", 1)[0]
    return line if len(line) <= 120 else line[:119] + "…"
