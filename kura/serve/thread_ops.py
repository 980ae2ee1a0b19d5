"""Threads at the edges: the one place HTTP and MCP turn a request into a thread operation.

**Scope is the server's, not the caller's.** A server bound to a thread (``kura mcp
--thread ID``, ``kura serve --thread ID``, ``/mcp?thread=ID``) hands every call that
thread and no other: a call that names another — by any spelling, ``../other``, an
encoded or an absolute name — is refused with the bound thread named, before the name is
looked at, so a model learns nothing about what else exists. An unbound server needs the
thread named in each call. Inside a thread a key reaches only that thread's folder
(``kura.threads.names``); the store's durable memories stay readable through the usual
tools, and writable only where the server and the store's policy allow.

Writes (items and observations) are refused on a read-only server whatever the store
says, and by a ``frozen`` store; a secret in a write is the caller's to fix (an invalid
request), never echoed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kura.distill.run import journals_for
from kura.errors import InvalidRequest, NotFound, PolicyRefused
from kura.recall.in_thread import thread_recall
from kura.request import RecallRequest
from kura.serve.pool import StorePool, _private_paths
from kura.store.store import Store
from kura.threads import Thread, thread_id
from kura.threads.items import Unsafe
from kura.threads.observer import observe
from kura.transcripts.journals import discover

OPERATIONS = ("write", "read", "list", "delete", "update", "search")
WRITES = {"write", "delete", "update"}
READS = ("read", "list", "search")  # what a read-only server offers


def chosen_thread(bound: str | None, given: object) -> str:
    """The thread a call may use: the bound one (a call naming another is refused), else
    the one it names (a call naming none is refused)."""
    if bound is not None:
        if given in (None, "") or given == bound:
            return bound
        shown = repr(given) if len(repr(given)) <= 60 else repr(given)[:59] + "…'"
        raise PolicyRefused(
            f"this server is bound to thread '{bound}'; it cannot reach thread {shown} — "
            "leave the thread out to use its own"
        )
    if given in (None, ""):
        raise InvalidRequest("name the thread: this server serves every thread, so each call says which")
    return thread_id(given)


def thread_of(service: StorePool, selector: str | None, bound: str | None, given: object) -> Thread:
    return Thread.of(service.served(selector).store, chosen_thread(bound, given))


def check_writable(service: StorePool, store: Store, *, readonly: bool, unlock: str, what: str) -> None:
    """Refuse a write on a read-only server or to a frozen store (403: the person's call)."""
    if readonly or service.readonly:
        raise PolicyRefused(f"{what} is refused: this server is read-only (to let it write, {unlock})")
    if store.write_policy == "frozen":
        store.check_write()


@_private_paths  # errors name stores, never the folders they live in
def memory(
    service: StorePool,
    selector: str | None,
    *,
    bound: str | None,
    thread: object,
    operation: str,
    key: str | None = None,
    value: str | None = None,
    namespace: str | None = None,
    updates: Mapping[str, Any] | None = None,
    query: str | None = None,
    top: int = 5,
    readonly: bool,
    unlock: str,
) -> dict[str, Any]:
    """One ``kura_memory`` call (also the HTTP routes): a dict for the edge to render."""
    if operation not in OPERATIONS:
        raise InvalidRequest(f"operation {operation!r} is not one of {', '.join(OPERATIONS)}")
    chosen = thread_of(service, selector, bound, thread)
    if operation in WRITES:
        what = f"{operation} in thread '{chosen.id}'"
        check_writable(service, chosen.store, readonly=readonly, unlock=unlock, what=what)
    if operation == "search":
        return searched(chosen, query, top)
    if operation == "list":
        items = chosen.list(namespace)
        return {"thread": chosen.id, "namespace": namespace, "items": [i.to_dict() for i in items]}
    if operation == "update":
        if not isinstance(updates, Mapping):
            raise InvalidRequest(
                'update needs updates: a map of key to value, e.g. {"work:current-project": "…"}'
            )
        done = _refusing(lambda: chosen.update(updates, namespace or "fact"))
        return {"thread": chosen.id, "written": [w.to_dict() for w in done]}
    if key is None or not str(key).strip():
        raise InvalidRequest(f"{operation} needs a key, e.g. user-format-preference or work:current-project")
    if operation == "read":
        return chosen.read(key).to_dict()
    if operation == "delete":
        kept = chosen.delete(key)
        return {"thread": chosen.id, "key": key, "deleted": True,
                "kept": kept.relative_to(chosen.store.root).as_posix()}  # fmt: skip
    if value is None:
        raise InvalidRequest("write needs a value: the text to keep under the key")
    written: dict[str, Any] = _refusing(lambda: chosen.write(key, value, namespace)).to_dict()
    return written


def searched(chosen: Thread, query: str | None, top: int) -> dict[str, Any]:
    """The thread's items that bear on ``query``, best first (``kura.recall.in_thread``)."""
    if query is None or not str(query).strip():
        raise InvalidRequest("search needs a query: what to look for among the thread's items")
    RecallRequest(str(query), top=top).checked()
    found = thread_recall(chosen.store, chosen.id, str(query), top=top)
    items = []
    for pick in found.picked:
        item = chosen.read(pick.slug).to_dict()
        items.append({**item, "score": None if pick.score is None else round(pick.score, 4)})
    return {"thread": chosen.id, "query": query, "how": found.how, "items": items}


@_private_paths  # errors name stores, never the folders they live in
def observation(
    service: StorePool,
    selector: str | None,
    *,
    bound: str | None,
    thread: object,
    text: str,
    priority: str = "medium",
    task: str = "",
    continuation: str = "",
    readonly: bool,
    unlock: str,
    source: str,
) -> dict[str, Any]:
    """One observation an agent writes: to its thread's log when the server is bound to a
    thread or the call names one, else to the store's; ``source`` (http, mcp) is counted
    against its day's cap."""
    store = service.served(selector).store
    chosen = (
        None if bound is None and thread in (None, "") else Thread.of(store, chosen_thread(bound, thread))
    )
    check_writable(service, store, readonly=readonly, unlock=unlock, what="an observation")
    done = _refusing(
        lambda: observe(
            store,
            text,
            priority,
            thread=chosen,
            task=task or "",
            continuation=continuation or "",
            source=source,
        )
    )
    return {"store": store.name, "thread": chosen.id if chosen else None, **done.to_dict()}


def _journals(service: StorePool, selector: str | None) -> tuple[str, list[Path]]:
    """The store's name and its configured journals' files (``[distill] journals``)."""
    served = service.served(selector)
    config = service.config
    journals = journals_for(
        config.distill, served.config.distill, config_source=config.source, store=served.config.name
    )
    sources, _ = discover(journals, served.store.root)
    return served.store.name, [s.path for s in sources]


@_private_paths  # errors name stores, never the folders they live in
def journal_names(service: StorePool, selector: str | None) -> str:
    """What ``journal`` may be, said for a model: the file names of the store's configured
    journals (never their folders), or that there are none and where the person sets them."""
    name, paths = _journals(service, selector)
    if not paths:
        return (
            f"Store '{name}' has no configured journals ([distill] journals in kura.toml), "
            "so recent and journal cannot be used here."
        )
    shown = sorted({p.name for p in paths})
    more = f" and {len(shown) - 20} more" if len(shown) > 20 else ""
    return (
        f"The transcript's file name, one of store '{name}''s configured journals "
        f"([distill] journals): {', '.join(shown[:20])}{more}."
    )


def journal_path(service: StorePool, selector: str | None, given: str | None, *, recent: int) -> Path | None:
    """The transcript a remote caller's ``journal`` names — only ever one of the store's
    configured journals (``[distill] journals``), by its path or its file name, so a
    request cannot make the server read a file of its choosing."""
    if not recent and not given:
        return None
    if not recent or not given:
        raise InvalidRequest("recent and journal go together: the last N messages of that transcript")
    name, paths = _journals(service, selector)
    found = [p for p in paths if given in (str(p), p.name)]
    if len(found) != 1:
        shown = repr(given) if len(given) <= 80 else repr(given[:79] + "…")
        raise NotFound(
            f"no journal {shown} among store '{name}''s configured journals"
            + (" (two share that name; give its path)" if found else "")
            + " — a server reads only the transcripts [distill] journals names"
        )
    return found[0]


def _refusing(write: Any) -> Any:
    """A secret in what was sent is the caller's to fix: an invalid request, not a policy
    (the server and the store's policy were checked before: this is the secret check)."""
    try:
        return write()
    except Unsafe:
        raise  # the store's link, not the caller's request: a 403 with its reason
    except PolicyRefused as err:
        raise InvalidRequest(str(err)) from None
