"""The web app ``kura serve`` serves at ``/``: pages a person looks at in a browser.

Same process, same stores, same ``StorePool`` calls as the HTTP API and MCP, and the same
``Guard`` in front (loopback or a token; with a token a page takes it once as ``?token=``
and keeps it in a cookie — ``kura.serve.web_access``). Every page is rendered on the server
(``kura.serve.web_pages``, ``kura.serve.web_views``) with everything from the store escaped,
under a Content-Security-Policy that allows no inline script and no other origin.

* ``/`` the map as the agent is given it; ``/ui/drafts`` staged drafts with pour and toss;
  ``/ui/memories`` and ``/ui/memory/{slug}`` (with ``why`` and links in and out);
  ``/ui/search?q=`` (``kura recall``); ``/ui/context?task=`` (``kura context``);
  ``/ui/health`` (``kura doctor``). ``/ui/graph`` is ``kura.serve.graph_page``'s.
* A store is chosen as the API chooses it: ``?store=``/``?mode=`` or the ``/s/{name}/``
  prefix, else the default store; two that disagree are refused.
* **Read-only unless writable.** Pour and toss are offered only when the server is not
  ``--readonly`` and the store's policy lets the distiller write; their POSTs check the same
  again and also need an ``Origin`` naming this server (no cross-site form can pour). Pour
  is ``kura.distill.drafts.pour`` — the door ``kura distill pour`` uses — and a tampered
  or incomplete draft is refused before it (it stays staged, shown and marked). Editing,
  forgetting and the health page's fixes are ``kura.serve.web_edit``'s, under the same rules
  for the person's own writes (the store must take direct writes).
* **Big stores.** The memories and the findings come a page at a time, and what a page
  shows is read from the catalog or from the few files it names (``kura.serve.web_data``).
"""

import datetime as _dt
from collections import Counter
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from kura.distill import drafts as dr
from kura.distill.final_check import violations
from kura.errors import KuraError, NotFound, PolicyRefused, UnknownStore
from kura.life.why import explain, to_json
from kura.request import CONTEXT
from kura.serve.pool import MAX_BUDGET, MIN_BUDGET, InvalidRequest, StorePool
from kura.serve.web_access import PAGE_HEADERS, same_origin
from kura.serve.web_data import Kept, descriptions, links_of, page_number, paged
from kura.serve.web_data import report as kept_report
from kura.serve.web_edit import done_note, edit_refusal, edit_routes, health_fixes, memory_actions
from kura.serve.web_pages import DraftView, Here, drafts_page, home, layout, memories_page, memory_page
from kura.serve.web_pages import e as _e
from kura.serve.web_views import context_page, health_page, search_page
from kura.transcripts.segments import Segment, from_comment

if TYPE_CHECKING:
    from fastapi import APIRouter
    from starlette.requests import Request
    from starlette.responses import Response

    from kura.store.store import Store

MAX_REASON = 300  # characters of a toss reason kept


def web_routes(service: StorePool) -> "APIRouter":
    """The pages, at ``/`` and ``/ui/…``, and again under ``/s/{name}/``."""
    from fastapi import APIRouter, Request
    from fastapi.responses import Response

    router = APIRouter(include_in_schema=False)
    reports, listings, links = Kept(), Kept(), Kept()

    def page(request: Request, run: Any) -> Response:
        try:
            here = _here(service, request)
        except KuraError as err:
            return _html(_bare(service.private(str(err))), _status(err))
        try:
            answered = run(here)
            if isinstance(answered, Response):
                return answered  # a redirect after a write
            status, text = answered
        except KuraError as err:
            status, text = (
                _status(err),
                layout(here, "", "Not possible", f"<p>{_e(service.private(str(err)))}</p>"),
            )
        return _html(text, status)

    for prefix in ("", "/s/{name}"):
        router.add_api_route(
            prefix + "/", _get(page, lambda here, request: _home(service, here)), methods=["GET"]
        )
        router.add_api_route(prefix + "/ui/drafts", _get(page, lambda here, r: (200, _drafts(service, here))))
        router.add_api_route(
            prefix + "/ui/memories", _get(page, lambda here, r: _memories(service, here, r, listings))
        )
        router.add_api_route(
            prefix + "/ui/memory/{slug:path}",
            _get(
                page,
                lambda here, r: _memory(
                    service, here, r.path_params["slug"], links, r.query_params.get("done")
                ),
            ),
        )
        router.add_api_route(prefix + "/ui/search", _get(page, lambda here, r: _search(service, here, r)))
        router.add_api_route(prefix + "/ui/context", _get(page, lambda here, r: _context(service, here, r)))
        router.add_api_route(
            prefix + "/ui/health", _get(page, lambda here, r: _health(service, here, r, reports))
        )

        async def act(request: Request, draft: str, action: str) -> Response:
            body = (await request.body()).decode("utf-8", "replace")  # a form; the Guard called it JSON
            form = {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}
            return page(request, lambda here: _act(service, here, request, draft, action, form))

        router.add_api_route(prefix + "/ui/drafts/{draft}/{action}", act, methods=["POST"])
        edit_routes(router, prefix, service, page)

    @router.get("/ui/static/kura.css")
    def stylesheet() -> Response:
        data = resources.files("kura").joinpath("data/kura.css").read_bytes()
        headers = {**PAGE_HEADERS, "cache-control": "no-cache"}
        return Response(data, media_type="text/css; charset=utf-8", headers=headers)

    return router


def _get(page: Any, view: Any) -> Any:
    from fastapi import Request

    def handler(request: Request) -> Any:
        return page(request, lambda here: view(here, request))

    return handler


# -- choosing the store ------------------------------------------------------------------


def _here(service: StorePool, request: "Request") -> Here:
    query = request.query_params
    given = [
        ("the path", request.path_params.get("name")),
        *(("?store", v) for v in query.getlist("store")),
        *(("?mode", v) for v in query.getlist("mode")),
    ]
    named = [(where, service.name(value)) for where, value in given if value]
    if len({store for _, store in named}) > 1:
        said = ", ".join(f"{where} names '{store}'" for where, store in named)
        raise InvalidRequest(f"the request names two stores ({said}); name one")
    store = named[0][1] if named else service.name()
    name = request.path_params.get("name")
    prefix = f"/s/{name}" if name else ""
    selector = tuple((k, v) for k in ("store", "mode") for v in query.getlist(k)[-1:])
    return Here(store, prefix, () if name else selector, tuple(s["name"] for s in service.stores()))


# -- the pages -----------------------------------------------------------------------------


def _home(service: StorePool, here: Here) -> tuple[int, str]:
    block = service.prefill(here.store)
    return 200, home(here, block.text, block.tokens)


def _write_refusal(service: StorePool, store: "Store") -> str | None:
    """Why pour and toss are not offered here, or None when they are."""
    if service.readonly:
        return "this server runs with --readonly; restart it without to pour or toss drafts"
    try:
        store.check_write("distiller")
    except PolicyRefused:
        return f"store '{store.name}' is {store.write_policy}: nothing is poured into it"
    return None


def _drafts(service: StorePool, here: Here, status: str = "") -> str:
    store = service.served(here.store).store
    slugs = store.slugs()
    views = [_view(d, slugs) for d in dr.staged(store)]
    return drafts_page(here, views, writable=_write_refusal(service, store), status=status)


def _view(draft: dr.Draft, slugs: tuple[str, ...]) -> DraftView:
    evidence = tuple(Segment(s.cls, from_comment(s.text)) for s in draft.evidence)
    floor: tuple[str, ...] = ()
    if not (draft.tampered or draft.incomplete):  # what pour will hold it to (kura.distill.drafts.pour)
        composed = "\n\n".join(filter(None, (draft.title, draft.description, draft.body)))
        floor = tuple(dict.fromkeys(violations(composed, evidence, slugs)))  # one line per finding
    quotes = tuple((s.cls, s.text) for s in evidence)
    return DraftView(draft=draft, evidence=quotes, problem=service_free(draft.problem), floor=floor)


def service_free(problem: str) -> str:
    """A draft's problem names its file inside the store's state folder, not the machine's path."""
    at = problem.find(".kura/")
    return problem[at:] if at >= 0 else problem


def _act(
    service: StorePool, here: Here, request: "Request", draft_id: str, action: str, form: dict[str, str]
) -> tuple[int, str]:
    """Pour or toss one draft: refused unless the form came from this server's page, the
    server and the store take the write, and (to pour) the draft is untouched."""
    if not same_origin(request.headers.get("origin"), request.headers.get("host")):
        return 403, _drafts(service, here, "Refused: the form did not come from this server's page "
                                          "(no matching Origin); nothing changed.")  # fmt: skip
    store = service.served(here.store).store
    refusal = _write_refusal(service, store)
    if refusal is not None:
        return 403, _drafts(service, here, f"Refused: {_e(refusal)}; nothing changed.")
    if action == "toss":
        reason = " ".join(form.get("reason", "").split())[:MAX_REASON]
        if not reason:
            return 422, _drafts(service, here, "Say why the draft is tossed; nothing changed.")
        dr.load(store, draft_id)  # NotFound for a draft that is not staged
        dr.toss(store, draft_id, reason)
        return 200, _drafts(service, here, f"Tossed <code>{_e(draft_id)}</code>: {_e(reason)}")
    if action != "pour":
        raise NotFound(f"no action {action!r} on drafts; pour or toss")
    draft = dr.load(store, draft_id)
    if draft.tampered or draft.incomplete:
        said = (
            f"Refused: draft <code>{_e(draft_id)}</code> is {'tampered' if draft.tampered else 'incomplete'}"
        )
        return 403, _drafts(service, here, said + " and is never poured; nothing changed.")
    result = dr.pour(store, draft_id)
    if not result.poured:
        return 409, _drafts(service, here, f"Refused: {_e(service.private(result.reason))}")
    service.changed({f"{result.slug}.md"}, here.store)
    link = f'<a href="{here.memory(result.slug)}">{_e(result.slug)}</a>'
    return 200, _drafts(
        service, here, f"Poured <code>{_e(draft_id)}</code> into {link} ({_e(result.reason)})."
    )


def _memories(service: StorePool, here: Here, request: "Request", listings: Kept) -> tuple[int, str]:
    """A page of the memories (``?page=``, ``?type=``), with the count of each type."""
    kind = request.query_params.get("type") or None
    store = service.served(here.store).store
    everyone = listings.get(
        store.name, store.root, lambda: service.memories(None, here.store, everything=True)
    )
    counts = Counter(str(m.get("type") or "?") for m in everyone)
    shown = [m for m in everyone if kind is None or str(m.get("type") or "?") == kind]
    number = page_number(request.query_params.get("page"))
    return 200, memories_page(here, paged(shown, number), counts, kind)


def _memory(
    service: StorePool, here: Here, slug: str, kept: Kept, done: str | None = None
) -> tuple[int, str]:
    memory = service.memory(slug, here.store)
    store = service.served(here.store).store
    turned = kept.get(store.name, store.root, lambda: links_of(store))
    links_in, known = list(turned.into.get(memory["slug"], ())), set(turned.slugs)
    memory = {**memory, "links": list(turned.names.linked(memory.get("links") or ()))}  # as doctor reads them
    meta = memory.get("meta") or {}
    retired = bool(meta.get("archived") or meta.get("superseded_by"))
    actions = memory_actions(here, memory["slug"], edit_refusal(service, store), retired=retired)
    try:
        # no git: a page view runs no subprocess in the store's folder (`kura why` shows the last commit)
        why: dict[str, Any] | None = to_json(explain(store, memory["slug"], _dt.date.today(), git=False))
    except KuraError:
        why = None
    return 200, memory_page(here, memory, why, links_in, known, actions=actions, status=done_note(done))


def _search(service: StorePool, here: Here, request: "Request") -> tuple[int, str]:
    question = request.query_params.get("q", "").strip()
    if not question:
        return 200, search_page(here, "", None, {})
    found = service.recall(question, selector=here.store)
    named = [p["slug"] for p in found.get("picked") or ()] + list(found.get("walked") or ())
    described = descriptions(service.served(here.store).store, named)
    return 200, search_page(here, question, found, described)


def _context(service: StorePool, here: Here, request: "Request") -> tuple[int, str]:
    task = request.query_params.get("task", "").strip()
    raw = request.query_params.get("budget", "") or str(CONTEXT.budget)
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):  # "²" is a digit to str.isdigit
        raise InvalidRequest(f"budget must be a whole number of tokens ({MIN_BUDGET}–{MAX_BUDGET})")
    budget = int(raw)
    told = service.context(task, budget=budget, selector=here.store) if task else None
    return 200, context_page(here, task, budget, told, (MIN_BUDGET, MAX_BUDGET))


def _health(service: StorePool, here: Here, request: "Request", reports: Kept) -> tuple[int, str]:
    store = service.served(here.store).store
    report = kept_report(reports, store.name, store.root, lambda: service.doctor(here.store))
    number = page_number(request.query_params.get("page"))
    findings = paged(report.get("findings") or [], number)
    refusal = edit_refusal(service, store)
    fixes = health_fixes(here, report.get("findings") or [], refusal)
    done = done_note(request.query_params.get("done"))
    return 200, health_page(
        here, report, set(store.slugs()), findings, fixes=fixes, editable=refusal is None, status=done
    )


# -- answers -------------------------------------------------------------------------------


def _status(err: KuraError) -> int:
    if isinstance(err, NotFound | UnknownStore):
        return 404
    if isinstance(err, PolicyRefused):
        return 403
    if isinstance(err, InvalidRequest):
        return 422
    return 500


def _bare(text: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>kura</title>'
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="/ui/static/kura.css"></head>'
        '<body><main class="narrow">'
        f"<h1>Not possible</h1><p>{_e(text)}</p></main></body></html>"
    )


def _html(text: str, status: int) -> "Response":
    from fastapi.responses import HTMLResponse

    return HTMLResponse(text, status_code=status, headers=PAGE_HEADERS)
