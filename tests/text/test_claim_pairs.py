"""Which live claims doctor pairs as revising one another, pinned on a crafted set.

``claim_match.pairs`` is narrowed for speed (a 20,000-memory store used to cost doctor 12
CPU-seconds here); the narrowing must not change a single pair. The set mixes what a real
big store holds: thousands of lines of one shape sharing most words, a pattern of facts
whose words are held by more than ``CROWD`` claims, short claims made of crowded words, and
planted corrections (a value changed, a polarity turned, a restatement). The pinned figures
are what the code before the narrowing answered (commit 9542817), checked again after it.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter

import pytest

from kura.text import claim_match

WORDS = (
    "deploy staging postgres redis caddy hetzner migration rollback incident runbook oncall "
    "pytest flaky fixture coverage ruff mypy uv lockfile docker compose nightly backup restore "
    "archive disk nvme latency queue worker retry timeout sla ticket routing webhook token"
).split()
NAMES = ("Mika", "Tomasz", "Aiko", "Sam", "Ferrydesk", "GitHub", "Grafana", "Sentry")


def crafted() -> dict[str, str]:
    rng = random.Random(19)
    said: dict[str, str] = {}
    for i in range(3000):  # one shape, as bench/map_scale.py writes them
        w = rng.sample(WORDS, 9)
        said[f"m{i:05d}"] = (
            f"{rng.choice(NAMES)} {w[0]} {w[1]} on port {8000 + i % 900} uses {w[2]} "
            f"({rng.randint(2, 64)} GB) because {w[3]} {w[4]} {w[5]}; {w[6]} stays {w[7]}"
        )
    for i in range(600):  # a pattern: "fact", "about", "port" held by more than CROWD claims
        said[f"p{i:04d}"] = f"fact {i} about service-{i % 7} on port {8000 + i}"
    for i in range(500):  # short claims of crowded words
        said[f"s{i:04d}"] = f"deploy staging {rng.choice(WORDS)} {rng.choice(WORDS)}" + rng.choice(
            ["", " never"]
        )
    for i in range(300):
        w = rng.sample(WORDS, 4)
        said[f"t{i:04d}"] = f"the {w[0]} {w[1]} job runs {w[2]} {w[3]} every night" + rng.choice(
            ["", ", not on sundays"]
        )
    for i in range(0, 3000, 40):  # a corrected value, a turned polarity, a restatement
        was = said[f"m{i:05d}"]
        said[f"r{i:05d}"] = re.sub(r"\((\d+) GB\)", lambda m: f"({int(m[1]) + 100} GB)", was)
        said[f"n{i:05d}"] = "never " + was if i % 80 == 0 else was + " again"
    for i in range(0, 600, 60):
        said[f"q{i:04d}"] = said[f"p{i:04d}"].replace("service-", "daemon-")
    return said


def digest(found: list[tuple[str, str]]) -> str:
    return hashlib.sha256(repr(found).encode()).hexdigest()


@pytest.fixture(scope="module")
def said() -> dict[str, str]:
    return crafted()


def test_the_pairs_of_a_crafted_big_set_are_the_ones_found_before(said: dict[str, str]) -> None:
    found = claim_match.pairs(said)
    assert Counter(a[0] + b[0] for a, b in found) == {"mn": 38, "nr": 38, "qq": 3, "tt": 1}
    assert found[:3] == [("m00000", "n00000"), ("m00080", "n00080"), ("m00160", "n00160")]
    assert ("q0000", "q0420") in found and ("q0120", "q0540") in found and ("t0004", "t0019") in found
    assert digest(found) == "e86df876d3327deec0c433cde02c1ed62146aa60f2ba14236e1f97c47dfc6b56"


def test_with_no_family_limit_every_pair_found_before_is_found(said: dict[str, str]) -> None:
    found = claim_match.pairs(said, family=10**6)
    assert len(found) == 26636
    assert digest(found) == "075206a2cff4286081bd9ae45212fee97d398998f2f4e0d81aafa19bdd39a5f0"


def test_a_store_of_none_one_or_two_claims() -> None:
    assert claim_match.pairs({}) == []
    assert claim_match.pairs({"a": "alpha fact"}) == []
    assert claim_match.pairs({"a": "alpha fact", "b": "alpha fact"}) == []  # a restatement
    pair = {"cargo": "We run the tests with cargo test", "make": "We run the tests with make test"}
    assert claim_match.pairs(pair) == [("cargo", "make")]
