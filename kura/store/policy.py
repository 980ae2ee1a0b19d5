"""Write policies: who may write to a store, decided in one place.

A policy is a property of the store, not of the caller, so it is checked by the store on
every write path (CLI, HTTP, MCP, import, distiller) rather than trusted to each edge.
``direct-allowed``: anyone may write; ``distiller-only``: only drafts that passed the
evidence gate; ``frozen``: nothing (an archive you keep but do not grow).

A policy guards what comes *in*. The writers (actors) are ``direct`` (a person or an agent
writing a memory: CLI, HTTP, MCP, import), ``distiller`` (a draft that passed the gate) and
``purge`` (a person deleting a memory and its traces, ``kura forget --purge``). A purge
takes nothing in — it removes a file, its index line and the pointers to it — so the gate
a ``distiller-only`` store keeps has nothing to say about it: deleting a secret pasted into
a conversation is the person's right on any store they can still change. ``frozen`` means
nothing changes, a deletion included.
"""

from __future__ import annotations

from kura.errors import PolicyRefused, StoreError

POLICIES = ("direct-allowed", "distiller-only", "frozen")
ACTORS = ("direct", "distiller", "purge")
ADMITS: dict[str, frozenset[str]] = {
    "direct-allowed": frozenset(ACTORS),
    "distiller-only": frozenset({"distiller", "purge"}),
    "frozen": frozenset(),
}


def check_write(policy: str, actor: str, *, store: str, where: str) -> None:
    """Raise PolicyRefused when ``policy`` does not let ``actor`` write to ``store``."""
    if actor not in ACTORS:
        raise StoreError(f"unknown writer {actor!r}; expected one of {', '.join(ACTORS)}")
    if actor in ADMITS[policy]:
        return
    if policy == "frozen":
        raise PolicyRefused(
            f"store '{store}' ({where}) is frozen: nothing may write to it — set "
            f"write_policy under [stores.{store}] in kura.toml to allow writes"
        )
    raise PolicyRefused(
        f"store '{store}' ({where}) is distiller-only: direct writes are refused — let "
        f'`kura distill` draft it, or set write_policy = "direct-allowed" under [stores.{store}]'
    )
