"""``kura serve``'s thread routes: keyed items and agents' observations over HTTP.

The same guard as every other route runs first (token, ``Host``, ``Origin``, whole bodies;
``kura.serve.access``), the same error shape comes back, and the work is
``kura.serve.thread_ops``'s, shared with the MCP tools: a server started with ``--thread``
answers for that thread only (403 for any other, whatever its spelling), and a read-only
server refuses every write (403).
"""

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kura.errors import InvalidRequest
from kura.serve import thread_ops
from kura.serve.pool import StorePool
from kura.serve.schemas import errors

if TYPE_CHECKING:
    from fastapi import APIRouter

Namespace = Literal["fact", "summary", "observation", "note"]
UNLOCK = "restart `kura serve` without --readonly"


class ItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str = Field(description="The text to keep under the key (markdown).", max_length=64 * 1024)
    namespace: Namespace | None = Field(None, description="fact, summary, observation or note.")


class UpdatesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    updates: dict[str, str] = Field(description='A summary\'s memoryUpdates: {"work:current-project": "…"}.')
    namespace: Namespace = "fact"


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, description="What to look for, in your own words.")
    top: int = Field(5, ge=1, le=50, description="At most this many items.")


class ObserveIn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    text: str = Field(description="What you noticed, one line.", max_length=2000)
    priority: Literal["high", "medium", "low"] = "medium"
    current_task: str | None = Field(None, alias="currentTask", max_length=2000)
    suggested_continuation: str | None = Field(None, alias="suggestedContinuation", max_length=2000)
    thread: str | None = Field(None, description="The thread whose log to write (else the store's).")
    store: str | None = None
    mode: str | None = None


def thread_routes(service: StorePool, *, bound: str | None = None) -> "APIRouter":
    """The routes, answering for thread ``bound`` only when it is given."""
    from fastapi import APIRouter, Path, Query

    router = APIRouter(tags=["threads"])
    Id = Annotated[str, Path(description="The thread's id, e.g. support-4711.")]
    Key = Annotated[str, Path(description="The item's key, e.g. work:current-project.")]
    StoreQ = Annotated[str | None, Query(description="Store name (or a mode).")]
    ModeQ = Annotated[str | None, Query(description="Mode name (or a store).")]

    def call(
        thread: str, store: str | None, mode: str | None, operation: str, **fields: Any
    ) -> dict[str, Any]:
        return thread_ops.memory(service, _one(service, store, mode), bound=bound, thread=thread,
                                 operation=operation, readonly=False, unlock=UNLOCK, **fields)  # fmt: skip

    @router.get("/threads/{thread}/memory", responses=errors(401, 403, 404, 422))
    def listed(
        thread: Id,
        store: StoreQ = None,
        mode: ModeQ = None,
        namespace: Annotated[Namespace | None, Query(description="Only this namespace.")] = None,
    ) -> dict[str, Any]:
        """The thread's items (or those of one namespace), by key."""
        return call(thread, store, mode, "list", namespace=namespace)

    @router.get("/threads/{thread}/memory/{key:path}", responses=errors(401, 403, 404, 422))
    def read(thread: Id, key: Key, store: StoreQ = None, mode: ModeQ = None) -> dict[str, Any]:
        """One item as its file says now (a hand edit included)."""
        return call(thread, store, mode, "read", key=key)

    @router.put("/threads/{thread}/memory/{key:path}", responses=errors(400, 401, 403, 404, 413, 422))
    def write(thread: Id, key: Key, body: ItemIn, store: StoreQ = None, mode: ModeQ = None) -> dict[str, Any]:
        """Create or replace one item (refused on a read-only server or a frozen store)."""
        return call(thread, store, mode, "write", key=key, value=body.value, namespace=body.namespace)

    @router.delete("/threads/{thread}/memory/{key:path}", responses=errors(401, 403, 404, 422))
    def delete(thread: Id, key: Key, store: StoreQ = None, mode: ModeQ = None) -> dict[str, Any]:
        """Remove one item; its last bytes are kept in .kura/threads/<id>/deleted/."""
        return call(thread, store, mode, "delete", key=key)

    @router.post("/threads/{thread}/memory", responses=errors(400, 401, 403, 404, 413, 422))
    def update(thread: Id, body: UpdatesIn, store: StoreQ = None, mode: ModeQ = None) -> dict[str, Any]:
        """Write a map of keys (a summary's memoryUpdates) in one call; a bad key writes none."""
        return call(thread, store, mode, "update", updates=body.updates, namespace=body.namespace)

    @router.post("/threads/{thread}/recall", responses=errors(400, 401, 403, 404, 413, 422))
    def search(thread: Id, body: SearchIn, store: StoreQ = None, mode: ModeQ = None) -> dict[str, Any]:
        """The thread's items that bear on a question, by meaning, best first: the store's
        recall (the same search and floor) over the thread's items."""
        return call(thread, store, mode, "search", query=body.question, top=body.top)

    @router.post("/observe", responses=errors(400, 401, 403, 404, 413, 422))
    def observe(body: ObserveIn, store: StoreQ = None, mode: ModeQ = None) -> dict[str, Any]:
        """An agent's observation, with its task and suggested continuation: to the thread's
        log (the bound thread, or ``thread``), else the store's; consolidated past its size hint."""
        selector = _one(service, store or body.store, mode or body.mode)
        return thread_ops.observation(
            service, selector, bound=bound, thread=body.thread, text=body.text, priority=body.priority,
            task=body.current_task or "", continuation=body.suggested_continuation or "",
            readonly=False, unlock=UNLOCK, source="http",
        )  # fmt: skip

    return router


def _one(service: StorePool, store: str | None, mode: str | None) -> str | None:
    if store and mode and service.name(store) != service.name(mode):
        raise InvalidRequest(f"the request names two stores (?store={store!r}, ?mode={mode!r}); name one")
    return store or mode
