"""``kura serve``: the HTTP service — one warm process serving every configured store.

Why it is built this way:

* **Warm.** One ``StorePool`` per process: the embedding model, each store's search index and
  its vectors stay loaded between requests, so a recall costs the question, not a cold
  start. A watcher per store tells the service which files changed on disk, so a memory
  saved in an editor reaches the next recall at once instead of after the stamp check.
* **Stores by name, three ways.** ``?store=`` / ``?mode=``, a ``store`` / ``mode`` field in
  the body, or the ``/s/{name}/`` prefix for clients that can only vary a base URL. Two
  selectors naming different stores are refused rather than one silently winning, and a
  name is only ever a configured store or mode, never a folder path.
* **Whole requests, local clients.** ``kura.serve.access`` runs before any routing: loopback
  unless there is a token, no cross-site browser requests, bodies read whole (at most
  1 MiB, whatever Content-Length claims) so no handler acts on half a request — and the
  store's lock and atomic writes mean nothing is half-written on disk either. A client
  that sends nothing, or sends too slowly, is cut off (``kura.serve.listener``'s deadlines). Bodies are
  JSON whatever their Content-Type says (``curl -d`` sends a form type).
* **One error shape.** Every failure is ``{"error": {"status", "message", …}}`` with the
  status saying whose move it is: 400 unreadable JSON, 401 no token, 403 refused, 404 no
  such store or memory, 413 too large, 422 a value that cannot be served. A recall whose
  model cannot answer degrades (``degraded`` and ``reason``) rather than failing. Bad input
  is never a 500, no message echoes a secret, and none repeats more than a couple of
  hundred characters of what it was sent.
"""

import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal

from kura.errors import KuraError, ModelUnavailable, NotFound, PolicyRefused, StoreError, UnknownStore
from kura.serve.access import Guard, check_bind, error_body, shorten
from kura.serve.edit_routes import edit_routes
from kura.serve.graph_page import graph_routes
from kura.serve.listener import Deadlines, address_of, listen, uvicorn_config
from kura.serve.mcp_server import streamable_http
from kura.serve.pool import InvalidRequest, StorePool
from kura.serve.schemas import (
    ContextIn,
    ContextOut,
    Doctor,
    Health,
    MemoryListed,
    MemoryOut,
    MemoryType,
    Prefill,
    Profile,
    RecallIn,
    RecallOut,
    RecentOut,
    Remembered,
    RememberIn,
    StoreInfo,
    errors,
)
from kura.serve.thread_ops import journal_path
from kura.serve.thread_routes import thread_routes
from kura.serve.watch import stop_watching, watch
from kura.serve.web import web_routes
from kura.version import __version__

if TYPE_CHECKING:
    from fastapi import APIRouter, FastAPI

    from kura.config import Config

log = logging.getLogger("uvicorn.error")  # uvicorn prints this one; nothing else is configured

Mcp = tuple[Any, Callable[..., AbstractAsyncContextManager[Any]]]


# -- errors from inside the routes -------------------------------------------------------------


def _status(err: KuraError) -> int:
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, PolicyRefused):
        return 403
    if isinstance(err, InvalidRequest):
        return 422
    if isinstance(err, ModelUnavailable):
        return 503
    return 500  # a store that cannot be read or written here, a broken config: not the client's


def _install_errors(app: "FastAPI", service: StorePool) -> None:
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import Response
    from starlette.exceptions import HTTPException
    from starlette.requests import Request

    def reply(status: int, message: str, **extra: Any) -> Response:
        return Response(error_body(status, message, **extra), status, media_type="application/json")

    async def kura_error(request: Request, err: Exception) -> Response:
        assert isinstance(err, KuraError)
        stores = [s["name"] for s in service.stores()] if isinstance(err, UnknownStore) else None
        return reply(_status(err), str(err), stores=stores)

    async def invalid(request: Request, err: Exception) -> Response:
        assert isinstance(err, RequestValidationError)
        errors = list(err.errors())
        bad_json = next((e for e in errors if e.get("type") == "json_invalid"), None)
        if bad_json is not None:
            why = bad_json.get("ctx", {}).get("error", "not JSON")
            return reply(400, f"the body is not valid JSON ({why} at byte {bad_json['loc'][-1]})")
        details = [{k: e[k] for k in ("loc", "msg", "type") if k in e} for e in errors]
        for e in details:  # a field name is the client's text: repeat a little of it at most
            e["loc"] = [shorten(part, 60) if isinstance(part, str) else part for part in e.get("loc", ())]
        said = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in details[:5])
        return reply(422, f"the request does not fit this route: {said}", details=details)

    async def http_error(request: Request, err: Exception) -> Response:
        assert isinstance(err, HTTPException)
        message = "no such route; GET /openapi.json lists them" if err.status_code == 404 else err.detail
        response = reply(err.status_code, str(message))
        response.headers.update(err.headers or {})
        return response

    async def crashed(request: Request, err: Exception) -> Response:  # the Guard's 500 comes first
        return reply(500, f"internal error ({type(err).__name__}); the server log has the details")

    app.add_exception_handler(KuraError, kura_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, crashed)


# -- the routes --------------------------------------------------------------------------------

Given = list[tuple[str, str | None]]


def _routes(service: StorePool) -> "APIRouter":
    from fastapi import APIRouter, Depends, Header, Path, Query, Request
    from fastapi.responses import PlainTextResponse, Response

    router = APIRouter()

    async def selectors(
        request: Request,
        store: Annotated[str | None, Query(description="Store name (or a mode).")] = None,
        mode: Annotated[str | None, Query(description="Mode name (or a store).")] = None,
    ) -> Given:
        """Every selector given, a repeated ``?store=`` included (``store``/``mode`` above
        hold only the last; they are declared for the schema)."""
        query = request.query_params
        return [
            ("the path", request.path_params.get("name")),
            *(("?store", value) for value in query.getlist("store")),
            *(("?mode", value) for value in query.getlist("mode")),
        ]

    async def chosen(given: Annotated[Given, Depends(selectors)]) -> str:
        return _choose(service, given)

    Selected = Annotated[Given, Depends(selectors)]
    Store = Annotated[str, Depends(chosen)]

    @router.get("/health", response_model=Health, tags=["service"])
    def health() -> dict[str, Any]:
        """Liveness: answers without a token."""
        return service.health()

    @router.get("/stores", response_model=list[StoreInfo], tags=["service"], responses=errors(401))
    def stores() -> list[dict[str, Any]]:
        """The stores this process serves, their modes and whether they take writes here."""
        return service.stores()

    @router.get("/doctor", response_model=Doctor | list[Doctor], tags=["read"], responses=errors(401, 404))
    def doctor(
        name: Store, every: Annotated[bool, Query(alias="all", description="Every served store.")] = False
    ) -> Any:
        """Store health: what a person should fix (``?all=1``: a list, one per store)."""
        return [service.doctor(s["name"]) for s in service.stores()] if every else service.doctor(name)

    @router.get("/index", response_class=PlainTextResponse, tags=["read"], responses=errors(401, 404))
    def index(name: Store) -> PlainTextResponse:
        """MEMORY.md as written."""
        return PlainTextResponse(service.index_text(name))

    text_too = {"content": {"text/plain": {}}, "description": "The block (``?format=text``: as text)."}
    unchanged = {"description": "Not Modified: If-None-Match holds the current ETag."}

    @router.get(
        "/prefill", response_model=Prefill, tags=["read"],
        responses={200: text_too, 304: unchanged, **errors(401, 404, 422)},
    )  # fmt: skip
    def prefill(
        name: Store,
        format: Annotated[Literal["json", "text"], Query(description="text: the block alone.")] = "json",
        if_none_match: Annotated[str | None, Header()] = None,
    ) -> Response:
        """The resident map for a system prompt, with an ETag (strong for text, weak for the
        JSON, whose state field can change while the text does not)."""
        block = service.prefill(name)
        headers = {"etag": block.etag if format == "text" else f"W/{block.etag}", "cache-control": "no-cache"}
        if if_none_match is not None and _matches(if_none_match, block.etag):
            return Response(status_code=304, headers=headers)
        if format == "text":
            return PlainTextResponse(block.text, headers=headers)
        data = json.dumps(block.to_dict(), ensure_ascii=False)
        return Response(data, media_type="application/json", headers=headers)

    @router.get("/profile", response_model=Profile, tags=["read"], responses=errors(401, 404))
    def profile(name: Store) -> dict[str, Any]:
        """The store's charter and where its persona lives (the persona is never rendered)."""
        return service.profile(name)

    @router.get("/memory/{slug:path}", response_model=MemoryOut, tags=["read"], responses=errors(401, 404))
    def memory(slug: Annotated[str, Path(description="e.g. deploy-day or team/oncall")], name: Store) -> Any:
        """One memory in full; any name that is not a memory of this store is a 404."""
        return service.memory(slug, name)

    @router.get(
        "/memories", response_model=list[MemoryListed], tags=["read"], responses=errors(401, 404, 422)
    )  # fmt: skip
    def memories(
        name: Store,
        type: Annotated[MemoryType | None, Query(description="Only this type.")] = None,
        every: Annotated[bool, Query(alias="all", description="Archived and superseded ones too.")] = False,
    ) -> Any:
        """The current memories (or those of one type), by slug; ``?all=true``: the archived
        and superseded ones too, each with its state."""
        return service.memories(type, name, everything=every)

    @router.get("/recent", response_model=RecentOut, tags=["read"], responses=errors(401, 404, 422))
    def recent(
        name: Store,
        since: Annotated[str, Query(description="Days (7d), weeks (2w) or a first day (YYYY-MM-DD).")] = "7d",
        type: Annotated[MemoryType | None, Query(description="Only this type.")] = None,
    ) -> Any:
        """The memories created, changed, superseded or forgotten in the window, newest first,
        from the frontmatter's dates and, in git, the commits (``kura recent``)."""
        return service.recent(name, since=since, type=type)

    @router.post(
        "/recall", response_model=RecallOut, tags=["recall"], responses=errors(400, 401, 404, 413, 422)
    )
    def recall(body: RecallIn, given: Selected) -> dict[str, Any]:
        """The memories that bear on a question, their linked neighbours, and their text. A
        model that cannot answer degrades the search (``degraded``, ``reason``), never a 503."""
        name = _choose(service, [*given, ("the body's store", body.store), ("the body's mode", body.mode)])
        return service.recall(
            body.question, top=body.top, hops=body.hops, chars=body.chars, selector=name, at=body.at or ""
        )

    @router.post(
        "/context", response_model=ContextOut, tags=["recall"], responses=errors(400, 401, 404, 413, 422)
    )
    def context(body: ContextIn, given: Selected) -> dict[str, Any]:
        """Exactly what a model about to do ``task`` would be told, within ``budget`` tokens:
        pinned rules, the map, recalled memories, memories on record but not current, spans
        said before (evidence, never fact) and the latest observations; every item with its
        source, tokens and why, and what was left out."""
        name = _choose(service, [*given, ("the body's store", body.store), ("the body's mode", body.mode)])
        journal = journal_path(service, name, body.journal, recent=body.recent)
        return service.context(
            body.task, budget=body.budget, selector=name, recent=body.recent, journal=journal
        )

    @router.post(
        "/remember", response_model=Remembered, tags=["write"],
        responses=errors(400, 401, 403, 404, 413, 422),
    )  # fmt: skip
    def remember(body: RememberIn, given: Selected) -> dict[str, Any]:
        """Create or update one memory and its own MEMORY.md line: a direct write, refused
        (403) unless the store's write_policy is direct-allowed and the server is writable."""
        name = _choose(service, [*given, ("the body's store", body.store), ("the body's mode", body.mode)])
        _check_writable(service, name)
        try:
            return service.remember(body.slug, body.description, body.body, type=body.type, title=body.title,
                                    selector=name, supersedes=body.supersedes)  # fmt: skip
        except PolicyRefused as err:  # writable was checked above: this is the secret check
            raise InvalidRequest(str(err)) from None
        except StoreError as err:
            if isinstance(err.__cause__, OSError):
                raise  # the disk, not the request
            raise InvalidRequest(str(err)) from None

    return router


def _choose(service: StorePool, given: Given) -> str:
    """The store the selectors name; two that disagree are refused, none is the default."""
    named = [(where, service.name(value)) for where, value in given if value]
    if len({store for _, store in named}) > 1:
        said = ", ".join(f"{where} names '{store}'" for where, store in named)
        raise InvalidRequest(f"the request names two stores ({said}); name one")
    return named[0][1] if named else service.name()


def _check_writable(service: StorePool, name: str) -> None:
    if service.readonly:
        raise PolicyRefused(
            f"this server is read-only (kura serve --readonly); store '{name}' is not written — "
            "restart it without --readonly to write"
        )
    service.served(name).store.check_write()


def _matches(header: str, etag: str) -> bool:
    """If-None-Match: ``*``, one tag or a list, weak or strong, quoted or not (weak compare)."""
    tags = [tag.strip().removeprefix("W/").strip('"') for tag in header.split(",")]
    return "*" in tags or etag.strip('"') in tags


# -- the app -----------------------------------------------------------------------------------


def create_app(
    service: StorePool,
    *,
    token: str | None = None,
    mcp: Mcp | None = None,
    watch: bool = True,
    thread: str | None = None,
) -> "FastAPI":
    """The ASGI app over ``service``. ``mcp`` is ``(asgi_app, lifespan)`` from
    ``kura.serve.mcp_server.streamable_http``: mounted at ``/mcp``, its lifespan (called with no
    arguments) run inside this one. ``watch`` starts a file watcher per served store.
    ``thread``: the one thread the thread routes answer for (``kura.serve.thread_routes``)."""
    from fastapi import Depends, FastAPI, Path

    app = FastAPI(
        title="kura",
        version=__version__,
        summary="A filesystem-native markdown memory for AI agents, served over HTTP.",
        description=_DESCRIPTION,
        lifespan=_lifespan(service, None if mcp is None else mcp[1], watch),
        docs_url=None,
        redoc_url=None,
    )
    _install_errors(app, service)

    async def path_store(name: Annotated[str, Path(description="Store or mode name.")]) -> None:
        service.name(name)  # an unknown name is a 404 listing the stores, before anything else

    router = _routes(service)
    app.include_router(router)
    app.include_router(router, prefix="/s/{name}", dependencies=[Depends(path_store)])
    for prefix, checks in (("", []), ("/s/{name}", [Depends(path_store)])):  # /ui/graph, /edit, /history
        app.include_router(graph_routes(service, _choose), prefix=prefix, dependencies=checks)
        app.include_router(edit_routes(service, _choose), prefix=prefix, dependencies=checks)
    app.include_router(thread_routes(service, bound=thread))
    app.include_router(web_routes(service))  # the pages at / and /ui/ (kura.serve.web)
    if mcp is not None:
        app.mount("/mcp", mcp[0])
    app.add_middleware(Guard, token=token)
    _document(app, token)
    return app


_DESCRIPTION = """Every route but `/health` and `/stores` works on one store: name it with
`?store=` or `?mode=`, a `store`/`mode` field in a JSON body, or the `/s/{name}/` path prefix.
Errors are `{"error": {"status", "message", ...}}`. Bodies are JSON (at most 1 MiB)."""


def _document(app: "FastAPI", token: str | None) -> None:
    """Make the schema say what the app does: every error is the one JSON shape (FastAPI
    would describe its own 422 and the text type of a text route), and with a token, a
    bearer token everywhere but /health (the Guard enforces it, outside the routes)."""
    plain = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = plain()
            error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
            for path, operations in schema["paths"].items():
                for operation in operations.values():
                    if path.startswith("/s/"):
                        operation["responses"].setdefault("404", {"description": "No such store or mode"})
                    for code, response in operation["responses"].items():
                        if code >= "400":
                            response["content"] = error
            components = schema["components"]["schemas"]
            for unused in ("HTTPValidationError", "ValidationError"):
                components.pop(unused, None)
            if token:
                schema["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
                schema["security"] = [{"bearer": []}]
                schema["paths"]["/health"]["get"]["security"] = []
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _lifespan(
    service: StorePool, mcp_lifespan: Callable[..., AbstractAsyncContextManager[Any]] | None, watch: bool
) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        watchers = _start_watchers(service) if watch else []
        try:
            if mcp_lifespan is None:
                yield
            else:
                async with mcp_lifespan():
                    yield
        finally:
            for watcher, observer in watchers:
                stop_watching(watcher, observer)

    return lifespan


def _start_watchers(service: StorePool) -> list[tuple[Any, Any]]:
    """A watcher per served store whose ``after`` hook tells the service what changed; a store
    that cannot be watched is still served (the stamp check keeps it fresh, a little later)."""
    started = []
    for info in service.stores():
        name = info["name"]
        root = service.config.stores[name].path
        try:
            # no heartbeat: this watcher does not re-weave, so it must not write .kura/watch.json
            # (doctor would call it a live `kura watch`, and it would overwrite a real one's)
            started.append(watch(root, _nothing, after=_tell(service, name), beat=False))
            service.watching(name)
        except OSError as err:
            log.warning("kura serve: not watching store '%s' at %s (%s)", name, root, err)
    return started


def _tell(service: StorePool, name: str) -> Callable[[set[str]], None]:
    def changed(rels: set[str]) -> None:
        service.changed(rels, name)

    return changed


def _nothing() -> None:
    """The watcher's re-weave step: /prefill re-weaves on demand, so there is none here."""


def mcp_mount(service: StorePool, *, readonly: bool | None = None, thread: str | None = None) -> Mcp:
    """MCP over streamable HTTP at ``/mcp``, read-only by default as ``kura mcp`` is:
    ``kura serve --writable`` (or ``KURA_READONLY=0``) lets MCP clients write (never past
    ``kura serve --readonly``, and a store's write policy still applies). ``POST /remember``
    follows the policy alone."""
    mounted: Mcp = streamable_http(service, readonly=readonly, thread=thread)
    log.info("kura serve: MCP over streamable HTTP at /mcp")
    return mounted


def serve(
    config: "Config",
    *,
    host: str = "127.0.0.1",
    port: int = 8085,
    token: str | None = None,
    readonly: bool = False,
    mcp_readonly: bool | None = None,
    bound: str | None = None,
    deadlines: Deadlines = Deadlines(),
    thread: str | None = None,
) -> None:
    """Serve ``config``'s stores until interrupted. Raises ConfigError before opening
    anything when it may not listen (beyond loopback without a token) or cannot (a busy
    port, an address this machine does not have)."""
    import logging.config

    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    check_bind(host, token)
    sockets = listen(host, port)
    logging.config.dictConfig(LOGGING_CONFIG)  # what uvicorn.run does, done first so our lines show
    service: StorePool | None = None
    try:
        service = StorePool(config, readonly=readonly, bound=bound)
        mounted = mcp_mount(service, readonly=mcp_readonly, thread=thread)
        app = create_app(service, token=token, mcp=mounted, thread=thread)
        served = ", ".join(f"{s['name']}{'' if s['writable'] else ' (read-only)'}" for s in service.stores())
        log.info("kura serve: stores %s%s", served, "; token required" if token else "")
        log.info("kura serve: listening on %s (Ctrl-C to stop)", ", ".join(map(address_of, sockets)))
        uvicorn.Server(uvicorn_config(app, deadlines=deadlines)).run(sockets=sockets)
    except KeyboardInterrupt:
        pass  # uvicorn stopped cleanly on Ctrl-C, then raised it again
    finally:
        if service is not None:
            service.close()
        for sock in sockets:
            sock.close()
