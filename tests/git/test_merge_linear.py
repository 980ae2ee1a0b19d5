"""Issue 29 item 11: the MEMORY.md merge driver was quadratic when both sides add many lines
(each line put back was found again by a search of every line put back before it). The
near-linear merge must give exactly what the merge before it gave — text, conflicts and
notes — on random indexes edited at random on both sides, and stay exact when both sides
add thousands of lines (timings are ``bench/merge_speed.py``'s, never asserted here)."""

from __future__ import annotations

import datetime as dt
import random

import index_merge_before as before
import pytest

from kura.git import index_merge as now

PROSE = [
    "",
    "",
    "## Infra",
    "## Team",
    "Notes kept by hand.",
    "<!-- a comment -->",
    "```",
    "- a plain bullet",
]


def entry(slug: str, text: str) -> str:
    return f"- [{slug.title()}]({slug}.md) — {text}"


def edited(rng: random.Random, lines: list[str], side: str, fresh: list[int]) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(0, 12)):
        what = rng.random()
        at = rng.randint(0, len(out))
        if what < 0.30:
            fresh[0] += 1
            out.insert(at, entry(f"{side}-{fresh[0]}", f"{side} learnt {fresh[0]}"))
        elif what < 0.45 and out:
            del out[min(at, len(out) - 1)]
        elif what < 0.65 and out:
            k = min(at, len(out) - 1)
            if out[k].startswith("- ["):
                out[k] = out[k] + f" ({side} edited)"
        elif what < 0.80 and out:  # a move
            line = out.pop(min(at, len(out) - 1))
            out.insert(rng.randint(0, len(out)), line)
        elif what < 0.90:
            out.insert(at, rng.choice(PROSE))
        else:
            fresh[0] += 1
            out.insert(at, entry(f"shared-{rng.randint(0, 5)}", f"both may add this {side}"))
    if rng.random() < 0.5:  # a run of lines added at the end
        out += [entry(f"{side}-tail-{n}", f"{side} tail {n}") for n in range(rng.randint(1, 30))]
    return out


def case(seed: int) -> tuple[str, str, str]:
    rng = random.Random(seed)
    base = ["# Memory index", ""]
    for n in range(rng.randint(0, 25)):
        base.append(entry(f"m{n}", f"fact {n}") if rng.random() < 0.75 else rng.choice(PROSE))
    fresh = [0]
    ours, theirs = edited(rng, base, "ours", fresh), edited(rng, base, "theirs", fresh)
    end = "\n" if rng.random() < 0.9 else ""
    return "\n".join(base) + end, "\n".join(ours) + end, "\n".join(theirs) + end


def dated(side: str, slug: str) -> dt.date | None:
    return dt.date(2026, 1, 1 + (len(slug) + (side == "theirs")) % 28) if slug.endswith("3") else None


@pytest.mark.parametrize("chunk", range(8))
def test_random_merges_match_the_merge_before(chunk: int) -> None:
    for seed in range(chunk * 150, (chunk + 1) * 150):
        base, ours, theirs = case(seed)
        for kwargs in ({}, {"dated": dated}):
            want = before.merge(base, ours, theirs, **kwargs)  # type: ignore[arg-type]
            got = now.merge(base, ours, theirs, **kwargs)  # type: ignore[arg-type]
            assert (got.text, got.conflicts, got.notes) == (want.text, want.conflicts, want.notes), seed


def test_thousands_of_lines_on_both_sides_merge_exactly() -> None:
    head = ["# Memory index", "", "## Infra"]
    base = head + [entry(f"m{n}", f"fact {n}") for n in range(50)]
    ours = base + [entry(f"ours-{n}", f"ours {n}") for n in range(1500)]
    theirs = (
        base[:10]
        + [entry("theirs-early", "early")]
        + base[10:]
        + [entry(f"theirs-{n}", f"t {n}") for n in range(1500)]
    )
    text = ["\n".join(x) + "\n" for x in (base, ours, theirs)]
    got = now.merge(*text)
    assert got.text == before.merge(*text).text and got.clean
    lines = got.text.splitlines()
    assert len(lines) == len(base) + 3001 and len(set(lines)) == len(lines)
    assert lines.index(entry("ours-1499", "ours 1499")) < lines.index(entry("theirs-0", "t 0"))
