"""``GET /ui/graph``: the link graph of a served store as a page, the very page
``kura graph --format html`` writes (``kura.health.picture``).

The store is chosen as on every other route (``?store=``, ``?mode=`` or the ``/s/{name}/``
prefix) and the guard in ``kura.serve.access`` has run first (token, ``Host``, ``Origin``).
The page of each store is kept while its files are unchanged (``kura.serve.web_data.Kept``):
at 10,000 memories drawing it again takes most of a second. The page's
Content-Security-Policy goes out as a header too, with what a meta tag cannot
say (no framing): the page's own script and style, by hash, and nothing else — no request
of the page leaves the server, and nothing a memory says can run.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from kura.health.picture import html_page
from kura.serve.pool import StorePool
from kura.serve.schemas import errors
from kura.serve.web_data import Kept

if TYPE_CHECKING:
    from fastapi import APIRouter

HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


Given = list[tuple[str, str | None]]


def graph_routes(service: StorePool, choose: Callable[[StorePool, Given], str]) -> "APIRouter":
    """The page's route; ``choose`` is the rule every route names its store by (``kura.serve.http``)."""
    from fastapi import APIRouter, Query, Request
    from fastapi.responses import HTMLResponse

    router = APIRouter()
    drawn = Kept()  # the page of each store, while its files are unchanged (kura.serve.web_data)

    @router.get(
        "/ui/graph", response_class=HTMLResponse, tags=["pages"], responses=errors(401, 404, 422)
    )  # fmt: skip
    def graph(
        request: Request,
        store: Annotated[str | None, Query(description="Store name (or a mode).")] = None,
        mode: Annotated[str | None, Query(description="Mode name (or a store).")] = None,
    ) -> HTMLResponse:
        """The store's [[link]] graph, fitted to the window: memories coloured by type,
        islands dashed, dead ends orange, dead links red (with "did you mean")."""
        query = request.query_params
        name = choose(service, [
            ("the path", request.path_params.get("name")),
            *(("?store", value) for value in query.getlist("store")),
            *(("?mode", value) for value in query.getlist("mode")),
        ])  # fmt: skip
        root = service.served(name).store.root
        page, policy = drawn.get(name, root, lambda: html_page(service.picture(name)))
        return HTMLResponse(
            page, headers={**HEADERS, "content-security-policy": f"{policy}; frame-ancestors 'none'"}
        )

    return router
