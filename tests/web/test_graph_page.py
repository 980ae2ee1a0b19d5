"""The graph page (``GET /ui/graph``, the page ``kura graph --format html`` writes) in a real
headless Chromium: it fits the window at a desktop's and a phone's size (every label inside
the window, no two labels overlapping), colours memories by type with a legend, marks
islands and dead links, asks nothing of another origin, and takes a token like every
other route."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browsing import DESKTOP, PHONE
from conftest import SAMPLE, Cli

from kura.store.store import Store

# The fill of each type's circles, as the browser computes it (kura/data/graph.html).
TYPE_FILL = {
    "user": "rgb(127, 178, 229)",
    "feedback": "rgb(197, 163, 232)",
    "project": "rgb(143, 209, 158)",
    "reference": "rgb(242, 207, 102)",
}
SAMPLE_TYPES = ["user (8)", "feedback (10)", "project (14)", "reference (8)"]

# Each label's box on screen, the window's size and whether the document scrolls.
DRAWN = """() => ({
  labels: [...document.querySelectorAll("#graph .node text")].map((t) => {
    const r = t.getBoundingClientRect();
    return { text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  }),
  width: window.innerWidth, height: window.innerHeight,
  scrolls: document.documentElement.scrollHeight > window.innerHeight ||
    document.documentElement.scrollWidth > window.innerWidth,
})"""

# Each node's classes and its circle's computed fill and stroke.
NODES = """() => [...document.querySelectorAll("#graph .node")].map((g) => {
  const look = getComputedStyle(g.querySelector("circle"));
  return { label: g.querySelector("text").textContent, classes: [...g.classList],
           fill: look.fill, stroke: look.stroke, dashes: look.strokeDasharray };
})"""

LEGEND = """() => [...document.querySelectorAll("#legend [data-type]")].filter((s) => !s.hidden).map((s) =>
  [s.dataset.type, s.textContent.trim(), getComputedStyle(s.querySelector("circle")).fill])"""


def cut_or_overlapping(page: Any) -> list[str]:
    """What is wrong with the labels as drawn: one cut by the window's edge, two overlapping."""
    drawn = page.evaluate(DRAWN)
    labels, wrong = drawn["labels"], []
    for b in labels:
        if b["left"] < 0 or b["top"] < 0 or b["right"] > drawn["width"] or b["bottom"] > drawn["height"]:
            wrong.append(
                f"cut: {b['text']} at {b['left']:.0f},{b['top']:.0f}-{b['right']:.0f},{b['bottom']:.0f}"
            )
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            if min(a["right"], b["right"]) > max(a["left"], b["left"]) and min(
                a["bottom"], b["bottom"]
            ) > max(a["top"], b["top"]):
                wrong.append(f"overlap: {a['text']} / {b['text']}")
    if drawn["scrolls"]:
        wrong.append("the page is bigger than the window")
    return wrong


def sample_types() -> dict[str, str]:
    from kura.health.picture import of_store

    return {node.slug: node.type or "untyped" for node in of_store(Store(SAMPLE)).nodes}


def wrong_colours(page: Any, types: dict[str, str]) -> list[str]:
    return [
        f"{n['label']} ({types[n['label']]}): {n['fill']}"
        for n in page.evaluate(NODES)
        if "missing" not in n["classes"] and n["fill"] != TYPE_FILL[types[n["label"]]]
    ]


def test_the_written_page_fits_the_window_and_colours_memories_by_type(
    pages: Any, sample_copy: Any, cli: Cli, tmp_path: Path
) -> None:
    """The defects of the old page, on the file `kura graph --format html` writes: a label
    past the window's edge, labels on top of each other, every memory the same blue."""
    root = sample_copy(tmp_path / "sample")
    out = tmp_path / "graph.html"
    assert cli("-s", str(root), "graph", "--format", "html", "-o", str(out)).code == 0
    opened = pages(out.as_uri(), viewport=DESKTOP)
    opened.page.screenshot(path=str(tmp_path / "written.png"))
    assert cut_or_overlapping(opened.page) + wrong_colours(opened.page, sample_types()) == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_served_graph_fits_the_window(
    pages: Any, serve_sample: Any, viewport: dict[str, int], tmp_path: Path
) -> None:
    with serve_sample() as (url, _):
        opened = pages(f"{url}/ui/graph", viewport=viewport)
        page = opened.page
        page.screenshot(path=str(tmp_path / "graph.png"))
        svg = page.eval_on_selector("#graph", "s => [s.dataset.fitted, s.getAttribute('viewBox')]")
        assert svg[0] == f"{viewport['width']}x{page.eval_on_selector('#graph', 's => s.clientHeight')}"
        assert len(page.evaluate(DRAWN)["labels"]) == 40
        assert cut_or_overlapping(page) == []
        assert opened.foreign() == []


def test_memories_are_coloured_by_type_and_the_legend_lists_the_types(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, _):
        page = pages(f"{url}/ui/graph?store=sample").page
        assert wrong_colours(page, sample_types()) == []
        assert page.evaluate(LEGEND) == [
            [kind, said, TYPE_FILL[kind]] for kind, said in zip(TYPE_FILL, SAMPLE_TYPES, strict=True)
        ]
        assert len(set(TYPE_FILL.values())) == 4


def test_islands_and_dead_links_are_marked(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        store = Store(root)
        store.remember("lonely-note", "Nothing links here and it links nowhere", type="user")
        store.remember(
            "typo-link", "Links to a misspelt memory", "See [[deploy-comands]] and [[tomasz-backend-oncall]].",
            type="reference",
        )  # fmt: skip
        page = pages(f"{url}/s/sample/ui/graph", viewport=PHONE).page
        nodes = {n["label"]: n for n in page.evaluate(NODES)}
        assert "island" in nodes["lonely-note"]["classes"] and nodes["lonely-note"]["dashes"] == "3px, 2px"
        assert nodes["lonely-note"]["fill"] == TYPE_FILL["user"]
        dead = nodes["? deploy-comands"]
        assert (dead["classes"], dead["fill"], dead["stroke"]) == (
            ["node", "missing"], "rgb(253, 226, 226)", "rgb(204, 0, 0)"
        )  # fmt: skip
        tip = page.eval_on_selector_all(".node.missing title", "ts => ts.map((t) => t.textContent)")
        assert tip == ["missing: [[deploy-comands]] names no memory\ndid you mean [[deploy-commands]]?"]
        dead_lines = page.eval_on_selector_all(
            "line.edge.dead", "ls => ls.map((l) => getComputedStyle(l).stroke)"
        )
        assert dead_lines == ["rgb(204, 0, 0)"]
        assert page.inner_text("#summary") == (
            "42 memories · 109 links · 1 dead · 1 islands · 0 dead ends · 2 clusters"
        )
        assert len(nodes) == 43 and cut_or_overlapping(page) == []


def test_the_graph_refits_when_the_window_changes(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, _):
        page = pages(f"{url}/ui/graph", viewport=DESKTOP).page
        page.set_viewport_size(PHONE)
        height = page.eval_on_selector("#graph", "s => s.clientHeight")
        page.wait_for_selector(f"#graph[data-fitted='{PHONE['width']}x{height}']")
        assert cut_or_overlapping(page) == []


def test_the_graph_page_takes_a_token_and_sends_its_policy(pages: Any, serve_sample: Any) -> None:
    """With a token, the page needs it: as the other pages take it (``?token=`` once, then a
    cookie) or as an API client sends it (the Authorization header); the policy header
    allows the page's own script and style only."""
    with serve_sample(token="s3cret-graph-token") as (url, _):
        refused = pages(f"{url}/ui/graph")
        assert refused.page.inner_text("h1") == "A token is needed"
        assert refused.page.goto(f"{url}/ui/graph").status == 401
        taken = refused.page.goto(f"{url}/ui/graph?token=s3cret-graph-token")
        assert taken is not None and taken.status == 200 and refused.page.url == f"{url}/ui/graph"
        assert refused.page.inner_text("h1") == "sample" and cut_or_overlapping(refused.page) == []
        opened = pages(f"{url}/s/sample/ui/graph", headers={"Authorization": "Bearer s3cret-graph-token"})
        response = opened.page.goto(f"{url}/s/sample/ui/graph")
        assert response is not None and response.status == 200
        policy = response.headers["content-security-policy"]
        assert (
            policy.startswith("default-src 'none'; script-src 'sha256-") and "'unsafe-inline'" not in policy
        )
        assert policy.endswith("; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        assert opened.page.inner_text("h1") == "sample" and cut_or_overlapping(opened.page) == []
        unknown = opened.page.goto(f"{url}/ui/graph?store=nope")
        assert unknown is not None and unknown.status == 404
