"""``kura thread ID write|read|list|delete|update``: a thread's keyed items at the command line
(``kura.threads`` does the work)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from kura.cli.base import JsonOpt, app, core, fail, print_json, say, stdin_text, store_from, warn
from kura.threads import Item, Thread
from kura.threads.items import NAMESPACES

OPERATIONS = ("write", "read", "list", "delete", "update")


@app.command("thread")
def thread_(
    ctx: typer.Context,
    thread: Annotated[str, typer.Argument(help="The thread's id, e.g. support-4711.", metavar="ID")],
    operation: Annotated[
        str, typer.Argument(help="write, read, list, delete or update.", metavar="OPERATION")
    ],
    key: Annotated[
        str | None, typer.Argument(help="The item's key, e.g. work:current-project.", metavar="KEY")
    ] = None,
    value: Annotated[
        str | None, typer.Argument(help="write: the text to keep ('-' reads stdin).", metavar="VALUE")
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="fact, summary, observation or note.", metavar="NS"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Keep a thread's notebook: threads/ID/ in the store, one markdown file per key
    (work:current-project is work/current-project.md), yours to read and edit by hand.

    kura thread ID write KEY VALUE [-n fact] writes an item; read KEY prints it as the file
    says now; list [-n NS] lists the keys; delete KEY removes one (its last text is kept in
    .kura/threads/ID/deleted/); update '{"work:x": "…"}' (or '-' for stdin) writes a map of
    keys in one go. Thread files are never memories: they stay out of the index, the map and
    recall. Exit 2 when there is nothing to read or list."""
    if operation not in OPERATIONS:
        fail(
            f"operation {operation!r} is not one of {', '.join(OPERATIONS)}; kura thread --help explains them"
        )
    if namespace is not None and namespace not in NAMESPACES:
        fail(f"--namespace {namespace!r} is not one of {', '.join(NAMESPACES)}")
    chosen = core(lambda: Thread.of(store_from(ctx), thread))
    if operation == "list":
        _list(chosen, key, namespace, as_json=as_json)
    elif key is None:
        fail(
            f"kura thread {thread} {operation} needs a KEY"
            + (" or a JSON map" if operation == "update" else "")
            + f"; `kura thread {thread} list` shows the keys"
        )
    elif operation == "read":
        _show(core(lambda: chosen.read(key)), as_json=as_json)
    elif operation == "delete":
        kept = core(lambda: chosen.delete(key))
        _done({"thread": chosen.id, "key": key, "deleted": True, "kept": str(kept)}, as_json,
              f"deleted {key} from thread {chosen.id} (its last text is kept in {kept})")  # fmt: skip
    elif operation == "update":
        _update(chosen, key, namespace, as_json=as_json)
    else:
        _write(chosen, key, value, namespace, as_json=as_json)


def _list(chosen: Thread, extra: str | None, namespace: str | None, *, as_json: bool) -> None:
    if extra is not None:
        fail(f"list takes no KEY (got {extra!r}); use --namespace to list one namespace")
    items = core(lambda: chosen.list(namespace))
    if as_json:
        print_json({"thread": chosen.id, "namespace": namespace, "items": [i.to_dict() for i in items]})
    else:
        for item in items:
            first = item.value.strip().split("\n", 1)[0]
            say(f"{item.key}\t{item.namespace}\t{first[:100]}")
        if not items:
            warn(f"thread {chosen.id} has no items" + (f" in namespace {namespace}" if namespace else ""))
    raise typer.Exit(0 if items else 2)


def _show(item: Item, *, as_json: bool) -> None:
    if as_json:
        print_json(item.to_dict())
    else:
        say(item.value)


def _write(chosen: Thread, key: str, value: str | None, namespace: str | None, *, as_json: bool) -> None:
    if value is None:
        fail(f"kura thread {chosen.id} write {key} needs a VALUE ('-' reads it from stdin)")
    text = stdin_text() if value == "-" else value
    done = core(lambda: chosen.write(key, text, namespace))
    what = "created" if done.created else "updated" if done.changed else "unchanged"
    _done(done.to_dict(), as_json, f"{what} {done.item.key} ({done.item.namespace}) in {done.item.path}")


def _update(chosen: Thread, raw: str, namespace: str | None, *, as_json: bool) -> None:
    try:
        updates = json.loads(stdin_text() if raw == "-" else raw)
    except ValueError as err:
        fail(f'update needs a JSON map of key to value, e.g. \'{{"work:x": "…"}}\' ({err})')
    done = core(lambda: chosen.update(updates, namespace or "fact"))
    rows = [w.to_dict() for w in done]
    _done({"thread": chosen.id, "written": rows}, as_json,
          "\n".join(f"{'updated' if w.changed else 'unchanged'} {w.item.key}" for w in done))  # fmt: skip


def _done(data: dict[str, object], as_json: bool, text: str) -> None:
    if as_json:
        print_json(data)
    else:
        say(text)
