"""``kura edit``, ``kura rename`` and ``kura history``: change a memory in place, and see
every version it had (``kura.life.edit``, ``kura.life.history``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kura.cli.base import JsonOpt, app, core, fail, print_json, say, stdin_text, store_from, warn
from kura.life import edit as ed
from kura.life import edit_say
from kura.life import history as hs
from kura.request import EditRequest


def _option(flag: str, metavar: str, help: str) -> Any:
    return typer.Option(flag, metavar=metavar, help=help)


@app.command()
def edit(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The memory to edit.")],
    append: Annotated[
        str | None, _option("--append", "TEXT", "Add TEXT after the body (- reads stdin).")
    ] = None,
    prepend: Annotated[str | None, _option("--prepend", "TEXT", "Add TEXT above the body.")] = None,
    find: Annotated[str | None, _option("--replace", "OLD", "Replace OLD: it must occur once.")] = None,
    new: Annotated[str | None, _option("--with", "NEW", "What --replace puts in its place.")] = None,
    heading: Annotated[
        str | None, _option("--section", "HEADING", "Replace the section under HEADING.")
    ] = None,
    body: Annotated[str | None, _option("--body", "TEXT", "The section's new text (- reads stdin).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Change one memory in place: append or prepend a paragraph, replace a phrase (refused
    when it occurs nowhere or more than once, saying where), or replace a section by its
    heading. The same checks as kura remember: the store's policy, secrets, sizes, the index
    line kept in step, a superseded or forgotten memory refused. Exit 0 changed, 2 already so.

    \b
    Examples:
      kura edit deploy-day --append "Not on public holidays either."
      kura edit deploy-day --replace "Tuesday" --with "Wednesday"
      kura edit runbook --section "Rollback" --body -    (the section's text on stdin)"""
    request = _request(slug, append=append, prepend=prepend, find=find, new=new, heading=heading, body=body)
    done = core(lambda: ed.edit(store_from(ctx), request))
    _show(done, as_json)


def _request(slug: str, **given: str | None) -> EditRequest:
    """The one op the options name (``-`` as text reads stdin), or a usage failure."""
    ops = [
        op
        for op, key in (
            ("append", "append"),
            ("prepend", "prepend"),
            ("replace", "find"),
            ("section", "heading"),
        )
        if given[key] is not None
    ]
    if len(ops) != 1:
        fail(
            "give one of --append TEXT, --prepend TEXT, --replace OLD --with NEW, "
            "--section HEADING --body TEXT"
        )
    op = ops[0]
    if op == "replace" and given["new"] is None:
        fail("--replace OLD needs --with NEW (--with '' removes OLD)")
    if op == "section" and given["body"] is None:
        fail("--section HEADING needs --body TEXT (- reads it from stdin)")
    if op not in ("replace", "section") and (given["new"] is not None or given["body"] is not None):
        fail("--with goes with --replace, --body with --section")
    text = {
        "append": given["append"],
        "prepend": given["prepend"],
        "replace": given["new"],
        "section": given["body"],
    }[op] or ""
    text = stdin_text() if text == "-" else text
    if op == "replace" and not text:
        return EditRequest(slug, op, find=given["find"] or "", text="")
    return EditRequest(slug, op, text=text, find=given["find"] or "", heading=given["heading"] or "")


@app.command()
def rename(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(help="The memory's slug now.")],
    new: Annotated[str, typer.Argument(help="Its new slug.")],
    as_json: JsonOpt = False,
) -> None:
    """Rename a memory: its file (bytes kept, so git sees a rename), its index line (where it
    stood), and every [[link]] and frontmatter pointer to it across the store. Exit 2 when
    it already has that name.

    Example: kura rename deploy deploy-day"""
    done = core(lambda: ed.edit(store_from(ctx), EditRequest(old, "rename", to=new)))
    _show(done, as_json)


def _show(done: ed.Edited, as_json: bool) -> None:
    said = done.said()
    if as_json:
        print_json(said)
    else:
        say(edit_say.summary(said))
        for note in said["notes"]:
            warn(note)
    if not done.changed:
        raise typer.Exit(2)


@app.command()
def history(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The memory whose versions to show.")],
    full: Annotated[bool, typer.Option("--full", help="Print each version's whole text.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Every version of a memory, newest first: from git when the store is in a work tree
    (each commit that touched its file, renames followed, and edits not yet committed),
    else from what the file records (created, updated, witnesses, archived); with the day,
    who or what wrote it (person, agent, distiller, setup, sync) and the supersede chain
    it belongs to. Exit 2 when nothing is recorded.

    Example: kura history deploy-day --full"""
    found = core(lambda: hs.history(store_from(ctx), slug))
    if as_json:
        print_json(found.to_dict())
    else:
        say("\n".join(hs.lines(found.to_dict(), full=full)))
    if not found.versions:
        raise typer.Exit(2)
