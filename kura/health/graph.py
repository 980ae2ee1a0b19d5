"""The link graph: which memories point at which, and what that says about the store.

``[[links]]`` are how a recall walks from one memory to its neighbours, so a dead link is a
dead end for an agent, and a memory nothing links to (an island) is found only by its own
words. A link resolves to a memory only by its exact slug: a misspelt link must never
silently land on another memory, so a near miss is reported with a "did you mean" instead.

networkx is imported inside ``analyse`` so that nothing on the prefill path pays for it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class DeadLink:
    source: str
    target: str
    suggestion: str | None


@dataclass(kw_only=True, frozen=True, slots=True)
class GraphReport:
    memories: int
    resolved: int
    dead: tuple[DeadLink, ...]
    islands: tuple[str, ...]  # nothing links in and nothing links out
    dead_ends: tuple[str, ...]  # linked to, links nowhere
    clusters: tuple[int, ...]  # sizes of the weakly connected parts, largest first
    hubs: tuple[tuple[str, int], ...] = field(default_factory=tuple)  # most linked-to

    def to_dict(self) -> dict[str, object]:
        return {
            "memories": self.memories, "resolved": self.resolved,
            "dead": [{"from": d.source, "link": d.target, "did_you_mean": d.suggestion} for d in self.dead],
            "islands": list(self.islands), "dead_ends": list(self.dead_ends),
            "clusters": list(self.clusters), "hubs": [{"slug": s, "in": n} for s, n in self.hubs],
        }  # fmt: skip


def analyse(links: Mapping[str, tuple[str, ...]], *, hubs: int = 5) -> GraphReport:
    """The graph of ``slug → links`` and what is wrong with it."""
    import networkx as nx

    graph: nx.DiGraph = nx.DiGraph()
    graph.add_nodes_from(links)
    dead: list[DeadLink] = []
    resolved = 0
    known = sorted(links)
    for source, targets in links.items():
        for target in targets:
            if target in links:
                resolved += 1
                if target != source:
                    graph.add_edge(source, target)
            else:
                close = difflib.get_close_matches(target, known, n=1, cutoff=0.75)
                dead.append(DeadLink(source, target, close[0] if close else None))
    islands = tuple(sorted(n for n in graph if graph.degree(n) == 0))
    dead_ends = tuple(sorted(n for n in graph if graph.out_degree(n) == 0 and graph.in_degree(n) > 0))
    clusters = tuple(sorted((len(c) for c in nx.weakly_connected_components(graph)), reverse=True))
    ranked = sorted(
        ((n, graph.in_degree(n)) for n in graph if graph.in_degree(n) > 0), key=lambda p: (-p[1], p[0])
    )
    return GraphReport(
        memories=len(links),
        resolved=resolved,
        dead=tuple(dead),
        islands=islands,
        dead_ends=dead_ends,
        clusters=clusters,
        hubs=tuple(ranked[:hubs]),
    )
