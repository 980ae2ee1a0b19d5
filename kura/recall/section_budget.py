"""Sharing one token budget among the sections of a prompt, by weight, in whole items.

Each section asks for what its items cost (plus its heading). A section that asks for less
than its weighted share gets exactly what it asks for, and what it leaves is shared among
the rest by their weights, until every remaining section wants more than its share; those
get their share. Then each section takes its items in their own order, whole, as long as
they fit its allowance — an item that does not fit is left out (and said to be), never cut
— and what the sections could not use is offered once more to the left-out items, section
by section in prompt order. The result never exceeds the budget, and the same items in give
the same items out: the order a prompt cache depends on is the caller's, never changed here.

A prompt cache needs more than order: the sections that do not depend on the task (the
rules, the map) must come out the same whatever the task asks of the rest. So a caller may
name them a prefix: they get a reservation fixed by the budget and the weights alone, and
the task's sections share what is left; what the task leaves unused is not handed back to
the prefix, because then the prefix would change with the task.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ask:
    name: str
    weight: float
    heading: int  # tokens the heading costs, paid once if anything is taken
    items: tuple[int, ...]  # tokens of each item, in the section's order


@dataclass(frozen=True, slots=True)
class Granted:
    name: str
    share: int  # tokens the weights gave it
    taken: tuple[int, ...]  # indexes of the items included, in order
    tokens: int  # what the included items and the heading cost


def share(asks: Sequence[Ask], budget: int, *, prefix: int = 0, weight: float = 0.0) -> list[Granted]:
    """Which items of each section fit ``budget`` (see the module docstring). The first
    ``prefix`` asks are a prefix that must not depend on the others: they share a
    reservation computed from the budget alone — their weights' part of ``weight`` (all
    sections' weights, present or not) — and never take what the others leave; the rest
    share what the prefix did not use."""
    if not prefix:
        return _share(asks, budget)
    head, tail = asks[:prefix], asks[prefix:]
    reserved = int(budget * sum(a.weight for a in head) / max(weight, sum(a.weight for a in asks), 1e-9))
    first = _share(head, reserved)
    return first + _share(tail, budget - sum(g.tokens for g in first))


def _share(asks: Sequence[Ask], budget: int) -> list[Granted]:
    allowance = _weighted(asks, budget)
    taken: list[list[int]] = []
    spent: list[int] = []
    for ask, allowed in zip(asks, allowance, strict=True):
        chosen, used = _fill(ask, allowed, [], 0)
        taken.append(chosen)
        spent.append(used)
    left = budget - sum(spent)
    for i, ask in enumerate(asks):
        if left <= 0:
            break
        chosen, used = _fill(ask, spent[i] + left, taken[i], spent[i])
        left -= used - spent[i]
        taken[i], spent[i] = chosen, used
    return [Granted(a.name, s, tuple(t), u) for a, s, t, u in zip(asks, allowance, taken, spent, strict=True)]


def _weighted(asks: Sequence[Ask], budget: int) -> list[int]:
    demand = [(a.heading + sum(a.items)) if a.items else 0 for a in asks]
    allowance = [0] * len(asks)
    pending = {i for i, d in enumerate(demand) if d > 0 and asks[i].weight > 0}
    left = budget
    while pending:
        weights = sum(asks[i].weight for i in pending)
        content = [i for i in sorted(pending) if demand[i] <= left * asks[i].weight / weights]
        if not content:
            for i in sorted(pending):
                allowance[i] = int(left * asks[i].weight / weights)
            break
        for i in content:
            allowance[i] = demand[i]
            left -= demand[i]
            pending.discard(i)
    return allowance


def _fill(ask: Ask, allowed: int, chosen: list[int], used: int) -> tuple[list[int], int]:
    """Items added in order to ``chosen`` while they fit ``allowed`` (heading included)."""
    picked = set(chosen)
    for i, cost in enumerate(ask.items):
        if i in picked:
            continue
        extra = cost + (0 if picked else ask.heading)
        if used + extra <= allowed:
            picked.add(i)
            used += extra
    return sorted(picked), used
