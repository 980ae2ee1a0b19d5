"""Of two memories that answer a question together, the one it asks for comes first
(``kura.recall.headed``), through real ``kura recall`` processes on a small store of its own:
a kitten, a boat, a choir, two swims and a market stall, none of bench/eval's words.

Each question here led with the memory it describes (the bridge) before: the rescue, not the
groomer's visit; the commission, not the boat's new name."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_converse import embedded, recall

from kura.recall import headed
from kura.recall.search import SearchIndex
from kura.store.store import Store

MEMORIES = {
    "marta-rescues-kitten": "Marta rescued a tabby kitten from the canal towpath and named her Pepper.",
    "pepper-groomer-visit": "At the groomer's the matted fur on Pepper's belly was shaved off; it cost £45.",
    "pepper-vaccinations": "Pepper had her first vaccinations at the surgery on Tuesday.",
    "pepper-hides-wardrobe": "Pepper hides in the wardrobe whenever the hoover comes out.",
    "marta-kitten-food": "Marta switched the kitten to wet food because she kept leaving the biscuits.",
    "marta-canal-walks": "Marta walks along the canal towpath every morning before work.",
    "tomas-hired-boat": "A fisherman from the harbour hired Tomas to restore his old wooden boat for £900.",
    "tomas-boat-finished": "Tomas finished the restoration and the fisherman gave the boat a new name, Kestrel.",
    "tomas-varnish": "Tomas says marine varnish needs six thin coats to last a winter.",
    "tomas-workshop-move": "Tomas moved his workshop to a shed by the slipway in March.",
    "tomas-dinghy-race": "Tomas sailed his dinghy in the regatta and came fourth.",
    "ines-choir-festival": "Ines sang with the choir at the spring festival in Granada.",
    "ines-granada-tiles": "In Granada Ines bought six painted tiles for the kitchen wall.",
    "ines-choir-rehearsal": "The choir rehearses on Thursday evenings in the church hall.",
    "ines-kitchen-paint": "Ines painted the kitchen a pale green over the weekend.",
    "ines-sister-visit": "Ines's sister came to stay for a week in August.",
    "rui-relay-result": "Rui swam his leg of the club relay in 14 minutes 10 seconds.",
    "rui-open-water-result": "Rui swam the open water mile at the reservoir in 31 minutes, slower than he hoped.",
    "rui-open-water-plan": "Rui wants to try an open water mile at the reservoir next summer.",
    "rui-relay-team": "Rui joined the club relay team after the coach saw him train.",
    "rui-goggles": "Rui bought tinted goggles for swimming outdoors.",
    "marta-honey-sold": "The honey sold out at the farmers' market and brought in £120.",
    "marta-candles-sold": "Marta's beeswax candles made £85 at the farmers' market stall.",
    "marta-candle-making": "Marta makes beeswax candles from the wax left after the honey harvest.",
    "marta-hives-count": "Marta keeps four hives at the bottom of the allotment.",
    "marta-market-stall": "Marta booked a stall at the farmers' market for the first Saturday of the month.",
    "tomas-sister-wedding": "Tomas's sister is getting married in October in Porto.",
    "ines-new-bike": "Ines bought a second-hand road bike to ride to work.",
    "rui-knee-physio": "Rui is seeing a physio about his knee after the relay season.",
    "marta-allotment-leeks": "Marta's leeks won second prize at the allotment show.",
    "tomas-radio-repair": "Tomas fixed the neighbour's old valve radio for fun.",
    "ines-book-club": "Ines's book club is reading a novel about a lighthouse keeper.",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    root = tmp_path_factory.mktemp("headed") / "store"
    root.mkdir()
    lines = []
    for slug, said in MEMORIES.items():
        name = slug.replace("-", " ")
        text = f"---\nname: {name}\ndescription: {said}\ntype: user\n---\n\n{said}\n"
        (root / f"{slug}.md").write_text(text, encoding="utf-8")
        lines.append(f"- [{name}]({slug}.md) — {said}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return embedded(root, user_cache)


@pytest.mark.parametrize(
    ("question", "asked", "described"),
    [
        # a topic before a colon describes the kitten; the groomer's visit is what is asked
        ("The kitten Marta rescued: what did the groomer take off?", "pepper-groomer-visit", "marta-rescues-kitten"),
        # a bare relative clause describes the boat; the name asked for is in the other memory
        ("What was the name of the boat Tomas was hired to restore?", "tomas-boat-finished", "tomas-hired-boat"),
        # a relative clause after "where" describes the city
        ("What did Ines buy in the city where the choir sang at the festival?", "ines-granada-tiles", "ines-choir-festival"),
        # a comparison: the first named is asked first
        ("How much quicker was Rui in the club relay than in the open water mile at the reservoir?", "rui-relay-result", "rui-open-water-result"),
        # a list: the first named is asked first
        ("How much did Marta make from the honey and the candles together?", "marta-honey-sold", "marta-candles-sold"),
    ],
)  # fmt: skip
def test_the_memory_asked_for_leads_the_one_it_describes_follows(
    store: Path, question: str, asked: str, described: str
) -> None:
    code, found = recall(store, question, "--explain")
    assert code == 0, found
    order = [row["slug"] for row in found["explain"]]
    assert order[:2] == [asked, described], order[:5]
    assert found["picked"][0]["slug"] == asked


@pytest.mark.parametrize(
    "question",
    [
        "What did the groomer take off?",  # one part: nothing to reorder
        "Which kitten did Marta rescue from the canal where she walks every morning?",  # the lead is asked
        "¿Qué compró Ines en la ciudad donde cantó el coro?",  # another language: never parsed
    ],
)
def test_a_question_whose_best_hit_is_what_it_asks_is_left_as_it_was(store: Path, question: str) -> None:
    index = SearchIndex(Store(store))
    try:
        index.update()
        first = index.search(question, k=12)
        assert headed.asked_first(index, question, first) is first
    finally:
        index.close()
