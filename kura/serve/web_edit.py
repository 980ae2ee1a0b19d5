"""Editing from the web pages: a memory's description, type and body (with the index line
the edit will give it), forgetting a memory, and the fixes ``kura doctor --fix`` makes.

Each goes through the door the command line uses, as the person (the ``direct`` writer):
``kura remember``'s (``kura.life.corrections.remember``: the store's policy, the secret
check, the limits, the atomic write, the index line kept in step), ``kura forget``'s
(``kura.life.lifecycle.archive``: kept on disk, off the map) and ``kura doctor --fix``'s
(``fix_index``, ``fix_flat``). The same rules as pour and toss guard them: offered only when
the server is not ``--readonly`` and the store takes direct writes, and every POST is
refused unless its ``Origin`` names this server.

The edit form carries the hash of the bytes it was made from. A save finding the file
changed since (the person's editor, an agent, ``git pull``) writes nothing and shows the
form again with the person's text in it: the other writer's words are never overwritten
unseen. A refusal (a secret, a policy, a limit) also shows the form again with the text kept.
After a write the answer is a redirect to the page that shows the result (``?done=``), so a
reload never writes twice.
"""

import hashlib
import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from kura.errors import KuraError, PolicyRefused
from kura.files.memory import own_line, remembered
from kura.files.memory_file import TYPES
from kura.health.doctor import fix_flat, fix_index
from kura.life.corrections import remember
from kura.life.lifecycle import archive, stated_again
from kura.serve.pool import InvalidRequest, StorePool
from kura.serve.web_access import same_origin
from kura.serve.web_pages import Here, e, layout

if TYPE_CHECKING:
    from fastapi import APIRouter
    from starlette.requests import Request
    from starlette.responses import Response

    from kura.store.store import Store

MAX_REASON = 300  # characters of a forget reason kept
Page = Callable[["Request", Callable[[Here], Any]], "Response"]
DONE = {  # ?done= on the page a write redirects to: fixed sentences, never text from the request
    "saved": "Saved, through the same door as <code>kura remember</code>.",
    "unchanged": "Nothing changed: the memory already said that.",
    "forgotten": "Forgotten: archived with your reason, off the map and the index; still on disk, "
    "and <code>kura recall --all</code> finds it.",
    "index": "Index drift fixed, as <code>kura doctor --fix</code> does.",
    "flat": "The flat frontmatter's values quoted, as <code>kura doctor --fix</code> does.",
    "nothing": "Nothing needed fixing.",
}


def edit_routes(router: "APIRouter", prefix: str, service: StorePool, page: Page) -> None:
    """The edit form, its save, forget and the health fixes, under ``prefix``."""
    from fastapi import Request  # resolved by FastAPI from the handlers' annotations

    async def form(request: Request) -> dict[str, str]:
        body = (await request.body()).decode("utf-8", "replace")
        return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}

    def show(request: Request) -> "Response":
        slug = request.path_params["slug"]
        return page(request, lambda here: (200, edit_page(service, here, slug)))

    async def save(request: Request) -> "Response":
        given, slug = await form(request), request.path_params["slug"]
        return page(request, lambda here: _save(service, here, request, slug, given))

    async def forget(request: Request) -> "Response":
        given, slug = await form(request), request.path_params["slug"]
        return page(request, lambda here: _forget(service, here, request, slug, given))

    async def fix(request: Request) -> "Response":
        given = await form(request)
        return page(request, lambda here: _fix(service, here, request, given.get("what", "")))

    router.add_api_route(prefix + "/ui/edit/{slug:path}", show, methods=["GET"])
    router.add_api_route(prefix + "/ui/edit/{slug:path}", save, methods=["POST"])
    router.add_api_route(prefix + "/ui/forget/{slug:path}", forget, methods=["POST"])
    router.add_api_route(prefix + "/ui/health/fix", fix, methods=["POST"])


def edit_refusal(service: StorePool, store: "Store") -> str | None:
    """Why this page edits nothing in ``store``, or None when it may."""
    if service.readonly:
        return "this server runs with --readonly; restart it without to edit memories"
    try:
        store.check_write("direct")
    except PolicyRefused:
        return f"store '{store.name}' is {store.write_policy}: nothing is edited in it from here"
    return None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def done_note(raw: str | None) -> str:
    """The fixed sentence for ``?done=`` (markup of this module's own), or ""."""
    return DONE.get(raw or "", "")


# -- the edit form -------------------------------------------------------------------------


def edit_page(
    service: StorePool, here: Here, slug: str, given: dict[str, str] | None = None, *, status: str = ""
) -> str:
    """The form for ``slug``: its description, type and body (or ``given``, the person's
    text sent back), the index line now, and with ``given`` the line the save would write."""
    store = service.served(here.store).store
    data, memory = store.read(slug)
    refusal = edit_refusal(service, store)
    now = store.index().line_for(memory.slug)
    lines = f"<p>Index line now: <code>{e(now.text) if now else '(none: not on the index)'}</code></p>"
    if refusal is not None:
        body = f'<p class="readonly">Read-only here: {e(refusal)}</p>' + lines
        return layout(here, "memories", f"Edit {memory.slug}", body, status=status)
    fields = given or {
        "description": memory.description,
        "type": memory.type or "",
        "body": memory.note.body,
        "base": digest(data),
    }
    if given is not None:
        line = preview(store, memory.slug, given.get("description", ""), _body(given))
        lines += f"<p>Index line after saving: <code>{e(line)}</code></p>"
    return layout(
        here, "memories", f"Edit {memory.slug}", _form(here, memory.slug, fields) + lines, status=status
    )


def _form(here: Here, slug: str, fields: dict[str, str]) -> str:
    kinds = "".join(
        f'<option value="{e(t)}"{" selected" if fields.get("type") == t else ""}>{e(t)}</option>'
        for t in ("", *TYPES)
    )
    return (
        f'<form class="edit" method="post" action="{here.post("/ui/edit/" + quote(slug, safe="/"))}">'
        f'<input type="hidden" name="base" value="{e(fields.get("base", ""))}">'
        f'<label>Description <input name="description" required value="{e(fields.get("description", ""))}" '
        'size="80"></label>'
        f'<label>Type <select name="type">{kinds}</select></label>'
        '<label>Body <textarea name="body" rows="16" cols="80">'
        f"{e(fields.get('body', ''))}</textarea></label>"
        '<div class="actions"><button type="submit" name="do" value="preview">Preview the index line</button>'
        '<button class="pour" type="submit" name="do" value="save">Save</button>'
        f' <a href="{here.memory(slug)}">cancel</a></div></form>'
    )


def preview(store: "Store", slug: str, description: str, body: str) -> str:
    """The index line a save of ``description`` and ``body`` would leave (``own_line``, as
    ``Store.remember`` writes it), or why there is none."""
    _, memory = store.read(slug)
    if memory.note.meta.get("archived") or memory.note.meta.get("superseded_by"):
        return "(none: the memory is archived or superseded, so it stays off the index)"
    note = remembered(memory.note, memory.slug, " ".join(description.split()), body, type=None, title=None)
    line = own_line(store.index(), slug=memory.slug, note=note, title=None, was=memory.note).line_for(
        memory.slug
    )
    return line.text if line is not None else ""


def _body(given: dict[str, str]) -> str:
    """The textarea's text with the line ends a file has (a browser sends CRLF)."""
    return given.get("body", "").replace("\r\n", "\n").replace("\r", "\n")


def _save(
    service: StorePool, here: Here, request: "Request", slug: str, given: dict[str, str]
) -> "tuple[int, str] | Response":
    refused = _refused(service, here, request)
    if refused is not None:
        return 403, edit_page(service, here, slug, status=refused)
    if given.get("do") != "save":
        return 200, edit_page(service, here, slug, given)
    store = service.served(here.store).store
    data, memory = store.read(slug)
    if given.get("base") != digest(data):
        said = (
            "Not saved: the file changed since this form was opened (an editor or an agent wrote it). "
            "Your text is below; open the memory again to see theirs."
        )
        return 409, edit_page(service, here, slug, given, status=said)
    kind = given.get("type") or None
    try:
        done = remember(
            store, memory.slug, given.get("description", ""), _body(given), type=kind, amend=stated_again
        )
    except KuraError as err:
        said = f"Not saved: {e(service.private(str(err)))}"
        return 422, edit_page(service, here, slug, given, status=said)
    service.changed({memory.path.relative_to(store.root).as_posix()}, here.store)
    return _redirect(
        here, f"/ui/memory/{quote(memory.slug, safe='/')}", "saved" if done.result.did_work else "unchanged"
    )


def _forget(
    service: StorePool, here: Here, request: "Request", slug: str, given: dict[str, str]
) -> "tuple[int, str] | Response":
    refused = _refused(service, here, request)
    if refused is not None:
        return 403, layout(here, "memories", "Not forgotten", "", status=refused)
    reason = " ".join(given.get("reason", "").split())[:MAX_REASON]
    if not reason:
        raise InvalidRequest("say why the memory is forgotten; nothing changed")
    store = service.served(here.store).store
    memory = store.show(slug)  # NotFound first
    archive(store, memory.slug, reason)
    service.changed({memory.path.relative_to(store.root).as_posix()}, here.store)
    return _redirect(here, f"/ui/memory/{quote(memory.slug, safe='/')}", "forgotten")


def _fix(service: StorePool, here: Here, request: "Request", what: str) -> "tuple[int, str] | Response":
    refused = _refused(service, here, request)
    if refused is not None:
        return 403, layout(here, "health", "Not fixed", "", status=refused)
    if what not in ("index", "flat"):
        raise InvalidRequest("fix what? index (index drift) or flat (distill-kura's flat frontmatter)")
    store = service.served(here.store).store
    changes = fix_index(store) if what == "index" else fix_flat(store)
    if changes and what == "flat":
        service.changed({"./"}, here.store)  # as a folder that moved: the next recall compares every file
    return _redirect(here, "/ui/health", what if changes else "nothing")


def _refused(service: StorePool, here: Here, request: "Request") -> str | None:
    """Why this POST writes nothing (a status line, markup), or None."""
    if not same_origin(request.headers.get("origin"), request.headers.get("host")):
        return "Refused: the form did not come from this server's page (no matching Origin); nothing changed."
    refusal = edit_refusal(service, service.served(here.store).store)
    return f"Refused: {e(refusal)}; nothing changed." if refusal is not None else None


def _redirect(here: Here, path: str, done: str) -> "Response":
    from fastapi.responses import RedirectResponse

    return RedirectResponse(html.unescape(here.href(path, done=done)), status_code=303)


# -- the controls other pages show -----------------------------------------------------------


def memory_actions(here: Here, slug: str, refusal: str | None, *, retired: bool) -> str:
    """Edit and forget, on a memory's page, when this page may write."""
    if refusal is not None:
        return ""
    where = quote(slug, safe="/")
    forget = (
        ""
        if retired
        else f'<form class="toss" method="post" action="{here.post("/ui/forget/" + where)}">'
        '<label>Reason <input name="reason" required maxlength="300" placeholder="why forget it"></label>'
        '<button type="submit">Forget</button></form>'
    )
    edit = f'<a class="button" href="{here.href("/ui/edit/" + where)}">Edit</a>'
    return f'<div class="actions">{edit}{forget}</div>'


def health_fixes(here: Here, findings: list[dict[str, Any]], refusal: str | None) -> str:
    """The buttons that fix what doctor found, as ``kura doctor --fix`` does."""
    if refusal is not None or not findings:
        return ""
    wanted = []
    if any(f.get("check") == "index" for f in findings):
        wanted.append(("index", "Fix index drift"))
    if any("flat frontmatter" in str(f.get("message")) for f in findings):
        wanted.append(("flat", "Quote the flat frontmatter's values"))
    return "".join(
        f'<form class="fix" method="post" action="{here.post("/ui/health/fix")}">'
        f'<input type="hidden" name="what" value="{what}"><button type="submit">{e(label)}</button></form>'
        for what, label in wanted
    )
