"""``kura doctor``'s text, shared by the fast path (``kura.cli.entry``) and the typer command.

At 20,000 memories doctor's own work is about a second, and building the whole typer app
(every command's imports) would add a fifth to it; so a plain ``kura doctor`` is answered by
the front door, and any option goes through typer, which prints the same.
"""

from __future__ import annotations

from typing import Any

from kura import config as cfg
from kura.cli.exit import echo
from kura.health.doctor import Report, diagnose, in_proportion


def doctor_command(chosen: dict[str, str]) -> int:
    """``kura [-c CONFIG] [-s STORE] doctor``; raises whatever went wrong before anything
    is printed, for the full command line to report."""
    config = cfg.load_config(chosen.get("config"))
    store = config.store_config(chosen.get("store"))
    report = diagnose(store.open(), config.map_settings(store))
    return show_reports([report], each=False, strict=False)


def show_reports(reports: list[Report], *, each: bool, strict: bool) -> int:
    """Print each report (a summary line, the graph line, one line per finding, islands
    and dead ends counted unless ``each``); the exit code: 1 when anything is wrong (with
    ``strict``, warnings count too), else 0."""
    lines = []
    for report in reports:
        kinds = ", ".join(f"{kind} {n}" for kind, n in report.counts.items())
        state = "healthy" if not report.problems else f"{report.problems} problem(s)"
        watching = f"; watcher alive (pid {report.watcher['pid']})" if report.watcher else ""
        if report.building is not None and report.building.state != "done":
            watching += f"; {report.building.line()}"
        lines.append(f"{report.store}: {report.memories} memories ({kinds}) — {state}{watching}")
        if report.graph is not None:
            lines.append(f"  {_graph_line(report.graph)}")
        for check, severity, text in in_proportion(report.findings, each=each):
            label = check if severity == "error" else f"{check}, {severity}"
            lines.append(f"  {text}  [{label}]")
    echo("\n".join(lines))  # typer's bytes wherever the reports are printed
    failing = sum(r.problems if strict else r.errors for r in reports)
    return 1 if failing else 0


def _graph_line(graph: Any) -> str:
    hubs = ", ".join(f"{slug} ({n})" for slug, n in graph.hubs[:3]) or "none"
    largest = graph.clusters[0] if graph.clusters else 0
    return (
        f"links: {graph.resolved} resolved, {len(graph.dead)} dead; islands {len(graph.islands)}, "
        f"dead ends {len(graph.dead_ends)}; {len(graph.clusters)} cluster(s), largest {largest}; hubs: {hubs}"
    )
