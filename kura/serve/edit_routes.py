"""``POST /edit`` and ``GET /history/{slug}``: a memory changed in place, and its versions.

One route for every edit, as one request type (``kura.request.EditRequest``) and one MCP tool
(``kura_edit``): ``op`` says which, the other fields are the ones it reads. The store is
chosen as on every route (``?store=``, ``?mode=``, the body's ``store``/``mode``, or the
``/s/{name}/`` prefix), the guard has run first (token, ``Host``, ``Origin``, JSON only), and
the refusals keep the service's statuses: 403 for a read-only server or a policy that takes
no such write, 404 for no such memory, 422 for an edit that cannot be made as asked (a
phrase found nowhere or twice, a secret, a limit, a superseded memory, a name taken).
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kura.errors import InvalidRequest, StoreError
from kura.request import EditRequest
from kura.serve import edit_ops
from kura.serve.pool import StorePool
from kura.serve.schemas import errors

if TYPE_CHECKING:
    from fastapi import APIRouter

Given = list[tuple[str, str | None]]
Op = Literal["append", "prepend", "replace", "section", "rename", "forget", "purge"]  # request.EDIT_OPS


class EditIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    slug: str = Field(min_length=1, max_length=200, description="The memory to edit, e.g. deploy-day.")
    op: Op = Field(description="What to do; the fields below that it reads are named with each.")
    text: str = Field(
        "",
        max_length=64 * 1024,
        description="append / prepend: the paragraph; replace: "
        'the new words ("" removes the phrase); section: its new text.',
    )
    find: str = Field("", max_length=2000, description="replace: the phrase, which must occur once.")
    heading: str = Field("", max_length=200, description="section: its heading (## Steps or Steps).")
    to: str = Field("", max_length=200, description="rename: the new slug.")
    reason: str = Field("", max_length=600, description="forget: why (kept with it).")
    confirm: str = Field("", max_length=200, description="purge: the slug again, to say it is meant.")
    store: str | None = Field(None, description="Store name (or a mode); default store if omitted.")
    mode: str | None = Field(None, description="Mode name (or a store); an alternative to store.")


class EditedOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    store: str
    op: str
    slug: str = Field(description="The memory's slug after the edit (a rename's new one).")
    changed: bool = Field(description="false: it was already so (nothing written).")
    path: str
    was: str | None = Field(None, description="rename: the old slug.")
    detail: str
    index_changed: bool
    relinked: list[str] = Field(description="rename: memories whose links or pointers now name it.")
    revises: str | None = Field(None, description="A live memory the new words appear to revise.")
    purged: dict[str, Any] | None = Field(None, description="purge: what was removed.")
    notes: list[str]


class VersionOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    when: str
    what: str
    who: str = Field(description="person, agent, distiller, setup, sync or import.")
    source: str = Field(description="git, uncommitted, untracked, frontmatter or witness.")
    by: str
    commit: str
    message: str
    path: str
    description: str
    text: str = Field(description="The whole file at that version (from git), else empty.")


class HistoryOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    store: str
    slug: str
    in_git: bool
    versions: list[VersionOut] = Field(description="Newest first.")
    chain: list[dict[str, str]] = Field(description="The supersede chain, oldest first; [] outside one.")
    older: int


def edit_routes(service: StorePool, choose: Callable[[StorePool, Given], str]) -> "APIRouter":
    """The two routes; ``choose`` is the rule every route names its store by (``kura.serve.http``)."""
    from fastapi import APIRouter, Path, Request

    router = APIRouter()

    def given(request: Request) -> Given:
        query = request.query_params
        return [
            ("the path", request.path_params.get("name")),
            *(("?store", v) for v in query.getlist("store")),
            *(("?mode", v) for v in query.getlist("mode")),
        ]

    @router.post(
        "/edit", response_model=EditedOut, tags=["write"], responses=errors(400, 401, 403, 404, 413, 422)
    )
    def edit(body: EditIn, request: Request) -> dict[str, Any]:
        """Change one memory in place — append, prepend, replace (a phrase that occurs once),
        section (by heading), rename (links rewritten), forget (archived), purge (``confirm``
        = the slug) — through the same checks as ``POST /remember``."""
        named = [("the body's store", body.store), ("the body's mode", body.mode)]
        name = choose(service, [*given(request), *named])
        fields = body.model_dump(exclude={"store", "mode"})
        try:
            return edit_ops.edit(service, EditRequest(**fields), selector=name, origin="HTTP")
        except StoreError as err:
            if isinstance(err.__cause__, OSError):
                raise
            raise InvalidRequest(str(err)) from None

    @router.get("/history/{slug:path}", response_model=HistoryOut, tags=["read"], responses=errors(401, 404))
    def history(slug: Annotated[str, Path(description="e.g. deploy-day")], request: Request) -> Any:
        """Every version of a memory, newest first (git, else what its file records), who or what
        wrote each, and its supersede chain (``kura history``)."""
        return edit_ops.history(service, slug, selector=choose(service, given(request)))

    return router
