"""``kura list``'s text, shared by the fast path (``kura.cli.entry``) and the typer command.

At 20,000 memories the listing itself comes from the catalog in a few tenths of a second,
about what building the typer app costs, so a plain ``kura list`` or ``kura list --all`` is
answered by the front door; any other option goes through typer, which prints the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kura.cli.exit import echo, warn
from kura.config import load_config
from kura.store.catalog import listing

if TYPE_CHECKING:
    from kura.store.listing import Listing


def list_command(chosen: dict[str, str]) -> int:
    """``kura [-c CONFIG] [-s STORE] list [--all]`` (``chosen["all"]``); raises whatever
    went wrong before anything is printed, for the full command line to report."""

    store = load_config(chosen.get("config")).open(chosen.get("store"))
    found = listing(store, everything="all" in chosen)
    try:
        return show_listing(found, store=store.name, everything="all" in chosen)
    except BrokenPipeError:
        raise  # the reader left (`kura list | head`): the front door ends quietly
    except Exception as err:  # noqa: BLE001 - printing began: said here, not printed twice
        warn(f"unexpected error: {type(err).__name__}: {err}")
        return 1


def show_listing(found: Listing, *, store: str, type: str | None = None, everything: bool = False) -> int:
    """Print one line per memory (slug, type, description, why it is retired) and how many
    were left out; the exit code: 2 when none is listed (said on stderr, stdout left empty
    for a script)."""
    rows = found.memories
    width = max((len(m.slug) for m in rows), default=0)
    lines = []
    for m in rows:
        mark = f"  {m.retired.mark}" if m.retired else ""
        lines.append(f"{m.slug:<{width}}  {m.type or '?':<9}  {m.description}{mark}")
    if lines:  # one write: echoing 20,000 lines one by one takes longer than reading them
        echo("\n".join(lines))  # typer's bytes wherever the listing is printed
    if found.hidden:
        which = "memory" if found.hidden == 1 else "memories"
        warn(f"{found.hidden} archived or superseded {which} not shown — kura list --all lists them")
    elif not rows:
        warn(_none_listed(store, type, everything))
    return 0 if rows else 2


def _none_listed(name: str, type: str | None, everything: bool) -> str:
    current = "" if everything else " current"
    if type is not None:
        return f"store '{name}' has no{current} {type} memories (kura list shows every type)"
    return f"store '{name}' has no{current} memories; `kura remember SLUG DESCRIPTION` writes one"
