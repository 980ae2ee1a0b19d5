"""``kura setup HOST``: wire kura into an agent host with one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kura.cli.base import JsonOpt, app, core, fail, print_json, say, warn
from kura.cli.git import _kura_bin
from kura.hosts.settings_file import FilePlan
from kura.hosts.setup import Report, Request, run
from kura.hosts.wiring import HOSTS

_PAST = {"added": "added", "updated": "updated", "removed": "removed"}
_WOULD = {"added": "would add", "updated": "would update", "removed": "would remove"}


@app.command("setup")
def setup(
    host: Annotated[str, typer.Argument(help=f"The host to wire kura into: {', '.join(HOSTS)}.")],
    user: Annotated[
        bool, typer.Option("--user", help="The host's user-level files, bound to your personal store.")
    ] = False,
    project: Annotated[
        Path | None,
        typer.Option(
            "--project", help="The project folder (default: the git root of this folder).", metavar="DIR"
        ),
    ] = None,
    store: Annotated[
        str | None, typer.Option("--store", help="Bind to this store (a name or a folder).", metavar="S")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would change; write nothing.")
    ] = False,
    remove: Annotated[
        bool, typer.Option("--remove", help="Take out what setup added (entries still exactly kura's).")
    ] = False,
    recall_on_prompt: Annotated[
        bool,
        typer.Option("--recall-on-prompt", help="Claude Code: also recall memories for every prompt."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Wire kura into an agent host: merge kura's MCP server (and for Claude Code its hooks and
    auto-memory folder) into the host's own config files, keeping everything else in them.

    Claude Code: .claude/settings.json (hooks), .mcp.json (MCP server), .claude/settings.local.json
    (approval, auto memory). Codex: $CODEX_HOME/config.toml. Cursor: .cursor/mcp.json. Gemini CLI:
    .gemini/settings.json. VS Code: .vscode/mcp.json. Each changed file is backed up first under
    the user's state folder; --remove takes kura's entries out again. See docs/hosts.md.

    Exit 0 when something changed, 2 when everything was already there, 1 on a file kura
    cannot read (left untouched) or a refusal."""
    if host not in HOSTS:
        fail(f"unknown host {host!r}; choose one of {', '.join(HOSTS)}")
    if user and project is not None:
        fail("--user and --project name two different places; give one")
    request = Request(
        host=host, kura=_kura_bin(), scope="user" if user else "project", project=project,
        store=store, dry_run=dry_run, remove=remove, recall_on_prompt=recall_on_prompt,
    )  # fmt: skip
    report = core(lambda: run(request))
    if as_json:
        print_json(_as_json(report, dry_run))
    else:
        _show(report, dry_run, remove=remove)
    if any(o.verdict == "left" for p in report.plans for o in p.outcomes):
        for line in _left(report):
            warn(line)
    if not report.did_work:
        raise typer.Exit(2)


def _show(report: Report, dry_run: bool, *, remove: bool = False) -> None:
    words = _WOULD if dry_run else _PAST
    untouched = "nothing of kura's to take out" if remove else "already set up"
    for line in report.steps:
        say(line)
    for plan in report.plans:
        changed = [o for o in plan.outcomes if o.verdict in words]
        if not changed:
            say(f"{plan.path}: {untouched}")
            continue
        verb = "would change" if dry_run else ("removed" if plan.after is None else "wrote")
        say(
            f"{plan.path}: {verb}"
            + (f" (backup: {report.backups[plan.path]})" if plan.path in report.backups else "")
        )
        for outcome in changed:
            say(f"  {words[outcome.verdict]} {outcome.setting.where}" + _value(outcome.setting.value))
    if dry_run:
        say("dry run: nothing was written")


def _value(value: Any) -> str:
    if isinstance(value, dict) and "command" in value:
        return f" = {value['command']} {' '.join(value.get('args', []))}"
    if isinstance(value, dict) and isinstance(value.get("hooks"), list) and value["hooks"]:
        return f" = {value['hooks'][0].get('command', '')}"
    return f" = {value}" if isinstance(value, str) else ""


def _left(report: Report) -> list[str]:
    return [
        f"{plan.path}: {o.setting.where} left as it is — {o.note}"
        for plan in report.plans
        for o in plan.outcomes
        if o.verdict == "left"
    ]


def _as_json(report: Report, dry_run: bool) -> dict[str, Any]:
    def file(plan: FilePlan) -> dict[str, Any]:
        return {
            "path": str(plan.path),
            "changed": plan.changed,
            "removed_file": plan.changed and plan.after is None,
            "backup": str(report.backups[plan.path]) if plan.path in report.backups else None,
            "entries": [
                {"key": o.setting.where, "verdict": o.verdict, "note": o.note, "value": o.setting.value}
                for o in plan.outcomes
            ],
        }

    return {
        "root": str(report.root),
        "store": str(report.store) if report.store else None,
        "dry_run": dry_run,
        "did_work": report.did_work,
        "steps": list(report.steps),
        "files": [file(plan) for plan in report.plans],
    }
