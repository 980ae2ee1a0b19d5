"""The web pages that answer a question: search, the context preview and store health.

As ``kura.serve.web_pages``: pure functions from the data the CLI would print to escaped
markup, no inline script or style.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from kura.serve.web_data import Paged
from kura.serve.web_pages import Here, counted, e, layout, pager_links

LEFT_SHOWN = 50  # left-out items a context section lists; the rest are counted by reason


def search_page(here: Here, question: str, found: dict[str, Any] | None, described: Mapping[str, str]) -> str:
    """``kura recall``'s answer: how it searched, what it picked, what the links walked to."""
    form = (
        f'<form class="ask" method="get" action="{here.href("/ui/search")}">'
        + _kept(here)
        + f'<input name="q" value="{e(question)}" placeholder="what do you want to find?" '
        'aria-label="question" autofocus><button type="submit">Search</button></form>'
    )
    if found is None:
        return layout(
            here, "search", "Search", form + "<p>Asks the same recall as <code>kura recall</code>.</p>"
        )
    how = f'<p class="how">how: <b>{e(found.get("how", ""))}</b>'
    if found.get("degraded"):
        how += f' <span class="badge warn">degraded</span> {e(found.get("reason", ""))}'
    how += "</p>"
    picked = "".join(
        f'<li><a href="{here.memory(p["slug"])}">{e(p["slug"])}</a> '
        f'<span class="score">{float(p.get("score") or 0):.3f}</span>'
        + (
            ""
            if p.get("asserted", True)
            else f' <span class="badge warn">{e(p.get("status", "withheld"))}</span>'
        )
        + f'<div class="desc">{e(described.get(p["slug"], ""))}</div></li>'
        for p in found.get("picked") or ()
    )
    walked = "".join(
        f'<li><a href="{here.memory(s)}">{e(s)}</a><div class="desc">{e(described.get(s, ""))}</div></li>'
        for s in found.get("walked") or ()
    )
    body = form + how
    body += f'<h2>Found</h2><ol class="list">{picked}</ol>' if picked else "<p>Nothing bears on that.</p>"
    if walked:
        body += f'<h2>Linked from those</h2><ul class="list">{walked}</ul>'
    return layout(here, "search", "Search", body)


def _kept(here: Here) -> str:
    """The store selector as hidden fields, so a GET form keeps it."""
    return "".join(f'<input type="hidden" name="{e(k)}" value="{e(v)}">' for k, v in here.selector)


def context_page(
    here: Here, task: str, budget: int, told: dict[str, Any] | None, limits: tuple[int, int]
) -> str:
    """``kura context``: by section, each item with its tokens and why, what was left out and why,
    then the text itself as it would be injected."""
    form = (
        f'<form class="ask" method="get" action="{here.href("/ui/context")}">'
        + _kept(here)
        + f'<textarea name="task" rows="3" placeholder="what is the model about to do?" aria-label="task">'
        f'{e(task)}</textarea><label>budget <input name="budget" type="number" value="{budget}" '
        f'min="{limits[0]}" max="{limits[1]}"> tokens</label><button type="submit">Preview</button></form>'
    )
    if told is None:
        intro = "<p>Shows exactly what <code>kura context</code> would inject for a task.</p>"
        return layout(here, "context", "Context", form + intro)
    head = (
        f'<p class="how">{int(told.get("tokens") or 0)} of {int(told.get("budget") or 0)} tokens · recall: '
        f"<b>{e(told.get('recall', ''))}</b>"
        + (f" — {e(told.get('reason'))}" if told.get("reason") else "")
        + "".join(f' <span class="badge warn">{e(d)}</span>' for d in told.get("degraded") or ())
        + "</p>"
    )
    items: dict[str, list[dict[str, Any]]] = {}
    for item in told.get("items") or ():
        items.setdefault(item["section"], []).append(item)
    left: dict[str, list[dict[str, Any]]] = {}
    for item in told.get("left_out") or ():
        left.setdefault(item["section"], []).append(item)
    parts = []
    text = str(told.get("text") or "")
    for section in told.get("sections") or ():
        name = section["name"]
        if not items.get(name) and not left.get(name):
            continue
        parts.append(
            _section(here, section, items.get(name, []), left.get(name, []), _chunk(text, section, told))
        )
    empty = [
        s["name"] for s in told.get("sections") or () if not items.get(s["name"]) and not left.get(s["name"])
    ]
    if empty:
        parts.append(f'<p class="small">Empty: {e(", ".join(empty))}.</p>')
    whole = (
        f'<details><summary>The whole text, as injected</summary><pre class="body">{e(text)}</pre></details>'
    )
    return layout(here, "context", "Context", form + head + "".join(parts) + whole)


def _section(
    here: Here,
    section: dict[str, Any],
    items: Sequence[dict[str, Any]],
    left: Sequence[dict[str, Any]],
    chunk: str,
) -> str:
    rows = "".join(_row(here, i) for i in items)
    out = "".join(_row(here, i) for i in left[:LEFT_SHOWN])
    if len(left) > LEFT_SHOWN:  # at 10,000 memories the map alone leaves thousands of lines out
        more = len(left) - LEFT_SHOWN
        out += f'<tr><td colspan="3">and {more} more left out ({e(_reasons(left[LEFT_SHOWN:]))})</td></tr>'
    return (
        f'<section class="ctx"><h2>{e(section.get("heading") or section["name"])}</h2>'
        f'<p class="small">{e(section["name"])} · {int(section.get("tokens") or 0)} tokens, '
        f"{int(section.get('items') or 0)} item(s)</p>"
        + (
            '<div class="scroll"><table><tr><th>source</th><th>tokens</th><th>why</th></tr>'
            f"{rows}</table></div>"
            if rows
            else ""
        )
        + (f'<pre class="body">{e(chunk)}</pre>' if chunk else "")
        + (
            f'<h3>Left out</h3><div class="scroll"><table class="left"><tr><th>source</th><th>tokens</th>'
            f"<th>why</th></tr>{out}</table></div>"
            if out
            else ""
        )
        + "</section>"
    )


def _reasons(items: Sequence[dict[str, Any]]) -> str:
    """The reasons ``items`` were left out, each with its count, most common first."""
    counts: dict[str, int] = {}
    for item in items:
        why = str(item.get("why") or "no reason given")
        counts[why] = counts.get(why, 0) + 1
    return "; ".join(f"{n} {why}" for why, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def _row(here: Here, item: dict[str, Any]) -> str:
    source = str(item.get("source") or "")
    shown = f'<a href="{here.memory(source)}">{e(source)}</a>' if _slug_like(source) else e(source)
    return (
        f"<tr><td>{shown}</td><td>{int(item.get('tokens') or 0)}</td><td>{e(item.get('why') or '')}</td></tr>"
    )


def _slug_like(source: str) -> bool:
    return bool(source) and all(c.isalnum() or c in "-_/." for c in source) and ":" not in source


def _chunk(text: str, section: dict[str, Any], told: dict[str, Any]) -> str:
    """The part of the injected text under this section's heading (up to the next heading)."""
    heading = str(section.get("heading") or "")
    at = text.find(heading) if heading else -1
    if at < 0:
        return ""
    ends = [
        text.find(str(other.get("heading")), at + len(heading))
        for other in told.get("sections") or ()
        if other.get("heading") and other is not section
    ]
    stop = min([i for i in ends if i > at] or [len(text)])
    return text[at:stop].strip("\n")


def health_page(
    here: Here,
    report: dict[str, Any],
    slugs: set[str],
    findings: Paged[dict[str, Any]],
    *,
    fixes: str = "",
    editable: bool = False,
    status: str = "",
) -> str:
    """``kura doctor``: its findings a page at a time, each with its file:line, linked to the
    memory it is about (and to its edit form, to resolve it there); ``fixes``: the buttons
    that fix what ``kura doctor --fix`` fixes (markup of ``kura.serve.web_edit``)."""
    rows = []
    for f in findings.rows:
        path = str(f.get("path") or "")
        where = f"{path}:{f.get('line')}" if f.get("line") else path
        stem = path[:-3] if path.endswith(".md") else ""
        slug = stem if stem in slugs else stem.removeprefix(f"{here.store}/")  # doctor names store/file
        shown = (
            f'<a href="{here.memory(slug)}">{e(where)}</a>' if slug in slugs else f"<code>{e(where)}</code>"
        )
        if editable and slug in slugs:  # this page may write: the memory's own form resolves it
            shown += f' <a class="small" href="{here.href("/ui/edit/" + quote(slug, safe="/"))}">edit</a>'
        rows.append(
            f'<li class="sev-{e(f.get("severity"))}"><span class="badge">{e(f.get("severity"))}</span> '
            f"{shown} <span class=small>{e(f.get('check'))}</span><div>{e(f.get('message'))}</div></li>"
        )
    state = "healthy" if report.get("healthy") else "needs attention"
    types = ", ".join(f"{int(n)} {e(t)}" for t, n in (report.get("types") or {}).items())
    graph = report.get("graph") or {}
    islands = graph.get("islands") or []
    dead = graph.get("dead") or []
    summary = (
        f'<p class="how"><b>{e(state)}</b> · {int(report.get("memories") or 0)} memories ({types})'
        + (f" · index {int(report['index_tokens'])} tokens" if report.get("index_tokens") else "")
        + "</p>"
        + f"<p>Links: {int(graph.get('resolved') or 0)} resolved, {len(dead)} dead, "
        + f"{len(islands)} island(s). "
        f'<a href="{here.href("/ui/graph")}">See the graph</a>.</p>'
    )
    if islands:
        summary += "<p>Islands: " + ", ".join(_slug_links(here, islands, slugs)) + "</p>"
    listing = f'<ul class="findings">{"".join(rows)}</ul>' if rows else "<p>No findings.</p>"
    pager = pager_links(here, "/ui/health", findings)
    body = summary + fixes + counted(findings, "findings") + pager + listing + pager
    return layout(here, "health", "Health", body, status=status)


def _slug_links(here: Here, values: Sequence[str], slugs: set[str]) -> list[str]:
    return [f'<a href="{here.memory(s)}">{e(s)}</a>' if s in slugs else e(s) for s in map(str, values)]
