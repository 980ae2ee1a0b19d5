"""The link graph: which memories point at which, and what that says about the store.

``[[links]]`` are how a recall walks from one memory to its neighbours, so a dead link is a
dead end for an agent, and a memory nothing links to (an island) is found only by its own
words. A link resolves to a memory only by its exact slug: a misspelt link must never
silently land on another memory, so a near miss is reported with a "did you mean" instead.

The "did you mean" is difflib's answer (``get_close_matches``, n=1, cutoff 0.75), found
without running difflib over every slug for every dead link (35 s of a doctor at 20,000
memories): difflib's ratio counts matching blocks, which never exceed the longest common
subsequence, so rapidfuzz's Indel similarity (that subsequence, in C) bounds it from above.
rapidfuzz (cdist: a batch of dead links against every slug in one call) shortlists the slugs
whose bound reaches the cutoff, best bound first, and difflib
rates only those until no remaining bound can beat the best ratio found — the same slug,
ties included (the greatest slug wins, as in difflib).

The graph itself is a few dicts (networkx cost doctor half a second to import and build at
20,000 memories); rapidfuzz is imported inside the function that uses it, so that nothing
on the prefill path pays for it.
"""

from __future__ import annotations

import difflib
from collections import Counter
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
    outgoing: dict[str, set[str]] = {slug: set() for slug in links}
    incoming: dict[str, set[str]] = {slug: set() for slug in links}
    missing: list[tuple[str, str]] = []
    resolved = 0
    for source, targets in links.items():
        for target in targets:
            if target in links:
                resolved += 1
                if target != source:
                    outgoing[source].add(target)
                    incoming[target].add(source)
            else:
                missing.append((source, target))
    close = did_you_mean((target for _, target in missing), sorted(links))
    dead = [DeadLink(source, target, close[target]) for source, target in missing]
    islands = tuple(sorted(n for n in links if not outgoing[n] and not incoming[n]))
    dead_ends = tuple(sorted(n for n in links if not outgoing[n] and incoming[n]))
    ranked = sorted(((n, len(incoming[n])) for n in links if incoming[n]), key=lambda p: (-p[1], p[0]))
    return GraphReport(
        memories=len(links),
        resolved=resolved,
        dead=tuple(dead),
        islands=islands,
        dead_ends=dead_ends,
        clusters=_clusters(outgoing),
        hubs=tuple(ranked[:hubs]),
    )


def _clusters(outgoing: Mapping[str, set[str]]) -> tuple[int, ...]:
    """The sizes of the weakly connected parts, largest first (links followed both ways)."""
    parent = {slug: slug for slug in outgoing}

    def root(slug: str) -> str:
        while parent[slug] != slug:
            parent[slug] = slug = parent[parent[slug]]
        return slug

    for source, targets in outgoing.items():
        for target in targets:
            a, b = root(source), root(target)
            if a != b:
                parent[a] = b
    return tuple(sorted(Counter(root(slug) for slug in outgoing).values(), reverse=True))


CUTOFF = 0.75
_SLACK = 1e-9  # float rounding between the two libraries' ratios: the shortlist errs wide
_ROWS = 64  # dead links compared with every slug at a time (64 × 20,000 slugs: 10 MB)


def did_you_mean(
    words: Iterable[str], known: Sequence[str], *, cutoff: float = CUTOFF
) -> dict[str, str | None]:
    """For each word, the known slug ``difflib.get_close_matches(word, known, n=1,
    cutoff=cutoff)`` would name (``known`` sorted, as doctor passes it), or None."""
    import numpy as np
    from rapidfuzz import process
    from rapidfuzz.distance import Indel

    asked = list(dict.fromkeys(words))
    found: dict[str, str | None] = {}
    lengths = np.fromiter(map(len, known), dtype=np.int64, count=len(known))
    matcher = difflib.SequenceMatcher()
    for start in range(0, len(asked) if known else 0, _ROWS):
        chunk = asked[start : start + _ROWS]
        # twice the longest common subsequence of each word and each slug, every pair in one
        # call (rapidfuzz's SIMD path): exact integers, so the bound is what extract computes
        twice = process.cdist(chunk, known, scorer=Indel.similarity, dtype=np.int64)
        for word, row in zip(chunk, twice, strict=True):
            bound = row / np.maximum(lengths + len(word), 1)
            near = np.flatnonzero(bound >= cutoff - _SLACK)
            near = near[np.argsort(-bound[near], kind="stable")]
            matcher.set_seq2(word)
            found[word] = _closest(matcher, ((known[i], float(bound[i]), i) for i in near.tolist()), cutoff)
    return {word: found.get(word) for word in asked}


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
