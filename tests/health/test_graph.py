"""The link graph's "did you mean": the suggestions for dead links are pinned, so a faster
matcher can only be a faster way to the same answers."""

from __future__ import annotations

import difflib
import random

from kura.health.graph import analyse

KNOWN = (
    "deploy-checklist", "deploy-checklists", "deploy-check-list", "postgres-backup", "postgres-backups",
    "redis-cache", "redis-caches", "m00012", "m00021", "m00102", "m00120", "m01200", "user-prefers-uv",
    "user-prefers-ruff", "abcd", "abce", "abcf", "café-notes", "cafe-notes", "grafana-alerts",
    "grafana-alert", "notes/deploy", "notes/deploys", "a", "ab", "xyzabcd", "abcdxyz", "source",
    "cdacc", "aa-cebebb", "daedabde", "dcdceaad-", "dceceadaz",
)  # fmt: skip

# Today's answers (difflib.get_close_matches, n=1, cutoff 0.75), read off the code before the
# change: ties go to the greatest slug, 0.75 exactly is close enough, case counts, and pairs
# whose longest common subsequence is close but whose difflib ratio is not stay unmatched.
PINNED = {
    "deploy-checklst": "deploy-checklist",
    "deploy-chcklist": "deploy-checklist",
    "Deploy-Checklist": "deploy-checklist",
    "postgres-bakup": "postgres-backup",
    "redis-cach": "redis-cache",
    "m0012": "m00120",  # a tie with m00012: the greater slug wins
    "m00010": "m00120",
    "m1200": "m01200",
    "abcx": "abcf",  # 0.75 exactly, three ways tied
    "abc": "abcf",
    "user-prefers-u": "user-prefers-uv",
    "user-prefer-ruf": "user-prefers-ruff",
    "cafe-note": "cafe-notes",
    "café-note": "café-notes",
    "grafana-alrts": "grafana-alerts",
    "notes/deploi": "notes/deploy",
    "deploys": None,
    "totally-unrelated": None,
    "b": None,
    "ba": None,
    "abxcdyz": "abcdxyz",
    "zyxdcba": None,
    "sourc": "source",
    "x" * 210 + "abcd": None,  # long enough for difflib's autojunk
    "abcd" * 60: None,
    "acdcc": "cdacc",
    "aa-ccbbb": None,  # subsequence ratio 0.82, difflib 0.71
    "daecdaede": None,
    "dceceadad-": "dceceadaz",
}


def suggestions(known: tuple[str, ...], dead: list[str]) -> dict[str, str | None]:
    links: dict[str, tuple[str, ...]] = {slug: () for slug in known}
    links["zz-source-of-dead-links"] = tuple(dead)
    report = analyse(links)
    assert [d.target for d in report.dead] == dead
    return {d.target: d.suggestion for d in report.dead}


def test_did_you_mean_keeps_todays_suggestions() -> None:
    assert suggestions(KNOWN, list(PINNED)) == PINNED


def test_did_you_mean_agrees_with_difflib_on_random_near_misses() -> None:
    rng = random.Random(19)
    alphabet = "abcde-/é0"
    known = tuple(
        sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(400)})
    )
    dead = []
    for _ in range(300):
        chars = list(rng.choice(known))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(chars) + 1)
            if rng.random() < 0.5:
                chars.insert(at, rng.choice(alphabet))
            elif chars:
                del chars[min(at, len(chars) - 1)]
        word = "".join(chars)
        if word not in known and word not in dead:
            dead.append(word)
    everything = (*known, "zz-source-of-dead-links")
    expected = {
        w: next(iter(difflib.get_close_matches(w, sorted(everything), n=1, cutoff=0.75)), None) for w in dead
    }
    assert suggestions(known, dead) == expected


def test_the_graph_figures_are_networkx_figures() -> None:
    """analyse counts with plain dicts; networkx (which it used before) is the reference."""
    import networkx as nx

    rng = random.Random(3)
    slugs = [f"s{i:03d}" for i in range(300)]
    links = {
        slug: tuple(rng.choice([*slugs, "gone", slug]) for _ in range(rng.choice([0, 0, 1, 1, 2, 5])))
        for slug in slugs
    }
    graph: nx.DiGraph = nx.DiGraph()
    graph.add_nodes_from(links)
    graph.add_edges_from((s, t) for s, ts in links.items() for t in ts if t in links and t != s)
    report = analyse(links, hubs=10)
    assert report.resolved == sum(t in links for ts in links.values() for t in ts)
    assert report.islands == tuple(sorted(n for n in graph if graph.degree(n) == 0))
    assert report.dead_ends == tuple(
        sorted(n for n in graph if graph.out_degree(n) == 0 and graph.in_degree(n) > 0)
    )
    assert report.clusters == tuple(
        sorted((len(c) for c in nx.weakly_connected_components(graph)), reverse=True)
    )
    hubs = sorted(
        ((n, graph.in_degree(n)) for n in graph if graph.in_degree(n) > 0), key=lambda p: (-p[1], p[0])
    )
    assert report.hubs == tuple(hubs[:10])
    assert len(report.islands) > 5 and len(report.dead_ends) > 5 and len(report.clusters) > 5
