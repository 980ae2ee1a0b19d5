"""Recall over the project's store and the person's store beside it, as one answer.

Inside a project a question may bear on the project (where the staging cluster lives) or
on the person (how they like answers written), and the agent should not have to know
which store to ask. So each store is recalled on its own — its own index, its own
standing — and the answers are merged: the picks by score (the same embedder scored both,
so the scores compare; the project's come first where they tie, and a thinker's picks,
which have no score, keep their order), cut to ``top``, every pick naming its store. The
context budget is shared in proportion to what each store contributes, and a memory from
the person's store is headed with that store's name, so the agent can tell where it came
from (and open it with ``kura -s NAME show SLUG``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kura.recall.recall import Pick, Recall, fit_memories, framed

if TYPE_CHECKING:
    from kura.store.store import Store


@dataclass(kw_only=True, frozen=True, slots=True)
class Joint:
    """One answer from two recalls: ``first`` the project's store, ``second`` the person's."""

    first: Recall
    second: Recall
    picks: tuple[tuple[str, Pick], ...]  # (store, pick), best first
    walked: tuple[tuple[str, str], ...]  # (store, slug)
    context: str

    def to_dict(self) -> dict[str, Any]:
        """The first recall's fields, with both stores' picks, each naming its store."""
        rows = {(r.store, d["slug"]): d for r in (self.first, self.second) for d in r.to_dict()["picked"]}
        return {
            **self.first.to_dict(),
            "stores": [self.first.store, self.second.store],
            "picked": [{**rows[(store, p.slug)], "store": store} for store, p in self.picks],
            "walked": [slug for _, slug in self.walked],
            "walked_store": [{"slug": slug, "store": store} for store, slug in self.walked],
            "context": self.context,
            "chars": len(self.context),
            "elapsed": round(self.first.elapsed + self.second.elapsed, 4),
            "unread": [*self.first.unread, *self.second.unread],
            "reason": "; ".join(r for r in (self.first.reason, self.second.reason) if r),
            "degraded": self.first.degraded or self.second.degraded,
        }


def joined(
    stores: tuple[Store, Store], found: tuple[Recall, Recall], question: str, *, top: int, chars: int
) -> Joint:
    """The two recalls of ``question`` (project's first) as one answer within ``top`` picks
    and ``chars`` characters of context."""
    first, second = found
    ranked = [(first.store, p) for p in first.picked] + [(second.store, p) for p in second.picked]
    picks = tuple(
        sorted(ranked, key=lambda item: -_score(item[1]))[:top]
    )  # stable: ties keep the project first
    kept = {store for store, _ in picks}
    walked = tuple((r.store, slug) for r in found if r.store in kept for slug in r.walked)
    shown = [
        [p.slug for store, p in picks if store == r.store] + [s for store, s in walked if store == r.store]
        for r in found
    ]
    total = sum(map(len, shown)) or 1
    parts = []
    for store, recalled, slugs in zip(stores, found, shown, strict=True):
        label = "" if recalled is first else f" [{recalled.store}]"
        budget = chars * len(slugs) // total
        if slugs:
            parts.append(fit_memories(store, slugs, question, budget, recalled.standing, label=label))
    return Joint(first=first, second=second, picks=picks, walked=walked, context=framed("\n\n".join(parts)))


def _score(pick: Pick) -> float:
    return 2.0 if pick.score is None else pick.score  # a thinker's pick: as good as it gets
