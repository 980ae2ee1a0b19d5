"""The web pages as HTML text: layout, the map, drafts, memories and one memory.

Pure functions from data to markup, no web framework: ``kura.serve.web`` gathers the data
(through the same calls the CLI, HTTP API and MCP make) and answers with what these return.
Every value from a store — memory text, draft quotes, slugs, findings — is untrusted and
goes through ``e`` (HTML-escaped, quotes too); markup is only ever this module's own. No
inline script or style anywhere: the Content-Security-Policy forbids both.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from kura.distill.drafts import Draft
from kura.serve.web_data import Paged

NAV = (
    ("map", "Map", "/"),
    ("drafts", "Drafts", "/ui/drafts"),
    ("memories", "Memories", "/ui/memories"),
    ("search", "Search", "/ui/search"),
    ("context", "Context", "/ui/context"),
    ("health", "Health", "/ui/health"),
    ("graph", "Graph", "/ui/graph"),
)
TYPE_ORDER = ("user", "feedback", "project", "reference", "idea")


def e(value: Any) -> str:
    """Escaped for HTML text and attribute values alike."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True)
class Here:
    """How a page names its store in the links it makes: the ``/s/{name}`` prefix it was
    reached under, or the ``?store=``/``?mode=`` it was given (kept on every link)."""

    store: str
    prefix: str = ""
    selector: tuple[tuple[str, str], ...] = ()
    stores: tuple[str, ...] = ()

    def href(self, path: str, **params: Any) -> str:
        pairs = [*self.selector, *((k, str(v)) for k, v in params.items() if v not in (None, ""))]
        query = f"?{urlencode(pairs)}" if pairs else ""
        return e(f"{self.prefix}{path}{query}")

    def memory(self, slug: str) -> str:
        return self.href(f"/ui/memory/{quote(slug, safe='/')}")

    def post(self, path: str) -> str:
        return self.href(path)


def layout(here: Here, active: str, title: str, body: str, *, status: str = "") -> str:
    links = "".join(
        f'<a href="{here.href(path)}"{" aria-current=page" if key == active else ""}>{e(label)}</a>'
        for key, label, path in NAV
    )
    others = ""
    if len(here.stores) > 1:
        others = '<span class="stores">' + " ".join(
            f'<a href="{e(f"/s/{quote(name)}/")}"{" aria-current=page" if name == here.store else ""}>'
            f"{e(name)}</a>"
            for name in here.stores
        ) + "</span>"  # fmt: skip
    note = f'<p class="status">{status}</p>' if status else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)} · kura · {e(here.store)}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/ui/static/kura.css"></head>
<body><header><a class="brand" href="{here.href("/")}">kura</a>
<span class="store">store <b>{e(here.store)}</b></span>{others}
<nav>{links}</nav></header>
<main>{note}<h1>{e(title)}</h1>
{body}
</main></body></html>
"""


def message_page(here: Here, title: str, text: str) -> str:
    return layout(here, "", title, f"<p>{e(text)}</p>")


# -- the map -------------------------------------------------------------------------------

_LINKED = re.compile(r"\]\(([A-Za-z0-9][\w./-]*?)\.md\)")


def home(here: Here, map_text: str, tokens: int) -> str:
    """The map exactly as the agent is given it, each ``(slug.md)`` made a link."""

    def linked(match: re.Match[str]) -> str:
        slug = html.unescape(match.group(1))
        return f'](<a href="{here.memory(slug)}">{e(slug)}.md</a>)'

    shown = _LINKED.sub(linked, e(map_text))
    body = (
        f'<p class="lead">What an agent working in store <b>{e(here.store)}</b> is given at the start '
        f"(<code>kura prefill</code>, about {tokens} tokens), as it is given.</p>"
        f'<pre class="map">{shown}</pre>'
    )
    return layout(here, "map", "The map", body)


# -- drafts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DraftView:
    """One staged draft as the page shows it: its evidence decoded to (class, text), its
    problem without the machine's path, and ``floor``: the final-surface floor's findings."""

    draft: Draft
    evidence: tuple[tuple[str, str], ...]
    problem: str
    floor: tuple[str, ...] = field(default=())

    @property
    def pourable(self) -> bool:
        return not (self.draft.tampered or self.draft.incomplete) and self.draft.kind != "idea"


def drafts_page(here: Here, drafts: Sequence[DraftView], *, writable: str | None, status: str = "") -> str:
    """``writable``: None when pour and toss may be offered, else why they are not."""
    if writable is not None:
        intro = f'<p class="readonly">Read-only here: {e(writable)}</p>'
    else:
        intro = (
            "<p class=lead>Pour goes through the same verified door as <code>kura distill pour</code>: "
            "the mark, the final-surface floor, the store's policy. Toss moves the draft to "
            "<code>.kura/drafts/tossed/</code> with your reason.</p>"
        )
    if not drafts:
        return layout(here, "drafts", "Drafts", intro + "<p>No drafts are staged.</p>", status=status)
    cards = "\n".join(_draft(here, d, writable is None) for d in drafts)
    count = f"<p>{len(drafts)} staged draft{'s' if len(drafts) != 1 else ''}.</p>"
    return layout(here, "drafts", "Drafts", intro + count + cards, status=status)


def _draft(here: Here, view: DraftView, writable: bool) -> str:
    d = view.draft
    marks = []
    if d.tampered:
        marks.append('<span class="badge bad">tampered — never poured</span>')
    if d.incomplete:
        marks.append('<span class="badge warn">incomplete — the next pass writes it again</span>')
    if d.kind == "idea":
        marks.append('<span class="badge">idea — belongs in a seed file</span>')
    flags = "".join(f'<span class="flag">{e(f)}</span>' for f in d.flags)
    quotes = "".join(
        f'<li class="q q-{e(cls.lower())}"><span class="cls">{e(cls)}</span> {e(text)}</li>'
        for cls, text in view.evidence
    )
    floor = (
        '<div class="floor bad"><b>The final-surface floor refuses it:</b><ul>'
        + "".join(f"<li>{e(f)}</li>" for f in view.floor)
        + "</ul></div>"
        if view.floor
        else '<div class="floor ok">The final-surface floor finds nothing.</div>'
    )
    if d.tampered or d.incomplete:
        floor = f'<div class="floor bad">{e(view.problem)}</div>'
    target = (
        f'extends <a href="{here.memory(d.extends)}">{e(d.extends)}</a>'
        if d.extends
        else f"new memory <b>{e(d.slug)}</b>"
    )
    actions = ""
    if writable:
        where = "/ui/drafts/" + quote(d.id, safe="")
        pour = (
            f'<form method="post" action="{here.post(where + "/pour")}">'
            '<button class="pour" type="submit">Pour</button></form>'
            if view.pourable and not view.floor
            else ""
        )
        toss = (
            f'<form class="toss" method="post" action="{here.post(where + "/toss")}">'
            f'<label>Reason <input name="reason" required maxlength="300" '
            f'placeholder="why not keep it"></label><button type="submit">Toss</button></form>'
        )
        actions = f'<div class="actions">{pour}{toss}</div>'
    return f"""<article class="draft t-{e(d.kind)}" id="draft-{e(d.id)}">
<div class="meta"><span class="type">{e(d.kind or "?")}</span> {target} {"".join(marks)}</div>
<h2>{e(d.title or d.slug)}</h2>
<p class="desc">{e(d.description)}</p>
<pre class="body">{e(d.body)}</pre>
<h3>Evidence</h3><ul class="quotes">{quotes or "<li>none recorded</li>"}</ul>
<div class="flags">{flags}</div>
{floor}
<p class="small">draft <code>{e(d.id)}</code> · from <code>{e(d.source)}</code> · {e(d.when)}</p>
{actions}
</article>"""


# -- memories ------------------------------------------------------------------------------


def memories_page(
    here: Here, shown: Paged[dict[str, Any]], counts: Mapping[str, int], kind: str | None = None
) -> str:
    """A page of the memories (of ``kind``), grouped by type, with every type's count as a
    filter and the links to the other pages."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for m in shown.rows:
        by_type.setdefault(str(m.get("type") or "?"), []).append(m)
    parts = []
    for kind_shown in _ordered(by_type):
        rows = "".join(_memory_row(here, kind_shown, m) for m in by_type[kind_shown])
        parts.append(f'<section><h2 class="t-{e(kind_shown)}">{e(kind_shown)}</h2>'
                     f'<ul class="list">{rows}</ul></section>')  # fmt: skip
    total = sum(counts.values())
    filters = " · ".join(
        (
            f"<b>{e(t)} ({counts[t]})</b>"
            if t == kind
            else f'<a href="{here.href("/ui/memories", type=t)}">{e(t)} ({counts[t]})</a>'
        )
        for t in _ordered(counts)
    )
    every = "all" if kind is None else f'<a href="{here.href("/ui/memories")}">all</a>'
    intro = f"<p>{total} memories, archived and superseded ones included.</p>"
    intro += f'<p class="filters">{every} · {filters}</p>'
    intro += counted(shown, "memories")
    pager = pager_links(here, "/ui/memories", shown, type=kind)
    return layout(here, "memories", "Memories", intro + pager + "".join(parts) + pager)


def _ordered(kinds: Iterable[str]) -> list[str]:
    kinds = set(kinds)
    return [t for t in TYPE_ORDER if t in kinds] + sorted(t for t in kinds if t not in TYPE_ORDER)


def _memory_row(here: Here, kind: str, m: dict[str, Any]) -> str:
    state = m.get("state")
    badge = f' <span class="badge">{e(state)}</span>' if state not in (None, "current") else ""
    return (
        f'<li class="t-{e(kind)}"><a href="{here.memory(m["slug"])}">{e(m.get("name") or m["slug"])}</a>'
        f'{badge}<div class="desc">{e(m.get("description") or "")}</div></li>'
    )


def counted(shown: Paged[Any], what: str) -> str:
    """ "Showing 201–400 of 10,000 memories." when there is more than one page."""
    if shown.pages <= 1:
        return ""
    return f'<p class="small">Showing {shown.first}–{shown.last} of {shown.total} {e(what)}.</p>'


def pager_links(here: Here, path: str, shown: Paged[Any], **params: Any) -> str:
    """Links to the first, previous, next and last pages, when there is more than one."""
    if shown.pages <= 1:
        return ""
    n, last = shown.number, shown.pages
    steps = [
        ("first", 1, n > 1),
        ("previous", n - 1, n > 1),
        ("next", n + 1, n < last),
        ("last", last, n < last),
    ]
    rel = {"previous": "prev", "next": "next", "first": "first", "last": "last"}
    links = " ".join(
        f'<a rel="{rel[label]}" href="{here.href(path, **params, page=to)}">{label}</a>'
        if live
        else f'<span class="off">{label}</span>'
        for label, to, live in steps
    )
    return f'<nav class="pager" aria-label="pages">page {n} of {last} · {links}</nav>'


def memory_page(
    here: Here,
    memory: dict[str, Any],
    why: dict[str, Any] | None,
    links_in: Sequence[str],
    known: set[str],
    *,
    actions: str = "",
    status: str = "",
) -> str:
    """One memory: its text, why it is believed, its links; ``actions``: the edit and forget
    controls (markup of ``kura.serve.web_edit``), ``status``: what the last write did."""
    out = "".join(
        f'<li><a href="{here.memory(s)}">{e(s)}</a></li>'
        if s in known
        else f'<li class="dead">{e(s)} (no such memory)</li>'
        for s in memory.get("links") or ()
    )
    into = "".join(f'<li><a href="{here.memory(s)}">{e(s)}</a></li>' for s in links_in)
    findings = "".join(f"<li>{e(f)}</li>" for f in memory.get("findings") or ())
    body = (
        f'<div class="meta"><span class="type t-{e(memory.get("type"))}">{e(memory.get("type"))}</span> '
        f"<code>{e(memory.get('path'))}</code></div>"
        f'<p class="desc">{e(memory.get("description") or "")}</p>'
        + actions
        + (_why(here, why) if why else "")
        + f'<h2>Text</h2><pre class="body">{e(memory.get("text") or "")}</pre>'
        + ('<h2>Problems</h2><ul class="bad">' + findings + "</ul>" if findings else "")
        + '<div class="links"><section><h2>Links out</h2><ul>'
        + (out or "<li>none</li>")
        + "</ul></section><section><h2>Links in</h2><ul>"
        + (into or "<li>none</li>")
        + "</ul></section></div>"
    )
    return layout(here, "memories", str(memory.get("name") or memory.get("slug")), body, status=status)


def _why(here: Here, why: dict[str, Any]) -> str:
    """``kura why`` as a block: the verdict, the bars, the witnesses, what it replaced."""
    asserted = bool(why.get("asserted"))
    verdict = f'<p class="verdict {"ok" if asserted else "warn"}">{e(why.get("verdict", ""))}</p>'
    bars = "".join(
        f'<div class="bar"><span>{e(name)}</span>'
        f'<meter min="0" max="1" value="{float(why.get(key) or 0):.2f}">'
        f"</meter><span>{float(why.get(key) or 0):.2f}</span></div>"
        for name, key in (("confidence", "confidence"), ("strength", "strength"))
    )
    witnesses = "".join(
        f"<tr><td>{e(w.get('kind'))}{' (implicit: written by hand)' if w.get('implicit') else ''}</td>"
        f"<td>{float(w.get('weight') or 0):.2f} → {float(w.get('value') or 0):.2f}</td>"
        f"<td>{e(w.get('when') or 'undated')}</td><td>{e(w.get('session') or '')}</td>"
        f"<td>{e(w.get('quote') or '')}</td></tr>"
        for w in why.get("witness_list") or ()
    )
    reasons = "".join(f"<li>{e(r)}</li>" for r in why.get("reasons") or ())
    replaced_by = why.get("replaced_by")
    replaced = why.get("replaced") or []
    lines = [
        ("since", e(why.get("since") or "—")),
        ("until", e(why.get("until") or "still current")),
        ("replaced", ", ".join(f'<a href="{here.memory(s)}">{e(s)}</a>' for s in replaced) or "nothing"),
        (
            "replaced by",
            f'<a href="{here.memory(replaced_by)}">{e(replaced_by)}</a>' if replaced_by else "nothing",
        ),
    ]
    if why.get("git"):
        lines.append(("git", e(why["git"])))
    facts = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in lines)
    return (
        f'<section class="why"><h2>Why it is believed</h2>{verdict}{bars}'
        + (f"<ul>{reasons}</ul>" if reasons else "")
        + f"<p>{int(why.get('witnesses') or 0)} witness(es) across "
        + f"{int(why.get('sessions') or 0)} session(s)</p>"
        + '<div class="scroll"><table><tr><th>kind</th><th>weight → now</th><th>when</th><th>session</th>'
        + f"<th>quote</th></tr>{witnesses}</table></div><dl>{facts}</dl></section>"
    )
