"""The link graph: which memories point at which, and what that says about the store.

``[[links]]`` are how a recall walks from one memory to its neighbours, so a dead link is a
dead end for an agent, and a memory nothing links to (an island) is found only by its own
words. A link resolves to a memory only by its exact slug: a misspelt link must never
silently land on another memory, so a near miss is reported with a "did you mean" instead.

The "did you mean" is difflib's answer (``get_close_matches``, n=1, cutoff 0.75), found
without running difflib over every slug for every dead link (35 s of a doctor at 20,000
memories): difflib's ratio counts matching blocks, which never exceed the longest common
subsequence, so rapidfuzz's Indel similarity (that subsequence, in C) bounds it from above.
rapidfuzz shortlists the slugs whose bound reaches the cutoff, best bound first, and difflib
rates only those until no remaining bound can beat the best ratio found — the same slug,
ties included (the greatest slug wins, as in difflib).

networkx and rapidfuzz are imported inside the functions that use them, so that nothing on
the prefill path pays for them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
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
    missing: list[tuple[str, str]] = []
    resolved = 0
    for source, targets in links.items():
        for target in targets:
            if target in links:
                resolved += 1
                if target != source:
                    graph.add_edge(source, target)
            else:
                missing.append((source, target))
    close = did_you_mean((target for _, target in missing), sorted(links))
    dead = [DeadLink(source, target, close[target]) for source, target in missing]
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


CUTOFF = 0.75
_SLACK = 1e-9  # float rounding between the two libraries' ratios: the shortlist errs wide


def did_you_mean(
    words: Iterable[str], known: Sequence[str], *, cutoff: float = CUTOFF
) -> dict[str, str | None]:
    """For each word, the known slug ``difflib.get_close_matches(word, known, n=1,
    cutoff=cutoff)`` would name (``known`` sorted, as doctor passes it), or None."""
    from rapidfuzz import process
    from rapidfuzz.distance import Indel

    found: dict[str, str | None] = {}
    matcher = difflib.SequenceMatcher()
    for word in words:
        if word in found:
            continue
        shortlist = process.extract(
            word, known, scorer=Indel.normalized_similarity, score_cutoff=cutoff - _SLACK, limit=None
        )
        matcher.set_seq2(word)
        found[word] = _closest(matcher, shortlist, cutoff)
    return found


def _closest(
    matcher: difflib.SequenceMatcher[str], shortlist: Iterable[tuple[str, float, int]], cutoff: float
) -> str | None:
    """difflib's pick among the shortlist (best bound first): the highest ratio at or above
    the cutoff, the greatest slug among equals; stops once no bound can reach the best."""
    best: tuple[float, str] | None = None
    for slug, bound, _ in shortlist:
        if best is not None and bound < best[0] - _SLACK:
            break
        matcher.set_seq1(slug)
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
            continue
        ratio = matcher.ratio()
        if ratio >= cutoff and (best is None or (ratio, slug) > best):
            best = (ratio, slug)
    return best[1] if best else None
