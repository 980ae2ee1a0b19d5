"""``kura mcp`` and ``/mcp``: the tools of ``kura.serve.mcp_tools`` on the official ``mcp`` SDK.

The SDK's low-level server, not its decorated functions, because the tool list is computed
per request (bound or free, read-only or not, and the store this session uses) and every
argument is checked by the tools themselves, forgivingly; the decorators would fix both.

Hosts time out servers that are slow to start, so nothing heavy happens before the first
call: the stores open lazily and the embedding model loads on the first recall, never at
``initialize``. Tool calls run in worker threads, so a slow recall never holds up the
protocol. ``kura_use`` is remembered per session: the process on stdio, the
``Mcp-Session-Id`` over streamable HTTP.

Two back ends behind the same tools: the stores in this process (``Local``, through
``kura.serve.pool.Service``), or a running ``kura serve`` when ``KURA_URL`` is set
(``kura.serve.remote.Remote``), which lets several hosts share one warm model and index.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kura.config import load_config
from kura.errors import KuraError, NotFound
from kura.request import EditRequest
from kura.serve import edit_ops
from kura.serve.mcp_listeners import Listeners, poll_server, watch_stores
from kura.serve.mcp_resources import MARKDOWN, TEMPLATE, Argument, Prompt, Resources, error_text
from kura.serve.mcp_specs import NAME, TITLE, USE, Spec, readonly_from
from kura.serve.mcp_threads import ThreadTools
from kura.serve.pool import StorePool
from kura.serve.remote import Remote
from kura.version import __version__

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from starlette.types import ASGIApp

    from kura.serve.mcp_tools import Backend
    from kura.serve.pool import StorePool

log = logging.getLogger("kura.mcp")

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_NOT_FOUND = -32002  # the MCP specification's code for a resource that does not exist


class Local:
    """The stores in this process, through the service (bound or free as it was made)."""

    def __init__(self, service: StorePool) -> None:
        self.service = service
        self.bound = service.bound

    def stores(self) -> list[dict[str, Any]]:
        return self.service.stores()

    def name(self, selector: str | None) -> str:
        return self.service.name(selector)

    def writable(self, selector: str | None) -> bool:
        return self.service.writable(selector)

    def recall(
        self, selector: str | None, question: str, top: int, hops: int, chars: int, at: str = ""
    ) -> dict[str, Any]:
        return self.service.recall(question, top=top, hops=hops, chars=chars, selector=selector, at=at)

    def read(self, selector: str | None, slug: str) -> dict[str, Any]:
        return self.service.memory(slug, selector)

    def context(self, selector: str | None, task: str, budget: int) -> dict[str, Any]:
        return self.service.context(task, budget=budget, selector=selector)

    def map(self, selector: str | None) -> str:
        return self.service.prefill(selector).text

    def doctor(self, selector: str | None) -> dict[str, Any]:
        return self.service.doctor(selector)

    def memories(self, selector: str | None, type: str | None) -> list[dict[str, Any]]:
        return self.service.memories(type, selector, everything=True)

    def remember(self, selector: str | None, **fields: Any) -> dict[str, Any]:
        return self.service.remember(selector=selector, **fields)

    def recent(self, selector: str | None, since: str, type: str | None) -> dict[str, Any]:
        return self.service.recent(selector, since=since, type=type)

    def edit(self, selector: str | None, **fields: Any) -> dict[str, Any]:
        return edit_ops.edit(self.service, EditRequest(**fields), selector=selector, origin="MCP")

    def history(self, selector: str | None, slug: str) -> dict[str, Any]:
        return edit_ops.history(self.service, slug, selector=selector)


def open_backend(config: str | None, store: str | None, *, readonly: bool, env: Mapping[str, str]) -> Backend:
    """``kura serve`` at ``KURA_URL`` if set, else the configured stores. ``store`` binds;
    here (the person's own command line, not a model) it may also be a folder path."""
    if env.get("KURA_URL"):
        return Remote(env["KURA_URL"], token=env.get("KURA_TOKEN") or None, bound=store)
    loaded = load_config(config)
    if store and store not in loaded.stores and store not in loaded.modes:
        chosen = loaded.store_config(store)  # a folder, or UnknownStore naming what there is
        if loaded.stores.get(chosen.name) != chosen:  # a configured store's folder keeps its config
            alone = {chosen.name: chosen}
            loaded = dataclasses.replace(loaded, stores=alone, modes={}, project="", person="")
        store = chosen.name
    return Local(
        StorePool(loaded, readonly=readonly, bound=store, detach=True)
    )  # a session's life: builds outlive it


def _session(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """Whose ``kura_use`` choice applies: the process on stdio, the MCP session over HTTP
    (None for stateless HTTP, which has no session to remember it in)."""
    if ctx.request is None:
        return "stdio"
    headers = getattr(ctx.request, "headers", None)
    found = headers.get("mcp-session-id") if headers is not None else None
    return str(found) if found else None


def _thread(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The thread the connection's URL binds it to (``/mcp?thread=ID``); None on stdio."""
    params = getattr(ctx.request, "query_params", None) if ctx.request is not None else None
    found = params.get("thread") if params is not None else None
    return str(found) if found is not None else None


def build_server(tools: ThreadTools, listeners: Listeners | None = None) -> Server[Any]:
    """The low-level MCP server for these tools, with the store's resources and prompts
    (``kura.serve.mcp_resources``). ``listeners`` learns each session that sends a request,
    so a change the watcher sees can be told to it (``notifications/resources/list_changed``)."""
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import NotificationOptions, Server

    heard = listeners if listeners is not None else Listeners()
    served = Resources(tools)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        heard.heard(ctx)
        listed = await anyio.to_thread.run_sync(tools.listed, _session(ctx), _thread(ctx))
        return types.ListToolsResult(tools=[_tool(spec, schema) for spec, schema in listed])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        heard.heard(ctx)
        session = _session(ctx)
        text, failed = await anyio.to_thread.run_sync(
            tools.call, params.name, params.arguments, session, _thread(ctx)
        )
        if params.name == USE.name and not failed:
            try:  # what is offered may differ in the new store (kura_remember, the remember prompt)
                await ctx.session.send_tool_list_changed()
                await ctx.session.send_prompt_list_changed()
            except Exception as err:  # noqa: BLE001 - a client that cannot hear it lists again anyway
                log.debug("tool list change not sent: %s", err)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    class KuraServer(Server[Any]):
        def create_initialization_options(
            self, notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
        ) -> Any:
            changes = notification_options or NotificationOptions(
                tools_changed=True, resources_changed=True, prompts_changed=True
            )
            return super().create_initialization_options(changes, *args, **kwargs)

    return KuraServer(
        NAME,
        version=__version__,
        title=TITLE,
        instructions=tools.instructions(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **resource_handlers(served, heard),
    )


def resource_handlers(served: Resources, heard: Listeners) -> dict[str, Any]:
    """The SDK handlers for resources and prompts (``kura.serve.mcp_resources``); a
    refusal is a protocol error saying what to do (resources have no error result)."""
    import anyio.to_thread
    from mcp import types
    from mcp.shared.exceptions import MCPError

    async def run(call: Callable[..., Any], *args: Any) -> Any:
        try:
            return await anyio.to_thread.run_sync(call, *args)
        except KuraError as err:
            code = _NOT_FOUND if isinstance(err, NotFound) else types.INVALID_PARAMS
            raise MCPError(code, error_text(err)) from None

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        heard.heard(ctx)
        found, following = await run(served.listed, params.cursor if params is not None else None)
        shown = [
            types.Resource(uri=r.uri, name=r.name, title=r.title, description=r.description, mime_type=r.mime)
            for r in found
        ]
        return types.ListResourcesResult(resources=shown, next_cursor=following)

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        heard.heard(ctx)
        template = types.ResourceTemplate(
            uri_template=TEMPLATE,
            name="memory",
            title="One memory",
            description="One memory's file (frontmatter and body) by store and slug.",
            mime_type=MARKDOWN,
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        heard.heard(ctx)
        text, mime = await run(served.read, str(params.uri))
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(uri=str(params.uri), mime_type=mime, text=text)
        ]
        return types.ReadResourceResult(contents=contents)

    async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        heard.heard(ctx)
        offered = await run(served.prompts, _session(ctx))
        return types.ListPromptsResult(prompts=[_prompt(p, served.arguments(p)) for p in offered])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        heard.heard(ctx)
        said = await run(served.said, params.name, params.arguments, _session(ctx))
        message = types.PromptMessage(role=said.role, content=types.TextContent(text=said.text))
        return types.GetPromptResult(description=said.description, messages=[message])

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
        "on_list_prompts": list_prompts,
        "on_get_prompt": get_prompt,
    }


def _prompt(prompt: Prompt, arguments: tuple[Argument, ...]) -> Any:
    from mcp import types

    given = [
        types.PromptArgument(name=a.name, description=a.description, required=a.required) for a in arguments
    ]
    return types.Prompt(name=prompt.name, title=prompt.title, description=prompt.description, arguments=given)


def _tool(spec: Spec, schema: dict[str, Any]) -> Any:
    from mcp import types

    hints = types.ToolAnnotations(
        title=spec.title,
        read_only_hint=spec.read_only,
        destructive_hint=spec.destructive,
        idempotent_hint=True,
        open_world_hint=False,
    )
    return types.Tool(
        name=spec.name, title=spec.title, description=spec.help, input_schema=schema, annotations=hints
    )


def serve_stdio(tools: ThreadTools, stdin: Any = None, stdout: Any = None) -> None:
    """Serve over stdin/stdout until the host closes them. While it serves, the SDK points
    file descriptor 1 elsewhere, so nothing but protocol can reach stdout. ``stdin`` and
    ``stdout``, when given, stand for them (``kura.serve.mcp_stdio``, which has claimed the
    descriptors itself): an async iterator of lines, and an object with async ``write`` and
    ``flush``."""
    import anyio
    from mcp.server.stdio import stdio_server

    listeners = Listeners()
    server = build_server(tools, listeners)
    service = getattr(tools.backend, "service", None)
    watching = None
    if isinstance(service, StorePool):
        watching = watch_stores(service, Resources(tools).stores, listeners)
    elif isinstance(tools.backend, Remote):  # no store here to watch: the server says what changed
        watching = poll_server(tools.backend.stores, listeners)

    async def main() -> None:
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        if watching is not None:
            watching.stop()


SERVE_UNLOCK = "restart `kura serve` with --writable (or KURA_READONLY=0)"
SERVE_LOCKED = "restart `kura serve` with --writable instead of --readonly"


def http_tools(service: StorePool, *, readonly: bool | None, thread: str | None = None) -> ThreadTools:
    """The tools ``/mcp`` offers: read-only when ``kura serve --readonly`` made the whole
    service so; else as ``readonly`` says (``kura serve --writable``/``--readonly``), or
    ``KURA_READONLY`` when the switch was not given (on unless turned off), as for ``kura mcp``."""
    if service.readonly:
        return ThreadTools(Local(service), readonly=True, unlock=SERVE_LOCKED, thread=thread)
    if readonly is None:
        readonly = readonly_from(os.environ)
    return ThreadTools(Local(service), readonly=readonly, unlock=SERVE_UNLOCK, thread=thread)


def streamable_http(
    service: StorePool, *, readonly: bool | None = None, host: str | None = None, thread: str | None = None
) -> tuple[ASGIApp, Callable[[], AbstractAsyncContextManager[None]]]:
    """MCP over streamable HTTP for ``kura serve``: (ASGI app, lifespan).

    Mount the app (``app.mount("/mcp", mcp_app)``) and enter ``lifespan()`` inside the
    FastAPI lifespan: a mounted app's own lifespan is never run. ``readonly`` defaults to
    the service's, or ``KURA_READONLY`` (on unless turned off), as for ``kura mcp``.
    ``kura serve`` checks the token, ``Host`` and ``Origin`` before a request gets here, so
    the SDK's own DNS-rebinding check is only turned on when ``host`` names a loopback
    address (for mounting this somewhere without such a guard)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    listeners = Listeners()  # told of each change the server's watchers see
    service.hear(listeners.soon)
    server = build_server(http_tools(service, readonly=readonly, thread=thread), listeners)
    security = None
    if host in _LOOPBACK:
        security = TransportSecuritySettings(
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)
    return StreamableHTTPASGIApp(manager), manager.run
