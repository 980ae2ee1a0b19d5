"""Distractor memories that read like a real store's: other subjects, and some hard negatives.

    python bench/distractors.py [N]        # print N of them (default 5) and some counts

bench/recall_quality.py's ``--pad N`` adds these to the eval store (a family bakery and the
rental flat above it). Templated filler ("kayak and chess details number 12") is easy to
tell apart from the store, so it says little about a big store; these are written the way
the eval memories are (a name, a one-line description, a paragraph, often a **Why:** and a
**How to apply:** line, sometimes a Related link) about people, places, tools, prices,
dates, preferences and decisions of other parts of a life: choir, work, friends, trips,
savings, appliances, sport, tradespeople. About a quarter sit deliberately close to the eval
store's subjects — other bakeries and cafés, other suppliers, other flats and landlords,
relatives' health and schools, the allotment — with different facts, so they are hard
negatives for the bakery and flat questions.

The templates and word pools are in bench/distractors.txt. None may answer one of the
eval's unrelated questions (the refusal figure would then be wrong): the generator refuses
to write any of ``FORBIDDEN``'s words. Deterministic for a seed; over a thousand distinct words.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# The subjects of bench/eval/queries.jsonl's "unrelated" questions: never written.
FORBIDDEN = re.compile(
    r"\b(crypto\w*|bitcoin|mortgage|remortgage|piano|loft|patent|football|chimney|sweep|solicitor|wills|"
    r"gym|tv licen[cs]e|netflix|streaming|koi|pond|cellar|drones?|languages?|wine|dinner party|gdpr|"
    r"data breach|charity|fun run|bike|bicycles?|cycling|mooring|boat|beer|loyalty|chickens?|hens?|"
    r"telescope|stargazing|vote|voting|electoral|window cleaner|birthday|franchis\w*)\b",
    re.IGNORECASE,
)
NEAR_SHARE = 0.25  # of the distractors, this share about the eval store's own subjects
_SLOT = re.compile(r"\{([a-z_]+?)(\d?)\}")
_SENTENCE = re.compile(r"(^|[.!?] |\*\* )([a-z])")
_ARTICLE = re.compile(r"\b([Aa]) (?=[aeiouAEIOU])")
Chosen = dict[tuple[str, str], str]  # (pool, which) -> the value this memory uses


@dataclass(frozen=True, slots=True)
class Template:
    near: bool
    type: str
    name: str
    description: str
    body: tuple[str, ...]
    why: tuple[str, ...]
    how: tuple[str, ...]


def load(
    path: Path = Path(__file__).with_name("distractors.txt"),
) -> tuple[dict[str, tuple[str, ...]], list[Template]]:
    """The word pools and templates of ``path`` (format in its header)."""
    pools: dict[str, tuple[str, ...]] = {}
    blocks: list[dict[str, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("pool "):
            name, _, values = line[5:].partition(": ")
            pools[name] = tuple(v.strip() for v in values.split(" | "))
        elif line.startswith("== "):
            blocks.append({"head": line[3:].split()})
        elif blocks and ": " in line and not line.startswith("#"):
            key, _, text = line.partition(": ")
            blocks[-1].setdefault(key, []).append(text)
    templates = [
        Template(b["head"][0] == "near", b["head"][1], b["name"][0], b["description"][0],
                 tuple(b["body"]), tuple(b.get("why", ())), tuple(b.get("how", ())))
        for b in blocks
    ]  # fmt: skip
    return pools, templates


POOLS, TEMPLATES = load()
NEAR = [t for t in TEMPLATES if t.near]
OTHER = [t for t in TEMPLATES if not t.near]


def _number(rng: random.Random, kind: str) -> str:
    if kind == "price":
        return f"£{rng.choice([4, 6, 8, 12, 15, 18, 25, 30, 35, 40, 45, 60, 75, 90, 120, 150, 240, 380])}"
    if kind == "pounds":
        return f"£{rng.randint(2, 48) * 25:,}"
    if kind == "time":
        return f"{rng.randint(6, 20):02d}:{rng.choice(['00', '15', '30', '45'])}"
    if kind == "dom":
        day = rng.randint(1, 28)
        return f"{day}{'th' if 10 < day < 14 else {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"
    if kind == "year":
        return str(rng.randint(2019, 2027))
    if kind == "percent":
        return str(rng.choice([3, 4, 5, 8, 10, 12, 15, 20, 25, 30]))
    if kind == "rate":
        return f"{rng.randint(31, 52) / 10:.1f}"
    if kind == "temp":
        return str(rng.choice([160, 170, 180, 190, 200, 210, 220]))
    if kind == "grams":
        return str(rng.choice([50, 75, 100, 150, 200, 250, 300, 400, 500]))
    return str(rng.randint(2, 12))  # n: a small count


_NUMBERS = {"price", "pounds", "time", "dom", "year", "percent", "rate", "temp", "grams", "n"}


def _fill(rng: random.Random, text: str, chosen: Chosen) -> str:
    """``text`` with its slots filled, the same slot the same value across one memory."""

    def one(match: re.Match[str]) -> str:
        pool, which = match.group(1), match.group(2)
        if (pool, which) not in chosen:
            if pool in _NUMBERS:
                chosen[pool, which] = _number(rng, pool)
            else:
                taken = {value for (p, _), value in chosen.items() if p == pool}
                chosen[pool, which] = rng.choice([v for v in POOLS[pool] if v not in taken])
        return chosen[pool, which]

    text = _ARTICLE.sub(r"\1n ", _SLOT.sub(one, text))
    return _SENTENCE.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def memory(rng: random.Random, i: int, n: int) -> str:
    """Distractor ``i`` of ``n`` as the text of a memory file."""
    template = rng.choice(NEAR if rng.random() < NEAR_SHARE else OTHER)
    chosen: Chosen = {}
    name, description = _fill(rng, template.name, chosen), _fill(rng, template.description, chosen)
    parts = [_fill(rng, rng.choice(template.body), chosen)]
    tail = []
    if template.why and rng.random() < 0.8:
        tail.append("**Why:** " + _fill(rng, rng.choice(template.why), chosen))
    if template.how and rng.random() < 0.7:
        tail.append("**How to apply:** " + _fill(rng, rng.choice(template.how), chosen))
    if tail:
        parts.append("\n".join(tail))
    if n > 1 and rng.random() < 0.4:
        parts.append(f"Related: [[pad-{rng.randrange(n):05d}]]")
    head = f'---\nname: "{name}"\ndescription: "{description}"\ntype: {template.type}\n---\n\n'
    text = head + "\n\n".join(parts) + "\n"
    found = FORBIDDEN.search(text)
    if found:
        raise ValueError(f"distractor {i} mentions {found.group(0)!r}, the subject of an unrelated question")
    return text


def write(root: Path, n: int, seed: int = 3) -> None:
    """``n`` distractors as ``pad-NNNNN.md`` in ``root``."""
    rng = random.Random(seed)
    for i in range(n):
        (root / f"pad-{i:05d}.md").write_text(memory(rng, i, n), encoding="utf-8")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    total = max(count, 2000)
    rng = random.Random(3)
    texts = [memory(rng, i, total) for i in range(total)]
    for text in texts[:count]:
        print(text)
    words = {w.lower() for text in texts for w in re.findall(r"[A-Za-z][A-Za-z'&-]+", text)}
    print(f"{len(TEMPLATES)} templates ({len(NEAR)} near the eval store's subjects), {len(POOLS)} pools")
    print(f"{total} generated: {len(set(texts))} distinct texts, {len(words)} distinct words")
