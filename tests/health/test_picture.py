"""kura graph draws what doctor lists: dead links (with "did you mean"), islands and dead
ends, in four formats — and nothing a memory says can break out of any of them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import SAMPLE, Cli, make_store, write_memory

from kura.health.graph import analyse
from kura.health.picture import build, of_store, render, to_dict
from kura.store import catalog
from kura.store.store import Store

# A description and a link as a hostile person or model would write them: quotes, a
# backslash, Graphviz's \N, Mermaid's #quot; and markup that would close a script tag. The
# link's markup is what a browser reads as tags and markdown as text (markdown's own HTML
# makes a [[link]] no link at all: kura.files.body).
HOSTILE = 'say "hi" \\N </script><img src=x onerror=alert(1)> & #quot; `x`'
HOSTILE_LINK = 'x" onerror="alert(1)</script/><img/src=x/onerror=alert(2)>'


def shaped_store(root: Path) -> Store:
    """deploy-day → deploy-commands (a dead end), a misspelt and an unknown link, an island."""
    store = make_store(
        root,
        [
            ("deploy-day", "project", "deploys go out Tuesday", None),
            ("deploy-commands", "reference", "make deploy runs the playbook", None),
            ("lonely", "user", "Mika reads on her phone", None),
        ],
    )
    write_memory(
        root, "deploy-day", "project", "deploys go out Tuesday",
        body="See [[deploy-commands]], [[deploy-comands]] and [[oncall]].",
    )  # fmt: skip
    return store


def hostile_store(root: Path) -> Store:
    store = make_store(root, [("plain", "user", "a plain memory", None)])
    write_memory(root, 'quo"te', "feedback", HOSTILE, body=f"[[plain]] and [[{HOSTILE_LINK}]]")
    return store


def test_dead_links_islands_and_dead_ends_are_marked_in_dot(tmp_path: Path) -> None:
    dot = render(of_store(shaped_store(tmp_path / "s")), "dot")
    assert dot.splitlines()[1] == (
        '  graph [label="s: 3 memories; links: 1 resolved, 2 dead; islands 1, dead ends 1\\n'
        'dashed: island (no links in or out) · orange: dead end (links nowhere) · red: dead link", '
        'labelloc=t, rankdir=LR, fontname="Helvetica"];'
    )
    assert dot.splitlines()[4:] == [
        '  "deploy-commands" [label="deploy-commands", tooltip="reference: make deploy runs the playbook", '
        "color=darkorange];",
        '  "deploy-day" [label="deploy-day", tooltip="project: deploys go out Tuesday"];',
        '  "lonely" [label="lonely", tooltip="user: Mika reads on her phone", style="rounded,dashed", '
        "color=gray50];",
        '  _missing_0 [label="missing: deploy-comands\\ndid you mean deploy-commands?", shape=note, '
        'style=filled, fillcolor="#fde2e2", color=red, fontcolor=red];',
        '  _missing_1 [label="missing: oncall", shape=note, style=filled, fillcolor="#fde2e2", color=red, '
        "fontcolor=red];",
        '  "deploy-day" -> _missing_0 [color=red, style=dashed];',
        '  "deploy-day" -> "deploy-commands";',
        '  "deploy-day" -> _missing_1 [color=red, style=dashed];',
        "}",
    ]


def test_mermaid_uses_safe_ids_and_classes(tmp_path: Path) -> None:
    mermaid = render(of_store(shaped_store(tmp_path / "s")), "mermaid")
    assert mermaid.splitlines() == [
        "flowchart LR",
        '  n0["deploy-commands"]:::deadEnd',
        '  n1["deploy-day"]',
        '  n2["lonely"]:::island',
        '  d0["missing: deploy-comands<br/>did you mean deploy-commands?"]:::dead',
        '  d1["missing: oncall"]:::dead',
        "  n1 -.-> d0",
        "  n1 --> n0",
        "  n1 -.-> d1",
        "  classDef island stroke-dasharray: 5 5,color:#666",
        "  classDef deadEnd stroke:#d97706,stroke-width:2px",
        "  classDef dead fill:#fde2e2,stroke:#c00,color:#c00",
        "  linkStyle 0,2 stroke:#c00",
    ]


def test_json_matches_the_analysis_doctor_uses(cli: Cli, tmp_path: Path) -> None:
    for root in (SAMPLE, shaped_store(tmp_path / "s").root):
        result = cli("-s", str(root), "graph", "--format", "json")
        assert result.code == 0, result
        data = json.loads(result.out)
        entries = catalog.entries(Store(root))
        report = analyse({slug: e.links for slug, e in entries.items()})
        assert data["summary"] == report.to_dict()
        assert [n["slug"] for n in data["nodes"]] == sorted(entries)
        live = [e for e in data["edges"] if not e["dead"]]
        assert len(live) == report.resolved
        assert [(e["from"], e["to"], e["did_you_mean"]) for e in data["edges"] if e["dead"]] == [
            (d.source, d.target, d.suggestion) for d in report.dead
        ]
        assert [n["slug"] for n in data["nodes"] if n["island"]] == list(report.islands)
        assert [n["slug"] for n in data["nodes"] if n["dead_end"]] == list(report.dead_ends)
        assert sum(n["in"] for n in data["nodes"]) == sum(n["out"] for n in data["nodes"])
    assert data["edges"][0] == {
        "from": "deploy-day", "to": "deploy-comands", "dead": True, "did_you_mean": "deploy-commands"
    }  # fmt: skip
    assert data["nodes"][0] == {
        "slug": "deploy-commands", "type": "reference", "description": "make deploy runs the playbook",
        "island": False, "dead_end": True, "in": 1, "out": 0,
    }  # fmt: skip


def test_a_memory_linking_itself_is_drawn_but_stays_an_island() -> None:
    picture = build({"a": ("a",), "b": ()})
    assert [(e.source, e.target, e.dead) for e in picture.edges] == [("a", "a", False)]
    assert [(n.slug, n.island, n.links_in, n.links_out) for n in picture.nodes] == [
        ("a", True, 0, 0),
        ("b", True, 0, 0),
    ]
    assert picture.report.resolved == 1


def test_hostile_text_is_escaped_in_dot(tmp_path: Path) -> None:
    dot = render(of_store(hostile_store(tmp_path / "s")), "dot")
    assert (
        '  "quo\\"te" [label="quo\\"te", tooltip="feedback: say \\"hi\\" \\\\N </script><img src=x '
        'onerror=alert(1)> & #quot; `x`"];'
    ) in dot.splitlines()
    assert (
        '  _missing_0 [label="missing: x\\" onerror=\\"alert(1)</script/><img/src=x/onerror=alert(2)>", '
        'shape=note, style=filled, fillcolor="#fde2e2", color=red, fontcolor=red];'
    ) in dot.splitlines()
    newline = render(build({'a"\\': ()}, {'a"\\': ("user", 'one\r\ntwo "\\"')}), "dot")
    assert '  "a\\"\\\\" [label="a\\"\\\\", tooltip="user: one\\ntwo \\"\\\\\\"", style=' in newline


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_reads_the_hostile_dot_back_verbatim(tmp_path: Path) -> None:
    dot = render(of_store(hostile_store(tmp_path / "s")), "dot")
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    texts = ["".join(e.itertext()) for e in ET.fromstring(svg).iter() if e.tag.endswith("}text")]
    assert 'quo"te' in texts and "missing: " + HOSTILE_LINK in texts
    assert not [e for e in ET.fromstring(svg).iter() if e.tag.endswith(("}script", "}img"))]
    tips = [e.get("{http://www.w3.org/1999/xlink}title") or "" for e in ET.fromstring(svg).iter()]
    # Graphviz 2.43 unescapes tooltips twice, so "\\N" becomes the node's name there; the rest is verbatim
    head, tail = HOSTILE.split("\\N")
    assert [t for t in tips if t.startswith(f"feedback: {head}") and t.endswith(tail)]


def test_hostile_text_is_escaped_in_mermaid(tmp_path: Path) -> None:
    mermaid = render(of_store(hostile_store(tmp_path / "s")), "mermaid")
    nodes = [line for line in mermaid.splitlines() if "[" in line]
    assert nodes == [
        '  n0["plain"]:::deadEnd',
        '  n1["quo#34;te"]',
        '  d0["missing: x#34; onerror=#34;alert(1)#60;/script/#62;#60;img/src=x/onerror=alert(2)#62;"]:::dead',
    ]
    assert all(re.fullmatch(r'  [nd]\d+\["[^"<>`#\[\]]*(#\d+;[^"<>`#\[\]]*)*"\](:::\w+)?', n) for n in nodes)


def html_parts(page: str) -> tuple[dict[str, object], str]:
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', page, re.DOTALL)
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)
    assert data is not None and script is not None
    return json.loads(data.group(1)), script.group(1)


def test_hostile_text_cannot_leave_the_html_data_block(tmp_path: Path) -> None:
    store = hostile_store(tmp_path / 'a<b>&"c')
    page = render(of_store(store), "html")
    assert page.count("</script") == 2  # the data block's and the script's own
    assert "<img" not in page and "onerror=alert" not in page.split('id="graph-data">')[0]
    assert "<title>kura graph: a&lt;b&gt;&amp;&quot;c</title>" in page
    data, _ = html_parts(page)
    assert data == json.loads(json.dumps(to_dict(of_store(store))))
    assert {n["description"] for n in data["nodes"]} == {"a plain memory", HOSTILE}  # type: ignore[attr-defined]


def test_html_is_one_offline_file(tmp_path: Path) -> None:
    import base64
    import hashlib

    page = render(of_store(shaped_store(tmp_path / "s")), "html")
    assert not re.search(r"https?:|//[a-z]|\bsrc=|\bhref=|@import", page)
    _, script = html_parts(page)
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)
    assert style is not None
    digest, looks = (
        base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() for text in (script, style[1])
    )
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        f"script-src 'sha256-{digest}'; style-src 'sha256-{looks}'; base-uri 'none'; form-action 'none'\">"
    ) in page
    for mark in ("island: no links in or out", "dead end: links nowhere", "dead link: names no memory"):
        assert mark in page  # the legend


# A stand-in DOM just big enough for the page's script: it records what the script builds.
DOM = """
const fs = require("fs");
const page = fs.readFileSync(process.argv[1], "utf8");
const data = page.match(/<script type="application\\/json" id="graph-data">([\\s\\S]*?)<\\/script>/)[1];
const code = page.match(/<script>([\\s\\S]*?)<\\/script>/)[1];
const made = [];
const element = (tag) => ({ tag, attrs: {}, textContent: "", namespaceURI: "svg", dataset: {},
  clientWidth: 1200, clientHeight: 800, setAttribute(k, v) { this.attrs[k] = v; }, appendChild(c) { return c; },
  addEventListener() {}, setPointerCapture() {},
  getBBox() { return { x: +this.attrs.x, y: -9, width: 7 * this.textContent.length, height: 12 }; } });
const ids = { "graph-data": { textContent: data }, graph: element("svg"), view: element("g"), summary: element("span") };
globalThis.window = { addEventListener() {} };
globalThis.document = { getElementById: (id) => ids[id],
  createElementNS: (ns, tag) => { const e = element(tag); made.push(e); return e; } };
new Function(code)();
console.log(JSON.stringify({ summary: ids.summary.textContent, viewBox: ids.graph.attrs.viewBox,
  made: made.map((e) => [e.tag, e.attrs.class || "", e.textContent, e.attrs.transform || ""]) }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_the_page_script_draws_every_node_as_text(tmp_path: Path) -> None:
    page = tmp_path / "graph.html"
    page.write_text(render(of_store(hostile_store(tmp_path / "s")), "html"))
    run = subprocess.run(["node", "-e", DOM, str(page)], capture_output=True, text=True, check=True)
    drawn = json.loads(run.stdout)
    assert drawn["summary"] == "2 memories · 1 links · 1 dead · 0 islands · 1 dead ends · 1 clusters"
    *_, width, height = map(float, drawn["viewBox"].split())  # fitted: the window's shape
    assert width / height == pytest.approx(1200 / 800)
    groups = [(cls, pos) for tag, cls, _, pos in drawn["made"] if tag == "g"]
    assert [cls for cls, _ in groups] == [
        "node dead-end type-user",
        "node memory type-feedback",
        "node missing",
    ]
    assert all(re.fullmatch(r"translate\(-?[\d.]+(e-?\d+)?,-?[\d.]+(e-?\d+)?\)", pos) for _, pos in groups)
    labels = [text for tag, _, text, _ in drawn["made"] if tag == "text"]
    assert labels == ["plain", 'quo"te', "? " + HOSTILE_LINK]
    tips = [text for tag, _, text, _ in drawn["made"] if tag == "title"]
    assert tips[1] == f'quo"te (feedback)\n{HOSTILE}\n0 in, 1 out'
    assert tips[2] == f"missing: [[{HOSTILE_LINK}]] names no memory"
    assert [cls for tag, cls, _, _ in drawn["made"] if tag == "line"] == ["edge", "edge dead"]


def test_cli_prints_dot_and_writes_files(cli: Cli, tmp_path: Path) -> None:
    root = shaped_store(tmp_path / "s").root
    printed = cli("-s", str(root), "graph")
    assert printed.code == 0 and printed.out == render(of_store(Store(root)), "dot")
    out = tmp_path / "graph.html"
    written = cli("-s", str(root), "graph", "--format", "html", "--output", str(out))
    assert written.code == 0, written
    assert written.out == f"wrote the html graph of s (3 memories, 1 links, 2 dead, 1 islands) to {out}\n"
    assert out.read_text() == render(of_store(Store(root)), "html")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_cli_refusals_and_nothing_to_draw(cli: Cli, tmp_path: Path) -> None:
    root = shaped_store(tmp_path / "s").root
    before = (root / "lonely.md").read_bytes()
    over = cli("-s", str(root), "graph", "-o", str(root / "lonely.md"))
    assert over.code == 1 and "is a memory or the index of store 's'; nothing was written" in over.err
    assert (root / "lonely.md").read_bytes() == before
    assert cli("-s", str(root), "graph", "-o", str(root / "MEMORY.md")).code == 1
    wrong = cli("-s", str(root), "graph", "--format", "svg")
    assert wrong.code == 1 and wrong.err == (
        "kura: error: --format must be one of dot, mermaid, json, html, not 'svg'\n"
    )
    nowhere = cli("-s", str(root), "graph", "-o", str(tmp_path / "no" / "such" / "dir.dot"))
    assert nowhere.code == 1 and "could not write" in nowhere.err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "MEMORY.md").write_text("# Memory index\n")  # a store with nothing in it yet
    empty = cli("-s", str(tmp_path / "empty"), "graph")
    assert empty.code == 2 and empty.out == ""
    assert "has no memories, so there is no graph to draw" in empty.err
