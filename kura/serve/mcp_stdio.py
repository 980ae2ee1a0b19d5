"""``kura mcp`` on stdio: the handshake answered before the SDK is loaded.

A host starts ``kura mcp`` and waits for its answer to its opening — ``initialize``, or
``server/discover`` at protocol 2026-07-28, as Claude Code 2.1.332 opens; Claude Code, run
headless, tells the model that a server "is still connecting" when its first turn comes
sooner. Importing the ``mcp`` SDK (pydantic models of every protocol revision, its client
and its HTTP servers) costs about a second of CPU, and kura's core a quarter of one. So the
first requests are answered here, from what is already known: ``initialize`` or
``server/discover`` from the command line alone (read-only or not, bound to a store or not:
``kura.serve.mcp_specs``), then, once the tools are made, ``tools/list`` in the same era
(the SDK's words for the two protocols: the handshake, and 2026-07-28's per-request
envelope, where each result also carries cache hints and the server's identity in
``_meta``). Then a thread imports the SDK (not sooner:
its imports would slow the tool list down); when it is ready, or a request only it can
answer comes, the stream goes to the SDK's server (``kura.serve.mcp_server``), which
answers everything from then on. It reads again every message that came before, so its
session is in the state the host believes; its answers to requests already answered here
are not sent but compared with what was, and a difference is logged (a test keeps them
equal).

Only what can be answered exactly is answered here: ``initialize`` as the first message,
for a handshake revision, with well-formed parameters, or ``server/discover`` as the first
message with a plain 2026-07-28 envelope (``_enveloped``); ``tools/list`` after it, in the
same era. Anything else — a ping, a tool call, a line that is not JSON, a newer revision,
a request of the other era — waits for the SDK.
Setup mistakes (no such store, a broken kura.toml) are found before anything is answered,
as the full server found them, so a host reports a server that failed to start.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

from kura.config import load_config
from kura.serve.mcp_specs import NAME, TITLE, instructions
from kura.version import __version__

if TYPE_CHECKING:
    from kura.serve.mcp_threads import ThreadTools

log = logging.getLogger("kura.mcp")

# the SDK's HANDSHAKE_PROTOCOL_VERSIONS: an initialize asking for one is answered here
HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"  # its MODERN_PROTOCOL_VERSIONS' one: a server/discover envelope naming it
_KEY = "io.modelcontextprotocol/"  # the envelope's keys in params._meta, and the result's stamp
VERSION, CLIENT, CAPABILITIES = f"{_KEY}protocolVersion", f"{_KEY}clientInfo", f"{_KEY}clientCapabilities"
_INFO_KEYS = ("name", "version", "title", "description", "websiteUrl")  # text fields of clientInfo
_CAPABILITY_FIELDS = {"elicitation": ("form", "url"), "sampling": ("context", "tools")}  # objects, each
EOF = ""  # the line queue's last item: a line read is never empty
READY = "\0ready"  # put in the line queue when the SDK is loaded (compared by identity)
_SDK = ("anyio", "mcp.server.lowlevel", "mcp.server.stdio")  # what the hand-off needs
_SCHEMA_KEYS = ("properties", "required", "type")  # the SDK's order; any other key: its answer


def check(config: str | None, store: str | None, *, thread: str | None, env: Mapping[str, str]) -> None:
    """Raise the ``KuraError`` the full server would meet at start (``open_backend``,
    ``ThreadTools``) without opening anything: an unknown store, a missing folder, a
    broken kura.toml, a thread id that is not one. A proxy (``KURA_URL``) checks nothing."""
    if not env.get("KURA_URL"):
        load_config(config).store_config(store)
    if thread is not None:
        from kura.threads.names import thread_id  # not at the top: kura.threads loads the store

        thread_id(thread)


def serve(
    config: str | None, store: str | None, *, readonly: bool, thread: str | None, env: Mapping[str, str]
) -> None:
    """Serve the tools on this process's stdin and stdout until the host closes stdin."""

    def made() -> ThreadTools:
        from kura.serve.mcp_server import open_backend  # not at the top: kura's core, after hello
        from kura.serve.mcp_threads import ThreadTools

        backend = open_backend(config, store, readonly=readonly, env=env)
        return ThreadTools(backend, readonly=readonly, thread=thread)

    wire_in, wire_out, restore = _claim()
    try:
        front = Front(instructions(readonly=readonly, bound=store is not None), wire_out)
        lines = _reader(wire_in)
        if front.greet(lines, made):
            front.hand_off(lines, made)
    finally:
        restore()


class Front:
    """The answers given before the SDK is loaded, and the lines it must read again."""

    def __init__(self, instructions: str, wire: IO[bytes]) -> None:
        self.instructions = instructions
        self.wire = wire
        self.tools: ThreadTools | None = None
        self.seen: list[str] = []  # every line read, in order
        self.sent: dict[str, str] = {}  # request id (as JSON) -> the answer sent
        self.waiting = False  # a request only the SDK can answer came
        self.warming: threading.Thread | None = None  # the thread importing the SDK, once started
        self.modern = False  # the opening answered was server/discover (else initialize)

    def greet(self, lines: queue.Queue[str], make: Callable[[], ThreadTools]) -> bool:
        """Answer what can be answered until the SDK is ready or needed; False when the
        host closed stdin with nothing left for the SDK to answer."""
        while not self.waiting:
            line = lines.get()
            if line is READY:
                return True
            if line == EOF:
                return False
            if self.sent and self.tools is None:  # the host said hello back: it will list the tools
                self.tools = make()
            self.seen.append(line)
            listed = len(self.sent)
            self._answer(line)
            if listed == 1 and len(self.sent) == 2:  # the tools are listed: now load the SDK, apart
                self.warming = threading.Thread(
                    target=_warm, args=(lines,), daemon=True, name="kura-mcp-warm"
                )
                self.warming.start()
        return True

    def _answer(self, line: str) -> None:
        message = _request(line)
        if message is None:
            self.waiting = _needs_answer(line)
            return
        result, method, params = None, message["method"], message.get("params")
        if method == "initialize" and len(self.seen) == 1:
            result = _hello(params, self.instructions)
        elif method == "server/discover" and len(self.seen) == 1 and _enveloped(params):
            result, self.modern = _discover(self.instructions), True
        elif method == "tools/list" and self.sent and self.tools is not None and self._same_era(params):
            result = _tool_list(self.tools, modern=self.modern)
        if result is None:
            self.waiting = True
            return
        key = json.dumps(message["id"])
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        answer = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
        self.sent[key] = answer
        self.wire.write(answer.encode() + b"\n")
        self.wire.flush()

    def _same_era(self, params: Any) -> bool:
        """Whether a request is of the opening's era: enveloped after ``server/discover``,
        not after ``initialize`` (the SDK refuses the other era's)."""
        return _enveloped(params) if self.modern else VERSION not in _meta(params)

    def hand_off(self, lines: queue.Queue[str], make: Callable[[], ThreadTools]) -> None:
        """The SDK's server on the same stream, from its first line, till stdin closes."""
        if self.warming is not None:  # a call came while the SDK loads: importing it here too, at
            self.warming.join()  # once, could meet the other thread's module locks (a deadlock)
        from kura.serve.mcp_server import serve_stdio  # not at the top: the SDK, after hello

        tools = self.tools if self.tools is not None else make()
        serve_stdio(tools, Replay(list(self.seen), lines), Sieve(self.wire, dict(self.sent)))


def _request(line: str) -> dict[str, Any] | None:
    """The line as a JSON-RPC request (a method and an id), else None."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    ident, method = message.get("id"), message.get("method")
    if isinstance(ident, bool) or not isinstance(ident, int | str) or not isinstance(method, str):
        return None
    return message


def _needs_answer(line: str) -> bool:
    """Whether a line that is no request still wants one: not JSON (a parse error is an
    answer) or malformed; a notification or a blank line wants none."""
    if not line.strip():
        return False
    try:
        message = json.loads(line)
    except ValueError:
        return True
    return not (isinstance(message, dict) and "id" not in message and isinstance(message.get("method"), str))


def _hello(params: Any, said: str) -> dict[str, Any] | None:
    """The ``initialize`` result the SDK would give, or None where it might differ."""
    if not isinstance(params, dict) or params.get("protocolVersion") not in HANDSHAKE:
        return None
    client = params.get("clientInfo")
    if not isinstance(params.get("capabilities"), dict) or not isinstance(client, dict):
        return None
    if not (isinstance(client.get("name"), str) and isinstance(client.get("version"), str)):
        return None
    return {
        "capabilities": _capabilities(changes=True),
        "instructions": said,
        "protocolVersion": params["protocolVersion"],
        "serverInfo": {"name": NAME, "title": TITLE, "version": __version__},
    }


def _capabilities(*, changes: bool) -> dict[str, Any]:
    """What the SDK's server announces (``mcp_server.build_server``): tools, resources
    (no subscriptions) and prompts, each list's changes told or not (``changes``)."""
    told = {"listChanged": changes}
    return {"prompts": told, "resources": {**told, "subscribe": False}, "tools": told}


def _meta(params: Any) -> dict[str, Any]:
    """A request's ``params._meta`` where it is an object, else nothing."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}


def _enveloped(params: Any) -> bool:
    """Whether ``params`` are a 2026-07-28 envelope and nothing else, each part of a shape
    the SDK's ``RequestMetaObject`` takes as it is (anything else is the SDK's to judge)."""
    meta = _meta(params)
    if not meta or set(params) != {"_meta"} or set(meta) - {VERSION, CLIENT, CAPABILITIES}:
        return False
    client = CLIENT not in meta or _plain_client(meta[CLIENT])
    return meta.get(VERSION) == MODERN and client and _plain_capabilities(meta.get(CAPABILITIES))


def _plain_client(client: Any) -> bool:
    """Whether ``clientInfo`` is a name and a version, and other text fields at most."""
    if (
        not isinstance(client, dict)
        or set(client) - set(_INFO_KEYS)
        or not {"name", "version"} <= set(client)
    ):
        return False
    return all(isinstance(value, str) for value in client.values())


def _plain_capabilities(able: Any) -> bool:
    """Whether ``clientCapabilities`` is an object whose known capabilities are of their
    model's shape: ``roots`` an object, ``elicitation`` and ``sampling`` objects whose known
    fields are objects, ``experimental`` and ``extensions`` objects of objects. The SDK
    ignores unknown capabilities and unknown fields."""
    if not isinstance(able, dict) or not isinstance(able.get("roots", {}), dict):
        return False
    for name, fields in _CAPABILITY_FIELDS.items():
        value = able.get(name, {})
        if not isinstance(value, dict) or not all(isinstance(value.get(field, {}), dict) for field in fields):
            return False
    return all(_objects(able.get(name, {})) for name in ("experimental", "extensions"))


def _objects(value: Any) -> bool:
    """Whether ``value`` maps names to objects (``dict[str, JSONObject]``)."""
    return isinstance(value, dict) and all(isinstance(item, dict) for item in value.values())


def _stamped(result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 result as the SDK sends it: its fields with the cache hints it gives a
    server that sets none, then the server's identity in ``_meta``."""
    hints = {"cacheScope": "private", "resultType": "complete", "ttlMs": 0}
    server = {"name": NAME, "title": TITLE, "version": __version__}
    return {**dict(sorted({**hints, **result}.items())), "_meta": {f"{_KEY}serverInfo": server}}


def _discover(said: str) -> dict[str, Any]:
    """The ``server/discover`` result the SDK would give (``Server._handle_discover``): at
    2026-07-28 a tools list change is announced only to ``subscriptions/listen``, which
    kura does not serve, hence ``listChanged`` false."""
    capabilities = _capabilities(changes=False)
    return _stamped({"capabilities": capabilities, "instructions": said, "supportedVersions": [MODERN]})


def _tool_list(tools: ThreadTools, *, modern: bool = False) -> dict[str, Any] | None:
    """The ``tools/list`` result the SDK would give (``mcp_server._tool`` as JSON), or None.
    Its schema model puts ``type`` first at 2026-07-28 (then the rest as given), and its
    declared ``properties``, ``required``, ``type`` in that order before."""
    listed = []
    try:
        offered = tools.listed("stdio", None)
    except Exception:  # the SDK then answers, with the error it makes of it
        log.debug("tools/list left to the SDK", exc_info=True)
        return None
    for spec, schema in offered:
        if set(schema) - set(_SCHEMA_KEYS) or schema.get("type") != "object":
            return None
        shape = (
            {"type": "object", **schema}
            if modern
            else {key: schema[key] for key in _SCHEMA_KEYS if key in schema}
        )
        hints = {"destructiveHint": spec.destructive, "idempotentHint": True, "openWorldHint": False}
        listed.append(
            {
                "annotations": {**hints, "readOnlyHint": spec.read_only, "title": spec.title},
                "description": spec.help,
                "inputSchema": shape,
                "name": spec.name,
                "title": spec.title,
            }
        )
    return _stamped({"tools": listed}) if modern else {"tools": listed}


def _warm(lines: queue.Queue[str]) -> None:
    """Import what the SDK's server needs, then say so in the line queue."""
    try:
        for name in _SDK:
            importlib.import_module(name)
        import kura.serve.mcp_server  # noqa: F401 - loaded for the hand-off, in this thread
    except Exception:  # the hand-off imports them again and reports what fails
        log.debug("warming the SDK failed", exc_info=True)
    lines.put(READY)


def _reader(wire: IO[bytes]) -> queue.Queue[str]:
    """The lines of stdin, read by a thread, then ``EOF``."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for raw in wire:
            lines.put(raw.decode("utf-8", errors="replace"))
        lines.put(EOF)

    threading.Thread(target=read, daemon=True, name="kura-mcp-stdin").start()
    return lines


def _claim() -> tuple[IO[bytes], IO[bytes], Callable[[], None]]:
    """The wire (private copies of fds 0 and 1), with fd 0 reading nothing and fd 1 going
    to stderr meanwhile, as the SDK's own ``stdio_server`` does: nothing but protocol
    reaches stdout. The third value puts them back."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        sys.stdout.flush()
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)

    return os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False), restore


class Replay:
    """The SDK's stdin: the lines read before it was loaded, then the rest as they come."""

    def __init__(self, seen: list[str], lines: queue.Queue[str]) -> None:
        self.seen = seen
        self.lines = lines

    def __aiter__(self) -> Replay:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread

        if self.seen:
            return self.seen.pop(0)
        line = READY
        while line is READY:
            line = await anyio.to_thread.run_sync(self.lines.get, abandon_on_cancel=True)
        if line == EOF:
            raise StopAsyncIteration
        return line


class Sieve:
    """The SDK's stdout: everything it writes, except its answers to requests answered
    before it was loaded, which are compared with those instead."""

    def __init__(self, wire: IO[bytes], sent: dict[str, str]) -> None:
        self.wire = wire
        self.sent = sent

    async def write(self, text: str) -> None:
        import anyio.to_thread

        if self.sent and self._answered(text):
            return
        await anyio.to_thread.run_sync(self._put, text.encode())

    async def flush(self) -> None:
        return None  # _put flushes each message

    def _put(self, data: bytes) -> None:
        self.wire.write(data)
        self.wire.flush()

    def _answered(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        key = json.dumps(message.get("id")) if isinstance(message, dict) else None
        if key not in self.sent or "method" in message:
            return False
        sent = self.sent.pop(key)
        if sent != text.rstrip("\n"):
            log.warning("the answer sent to request %s before the SDK loaded differs from the SDK's", key)
            log.debug("sent %s; the SDK's %s", sent, text)
        return True
