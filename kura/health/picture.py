"""Pictures of the link graph, for people who would rather look than read.

``kura doctor`` lists islands and dead links one line each; a picture shows the shape of a
store at a glance — the clusters, the hubs, the memory nothing reaches. The picture is a
value built once from the catalog (no memory file is opened) and rendered by pure
functions into Graphviz, Mermaid, JSON or one offline HTML page, so every format shows the
same nodes and edges and a test can check each without a browser.

Slugs, link text and descriptions are written by people and models, so none of them is
trusted by any format: Graphviz gets its quoted-string escapes and synthetic ids for the
missing memories (a real slug never starts with ``_``); Mermaid gets ids ``n0``, ``n1``…
and every other character of a label as a ``#code;`` entity; the HTML page carries the
data as JSON with ``<``, ``>`` and ``&`` escaped (no memory can close the script tag), its
script builds the drawing with ``textContent`` only, and a Content-Security-Policy lets
nothing load from anywhere and no other script run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kura.errors import StoreError
from kura.files.link_names import names as names_of
from kura.files.slugs import INDEX_NAME, is_memory_name
from kura.health.graph import GraphReport, analyse
from kura.store import catalog
from kura.store.atomic import write_atomic
from kura.store.store import Store

PAGE = Path(__file__).parent.parent / "data" / "graph.html"
LEGEND = "dashed: island (no links in or out) · orange: dead end (links nowhere) · red: dead link"


@dataclass(kw_only=True, frozen=True, slots=True)
class Node:
    slug: str
    type: str | None
    description: str
    island: bool
    dead_end: bool
    links_in: int  # from other memories; a memory linking itself is drawn, not counted
    links_out: int


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    dead: bool = False
    did_you_mean: str | None = None


@dataclass(frozen=True, slots=True)
class Picture:
    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    report: GraphReport

    @property
    def missing(self) -> dict[str, str | None]:
        """Each link target that names no memory, with its "did you mean"."""
        return dict(sorted(((e.target, e.did_you_mean) for e in self.edges if e.dead), key=lambda p: p[0]))


def build(
    links: Mapping[str, tuple[str, ...]],
    about: Mapping[str, tuple[str | None, str]] | None = None,
    *,
    title: str = "kura",
) -> Picture:
    """The picture of ``slug → links``; ``about`` gives each slug's (type, description)."""
    report = analyse(links)
    suggestions = {(d.source, d.target): d.suggestion for d in report.dead}
    edges = tuple(
        Edge(source, target, target not in links, suggestions.get((source, target)))
        for source in sorted(links)
        for target in sorted(set(links[source]))
    )
    counted = [e for e in edges if not e.dead and e.source != e.target]
    ins, outs = Counter(e.target for e in counted), Counter(e.source for e in counted)
    islands, dead_ends, about = set(report.islands), set(report.dead_ends), about or {}
    nodes = tuple(
        Node(slug=slug, type=kind, description=said, island=slug in islands, dead_end=slug in dead_ends,
             links_in=ins[slug], links_out=outs[slug])
        for slug in sorted(links)
        for kind, said in (about.get(slug, (None, "")),)
    )  # fmt: skip
    return Picture(title, nodes, edges, report)


def of_store(store: Store) -> Picture:
    """The picture of one store, from its catalog."""
    entries = catalog.entries(store)
    names = names_of(entries.values())  # a [[Title]] link is drawn to the memory it names
    return build(
        {slug: names.linked(entry.links) for slug, entry in entries.items()},
        {slug: (entry.type, entry.description) for slug, entry in entries.items()},
        title=store.name,
    )


def to_dict(picture: Picture) -> dict[str, object]:
    return {
        "store": picture.title,
        "nodes": [
            {"slug": n.slug, "type": n.type, "description": n.description, "island": n.island,
             "dead_end": n.dead_end, "in": n.links_in, "out": n.links_out}
            for n in picture.nodes
        ],
        "edges": [
            {"from": e.source, "to": e.target, "dead": e.dead, "did_you_mean": e.did_you_mean}
            for e in picture.edges
        ],
        "summary": picture.report.to_dict(),
    }  # fmt: skip


def to_json(picture: Picture) -> str:
    return json.dumps(to_dict(picture), ensure_ascii=False, indent=2) + "\n"


def to_dot(picture: Picture) -> str:
    r = picture.report
    summary = (
        f"{picture.title}: {r.memories} memories; links: {r.resolved} resolved, {len(r.dead)} dead; "
        f"islands {len(r.islands)}, dead ends {len(r.dead_ends)}\n{LEGEND}"
    )
    lines = [
        "digraph kura {",
        f'  graph [label="{_dot(summary)}", labelloc=t, rankdir=LR, fontname="Helvetica"];',
        '  node [shape=box, style=rounded, fontname="Helvetica"];',
        "  edge [color=gray40];",
    ]
    for n in picture.nodes:
        look = ', style="rounded,dashed", color=gray50' if n.island else ""
        look += ", color=darkorange" if n.dead_end else ""
        tip = f"{n.type or 'untyped'}: {n.description}"
        lines.append(f'  "{_dot(n.slug)}" [label="{_dot(n.slug)}", tooltip="{_dot(tip)}"{look}];')
    missing = {target: f"_missing_{i}" for i, target in enumerate(picture.missing)}
    for target, hint in picture.missing.items():
        label = f"missing: {target}" + (f"\ndid you mean {hint}?" if hint else "")
        lines.append(f'  {missing[target]} [label="{_dot(label)}", shape=note, style=filled, '
                     'fillcolor="#fde2e2", color=red, fontcolor=red];')  # fmt: skip
    for e in picture.edges:
        if e.dead:
            lines.append(f'  "{_dot(e.source)}" -> {missing[e.target]} [color=red, style=dashed];')
        else:
            lines.append(f'  "{_dot(e.source)}" -> "{_dot(e.target)}";')
    return "\n".join([*lines, "}"]) + "\n"


def to_mermaid(picture: Picture) -> str:
    ids = {n.slug: f"n{i}" for i, n in enumerate(picture.nodes)}
    lines = ["flowchart LR"]
    for n in picture.nodes:
        mark = ":::island" if n.island else ":::deadEnd" if n.dead_end else ""
        lines.append(f'  {ids[n.slug]}["{_mermaid(n.slug)}"]{mark}')
    missing = {target: f"d{i}" for i, target in enumerate(picture.missing)}
    for target, hint in picture.missing.items():
        label = _mermaid(f"missing: {target}") + (f"<br/>{_mermaid(f'did you mean {hint}?')}" if hint else "")
        lines.append(f'  {missing[target]}["{label}"]:::dead')
    for e in picture.edges:
        arrow = f"-.-> {missing[e.target]}" if e.dead else f"--> {ids[e.target]}"
        lines.append(f"  {ids[e.source]} {arrow}")
    red = [str(number) for number, e in enumerate(picture.edges) if e.dead]
    lines += [
        "  classDef island stroke-dasharray: 5 5,color:#666",
        "  classDef deadEnd stroke:#d97706,stroke-width:2px",
        "  classDef dead fill:#fde2e2,stroke:#c00,color:#c00",
    ]
    if red:
        lines.append(f"  linkStyle {','.join(red)} stroke:#c00")
    return "\n".join(lines) + "\n"


def to_html(picture: Picture) -> str:
    """One self-contained page: nothing is fetched, so it opens offline and from a mail."""
    return html_page(picture)[0]


def html_page(picture: Picture) -> tuple[str, str]:
    """The page and its Content-Security-Policy (also in the page's meta tag; a server sends
    it as a header too, adding what a meta tag cannot say): no source but the page's own
    script and style, by hash."""
    page = PAGE.read_text(encoding="utf-8")
    policy = (
        f"default-src 'none'; script-src '{_digest(page, 'script')}'; style-src '{_digest(page, 'style')}'; "
    )
    policy += "base-uri 'none'; form-action 'none'"
    data = json.dumps(to_dict(picture), ensure_ascii=False, sort_keys=True)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    values = {"TITLE": html.escape(picture.title), "CSP": policy, "DATA": data}
    return re.sub(r"\{\{([A-Z_]+)\}\}", lambda m: values[m.group(1)], page), policy


def _digest(page: str, tag: str) -> str:
    """The CSP hash of the page's one ``<tag>`` element without attributes."""
    found = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL)
    assert found is not None  # the page ships with its script and its style
    return "sha256-" + base64.b64encode(hashlib.sha256(found.group(1).encode("utf-8")).digest()).decode()


FORMATS: dict[str, Callable[[Picture], str]] = {
    "dot": to_dot,
    "mermaid": to_mermaid,
    "json": to_json,
    "html": to_html,
}


def render(picture: Picture, format: str) -> str:
    return FORMATS[format](picture)


def save(store: Store, text: str, path: Path) -> None:
    """Write a rendered picture atomically — never over one of the store's memories or its
    index, which a mistyped ``--output`` would otherwise replace."""
    try:
        rel = path.resolve().relative_to(store.root.resolve())
    except ValueError:
        rel = None
    if rel is not None and (is_memory_name(rel) or rel.name.lower() == INDEX_NAME.lower()):
        raise StoreError(
            f"{path}: is a memory or the index of store '{store.name}'; nothing was written — "
            "write the graph outside the store, e.g. -o graph.html"
        )
    write_atomic(path, text.encode("utf-8"))


def _dot(text: str) -> str:
    """A Graphviz quoted string's inside: quotes and backslashes escaped (so ``\\N`` and
    friends stay literal), line breaks as ``\\n``."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return text.replace("\n", "\\n")


def _mermaid(text: str) -> str:
    """A Mermaid label's inside: anything but letters, digits and plain punctuation becomes
    a ``#code;`` entity, so no quote, bracket, tag, backtick or ``#`` reaches the parser."""
    return re.sub(r"[^\w .,:;!?='()/+-]", lambda m: f"#{ord(m.group())};", " ".join(text.split()))
