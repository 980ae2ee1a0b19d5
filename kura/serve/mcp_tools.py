"""The MCP tools themselves, apart from the SDK: what is offered, what each takes, what
it answers. ``kura.serve.mcp_server`` wires them to the protocol.

The tool list is not fixed. Bound to one store (``KURA_STORE``/``--store``), the store
argument vanishes from every tool and ``kura_use`` is not offered — least disclosure: a
model does not name what it is not told exists. Read-only (``KURA_READONLY``, on unless
turned off) hides ``kura_remember`` and refuses it if called anyway; so does a store whose
write policy takes no direct writes. Hiding is a courtesy to the model; the refusal (here,
and the store's own policy check below it) is the guarantee.

Models guess parameter names (``query`` for ``question``, ``name`` for ``slug``), so each
tool takes its own names plus the ones models reach for, normalised before any check;
numbers sent as strings are accepted too. Anything wrong — an unknown argument, a missing
one, a value out of range, an unknown store, no such memory, a policy refusal, even a bug —
becomes one line saying what to do, returned as an error result: a model can read that and
correct itself, where a protocol error or a dead server only stops it.

Answers are plain text written for a model to read (the recalled memories themselves, a
listing), not JSON: the structured forms are the HTTP API's job.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Protocol

from kura.errors import InvalidRequest, KuraError, PolicyRefused
from kura.life.edit_say import edited_text
from kura.life.history import lines as history_lines
from kura.life.recent import DEFAULT_SINCE
from kura.life.recent import lines as recent_lines
from kura.serve.mcp_specs import (
    CONTEXT,
    DOCTOR,
    EDIT,
    HISTORY,
    LIST,
    MAP,
    READ,
    RECALL,
    RECENT,
    REMEMBER,
    SPECS,
    USE,
    Param,
    Spec,
    instructions,
)
from kura.serve.mcp_text import (
    MAX_ECHO,
    context_text,
    doctor_text,
    memories_text,
    read_text,
    recall_text,
    remember_text,
    stores_text,
)
from kura.text.secrets import find_secret

log = logging.getLogger("kura.mcp")

MAX_SESSIONS = 4096  # sessions whose kura_use choice is remembered (streamable HTTP)
# CLI advice inside core messages, said the way a model can act on it
STDIO_UNLOCK = "restart `kura mcp` with --writable (or KURA_READONLY=0)"
_HINTS = (("`kura list` shows what there is", "kura_list shows the slugs, kura_recall finds by meaning"),)


class Backend(Protocol):
    """What the tools call: the stores in this process, or a running ``kura serve``."""

    bound: str | None

    def stores(self) -> list[dict[str, Any]]: ...
    def name(self, selector: str | None) -> str: ...
    def writable(self, selector: str | None) -> bool: ...
    def recall(
        self, selector: str | None, question: str, top: int, hops: int, chars: int, at: str = ""
    ) -> dict[str, Any]: ...
    def read(self, selector: str | None, slug: str) -> dict[str, Any]: ...
    def context(self, selector: str | None, task: str, budget: int) -> dict[str, Any]: ...
    def map(self, selector: str | None) -> str: ...
    def doctor(self, selector: str | None) -> dict[str, Any]: ...
    def memories(self, selector: str | None, type: str | None) -> list[dict[str, Any]]: ...  # all, with state
    def remember(self, selector: str | None, **fields: Any) -> dict[str, Any]: ...
    def recent(self, selector: str | None, since: str, type: str | None) -> dict[str, Any]: ...
    def edit(self, selector: str | None, **fields: Any) -> dict[str, Any]: ...
    def history(self, selector: str | None, slug: str) -> dict[str, Any]: ...


WRITES = (REMEMBER, EDIT)  # offered only where this server may write
_SYNONYMS = {"store": "stores", "mode": "stores", "modes": "stores", "memory": "memories", "all": "memories"}


class Tools:
    """What the tools do, apart from the SDK: check arguments, call the back end, write
    text for the model. Thread-safe: calls arrive on worker threads."""

    def __init__(self, backend: Backend, *, readonly: bool, unlock: str = STDIO_UNLOCK) -> None:
        """``unlock``: how the person lets this server write, in the words of the command that
        started it (a refusal names a flag that command has)."""
        self.backend = backend
        self.readonly = readonly
        self.unlock = unlock
        self.bound = backend.bound
        self._current: OrderedDict[str, str] = OrderedDict()  # session -> store chosen by kura_use
        self._lock = threading.Lock()

    # -- what is offered -----------------------------------------------------------------

    def listed(self, session: str | None) -> list[tuple[Spec, dict[str, Any]]]:
        stores = self._stores_hint()
        offered = [s for s in SPECS if s is not USE or self.bound is None]
        if not self.may_write(self.current(session)):
            offered = [s for s in offered if s not in WRITES]
        return [(spec, self.schema(spec, stores)) for spec in offered]

    def schema(self, spec: Spec, stores_hint: str = "") -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for p in self._params(spec):
            kind = "integer" if p.range else "boolean" if p.flag else "string"
            prop: dict[str, Any] = {"type": kind, "description": p.help}
            if p.name == "store" and stores_hint:
                prop["description"] += f" {stores_hint}"
            if p.range:
                prop.update(minimum=p.range[0], maximum=p.range[1], default=p.default)
            if p.choices:
                prop["enum"] = list(p.choices)
            properties[p.name] = prop
        required = [p.name for p in self._params(spec) if p.required]
        return {"type": "object", "properties": properties, **({"required": required} if required else {})}

    def may_write(self, selector: str | None) -> bool:
        if self.readonly:
            return False
        try:
            return self.backend.writable(self._selector(selector))
        except KuraError:
            return False

    def instructions(self) -> str:
        """The server's ``instructions`` (``kura.serve.mcp_specs.instructions``)."""
        return instructions(readonly=self.readonly, bound=self.bound is not None)

    # -- calling ---------------------------------------------------------------------------

    def call(self, name: str, arguments: Mapping[str, Any] | None, session: str | None) -> tuple[str, bool]:
        """(text, is_error) for one tool call; never raises. An error repeats at most
        ``MAX_ECHO`` characters of any value it quotes, and never a secret."""
        try:
            return self._call(name, dict(arguments or {}), session), False
        except KuraError as err:
            message = str(err)
            for cli, tool in _HINTS:
                message = message.replace(cli, tool)
            return _safe(message), True
        except Exception as err:  # an edge: a bug must not take the server down
            log.exception("%s failed", name)
            return _safe(
                f"{name} failed unexpectedly ({type(err).__name__}: {err}); this is a kura bug"
            ), True

    def _call(self, name: str, given: dict[str, Any], session: str | None) -> str:
        spec = next((s for s in SPECS if s.name == name), None)
        if spec is USE and self.bound is not None:
            raise InvalidRequest(f"kura_use is not offered: this server is bound to store '{self.bound}'")
        if spec is None:
            offered = ", ".join(s.name for s, _ in self.listed(session))
            raise InvalidRequest(f"there is no tool {name!r}; the kura tools are {offered}")
        if spec in WRITES and self.readonly:
            raise PolicyRefused(
                f"{spec.name} is off: this MCP server is read-only; tell the user what you would save "
                f"(to let you write, they can {self.unlock})"
            )
        args = self.arguments(spec, given)
        if spec is USE:
            return self._use(args["store"], session)
        store = self._selector(args.pop("store", None) or self.current(session))
        backend = self.backend
        if spec is RECALL:
            return recall_text(
                backend.recall(
                    store, args["question"], args["top"], args["hops"], args["chars"], args.get("at", "")
                )
            )
        if spec is CONTEXT:
            return context_text(backend.context(store, args["task"], args["budget"]))
        if spec is READ:
            return read_text(backend.read(store, args["slug"]))
        if spec is MAP:
            return backend.map(store)
        if spec is DOCTOR:
            return doctor_text(backend.doctor(store))
        if spec is LIST and args.get("what") == "stores":
            return stores_text(self._visible(backend.stores()), self._name_or_none(store))
        if spec is RECENT:
            return "\n".join(
                recent_lines(backend.recent(store, args.get("since", DEFAULT_SINCE), args.get("type")))
            )
        if spec is LIST:
            rows = backend.memories(store, args.get("type"))
            return memories_text(rows, self._name_or_none(store), everything=args.get("all", False))
        if spec is HISTORY:
            found = backend.history(store, args["slug"])
            return "\n".join(history_lines(found, full=args.get("full", False)))
        if spec is EDIT:
            return edited_text(backend.edit(store, **args))
        return remember_text(backend.remember(store, **args))

    def arguments(self, spec: Spec, given: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments under their own names, checked; aliases and numbers in
        strings are accepted, anything else is refused with what the tool does take."""
        by_key = {key: p for p in spec.params for key in (p.name, *p.aliases)}
        found: dict[str, Any] = {}
        source: dict[str, str] = {}
        unknown = [key for key in given if _key(key) not in by_key]
        if unknown:
            raise InvalidRequest(
                f"{spec.name} does not take {', '.join(map(repr, unknown))}; it takes {self._takes(spec)}"
            )
        for key, raw in given.items():
            p = by_key[_key(key)]
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                continue
            value = _value(spec.name, p, raw)
            if p.name in found and found[p.name] != value:
                raise InvalidRequest(
                    f"{spec.name} got both {source[p.name]!r} and {key!r}; pass {p.name} once"
                )
            found[p.name], source[p.name] = value, key
        for p in spec.params:
            if p.required and p.name not in found:
                raise InvalidRequest(f"{spec.name} needs {p.name}: {p.help}")
            if p.default is not None:
                found.setdefault(p.name, p.default)
        if self.bound is not None and spec is not USE and not self._is_bound(found.get("store")):
            raise InvalidRequest(f"this server serves only store '{self.bound}'; leave store out")
        return found

    def _is_bound(self, selector: str | None) -> bool:
        """Whether ``selector`` names the bound store — by the store it resolves to (the
        back end's ``name``: a mode counts as its store, locally or through ``/stores`` in
        proxy mode), so a mode and its store are one. A name that does not resolve is
        refused without saying what does (least disclosure)."""
        if selector is None or selector == self.bound:
            return True
        try:
            return self.backend.name(selector) == self.backend.name(self.bound)
        except KuraError:
            return False

    # -- sessions ----------------------------------------------------------------------------

    def current(self, session: str | None) -> str | None:
        with self._lock:
            return self._current.get(session) if session is not None else None

    def _use(self, selector: str, session: str | None) -> str:
        if session is None:
            raise InvalidRequest(
                "this connection has no session to remember a store in; pass store to each call"
            )
        name = self.backend.name(selector)
        with self._lock:
            self._current[session] = name
            self._current.move_to_end(session)
            while len(self._current) > MAX_SESSIONS:
                self._current.popitem(last=False)
        row = next((s for s in self.backend.stores() if s["name"] == name), {})
        label = f" ({row['label']})" if row.get("label") else ""
        why = "this server is read-only" if self.readonly else row.get("write_policy")
        writes = "kura_remember writes here" if self.may_write(name) else f"read-only here ({why})"
        return f"now using store '{name}'{label} for this session; {writes}"

    # -- helpers -------------------------------------------------------------------------------

    def _selector(self, selector: str | None) -> str | None:
        return self.bound if self.bound is not None else selector

    def _params(self, spec: Spec) -> list[Param]:
        return [p for p in spec.params if spec is USE or p.name != "store" or self.bound is None]

    def _takes(self, spec: Spec) -> str:
        return ", ".join(
            p.name
            + (" (required)" if p.required else "")
            + (f" (or {'/'.join(p.aliases[:2])})" if p.aliases else "")
            for p in self._params(spec)
        )

    def _stores_hint(self) -> str:
        if self.bound is not None:
            return ""
        try:
            rows = self.backend.stores()
        except KuraError:
            return ""
        modes = sorted(m for row in rows for m in row.get("modes", []))
        return f"One of: {', '.join(r['name'] for r in rows)}" + (
            f"; modes: {', '.join(modes)}." if modes else "."
        )

    def _visible(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.bound is None:
            return rows
        return [r for r in rows if r["name"] == self.bound or self.bound in r.get("modes", [])]

    def _name_or_none(self, selector: str | None) -> str:
        try:
            return self.backend.name(selector)
        except KuraError:
            return selector or "?"


def _key(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def _safe(message: str) -> str:
    """An error message fit to send back: any quoted value cut to ``MAX_ECHO`` characters,
    the whole to a few times that, and nothing at all of it if it holds a secret."""
    kind = find_secret(message)
    if kind:
        return (
            f"the call was refused, but its message would have repeated a secret ({kind}), so it is not shown"
        )
    message = _QUOTED.sub(lambda m: f"'{m.group(1) or m.group(2)}…'", message)
    return message if len(message) <= 5 * MAX_ECHO else message[: 5 * MAX_ECHO] + "…"


_FLAGS = {
    "true": True,
    "false": False,
    "1": True,
    "0": False,
    "yes": True,
    "no": False,
    "on": True,
    "off": False,
}
_QUOTED = re.compile(rf"'([^'\n]{{{MAX_ECHO}}})[^'\n]+'" + rf'|"([^"\n]{{{MAX_ECHO}}})[^"\n]+"')


def _value(tool: str, p: Param, raw: Any) -> Any:
    if p.range is not None:
        low, high = p.range
        number = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
        if isinstance(raw, float) and raw.is_integer():
            number = int(raw)
        elif isinstance(raw, str) and re.fullmatch(r"-?[0-9]{1,9}", raw.strip()):
            number = int(raw.strip())
        if number is None or not low <= number <= high:
            raise InvalidRequest(f"{tool}: {p.name} must be a whole number from {low} to {high}, got {raw!r}")
        return number
    if p.flag:
        said = str(raw).strip().lower() if isinstance(raw, str | int) else None  # a bool is an int
        if said is None or said not in _FLAGS:
            raise InvalidRequest(f"{tool}: {p.name} must be true or false, got {raw!r}")
        return _FLAGS[said]
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise InvalidRequest(f"{tool}: {p.name} must be text, got {type(raw).__name__} {raw!r}"[:300])
    text = str(raw) if p.name == "body" else str(raw).strip()
    if p.choices:
        text = _SYNONYMS.get(text.lower(), text.lower())
        if text not in p.choices:
            raise InvalidRequest(f"{tool}: {p.name} must be one of {', '.join(p.choices)}, got {raw!r}")
    return text
