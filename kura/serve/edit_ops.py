"""Edits and history for a served store: what ``POST /edit``, ``GET /history/{slug}`` and the
MCP tools ``kura_edit`` and ``kura_history`` call (``kura.life.edit``, ``kura.life.history``).

An edit from a client is an agent's, so it is recorded as such (``origin``: the surface it
came through). A read-only service refuses every edit before the store is asked; then the
store's policy decides — a purge as the person's deletion (``kura.store.policy``: a
``distiller-only`` store allows it, a ``frozen`` one does not), everything else as a direct
write. The warm search index is told which memories changed; before a purge it is closed,
since the purge compacts its database. Errors name stores, never their folders.
"""

from __future__ import annotations

from typing import Any

from kura.errors import InvalidRequest, KuraError, PolicyRefused
from kura.life import edit as ed
from kura.life import history as hs
from kura.request import EditRequest
from kura.serve.pool import StorePool


def edit(service: StorePool, request: EditRequest, *, selector: str | None, origin: str) -> dict[str, Any]:
    """Make the edit in the store ``selector`` names; the answer is ``Edited.to_dict()``."""
    try:
        request.checked()
        served = service.served(selector)
        if service.readonly:
            raise PolicyRefused(f"this service is read-only; store '{served.store.name}' is not edited here")
        served.store.check_write("purge" if request.op == "purge" else "direct")
        if request.op == "purge":
            _close_index(served)
        try:
            done = ed.edit(served.store, request, origin=origin)
        except PolicyRefused as err:  # the policy was checked above: this is the secret check
            raise InvalidRequest(str(err)) from None
    except KuraError as err:
        raise _private(service, err) from None
    with served.lock:
        if served.index is not None and request.op != "purge":
            served.index.refresh([done.slug, *([done.was] if done.was else []), *done.relinked])
    return done.said()


def history(service: StorePool, slug: str, *, selector: str | None) -> dict[str, Any]:
    """The memory's versions and supersede chain (``History.to_dict()``)."""
    try:
        return hs.history(service.served(selector).store, slug).to_dict()
    except KuraError as err:
        raise _private(service, err) from None


def _close_index(served: Any) -> None:
    if served.build is not None:
        served.build.stop()  # not under the lock: the build takes it to write
    with served.lock:
        if served.index is not None:
            served.index.close()
        served.index, served.build, served.checked = None, None, 0.0


def _private(service: StorePool, err: KuraError) -> KuraError:
    """The error naming stores instead of the folders they live in."""
    text = service.private(str(err))
    try:
        return err if text == str(err) else type(err)(text)
    except TypeError:
        return err
