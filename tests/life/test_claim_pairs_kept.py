"""Doctor keeps the pairs of a store's live claims in its catalog and pairs them again only
when a claim (or the code that pairs them) changed.

Pairing 20,000 claims is a third of a doctor; most doctors see the claims the last one saw.
The kept answer must be the answer: equal to ``pairs`` on the same claims, not used once a
claim changed, and never trusted in a shape this code does not write (the state folder is
untrusted) — then the claims are paired again and the right answer kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory

from kura.life import corrections
from kura.store import catalog
from kura.store.store import Store
from kura.text import claim_match

CARGO = "We run the tests with cargo test"
MAKE = "We run the tests with make test"
LIVE = {"cargo-test": CARGO, "make-test": MAKE, "deploy-day": "deploys go out Tuesday 10:00 CET", "x": "y"}


def kept(store: Store) -> str | None:
    db = catalog.connect(store)
    try:
        return catalog.kv_get(db, "claim-pairs")
    finally:
        db.close()


def keep(store: Store, text: str) -> None:
    db = catalog.connect(store)
    try:
        catalog.kv_put(db, "claim-pairs", text)
    finally:
        db.close()


def no_pairing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("paired again")

    monkeypatch.setattr(corrections, "pairs", refuse)


def test_the_kept_pairs_are_the_pairs_and_are_read_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert corrections.live_pairs(store, LIVE) == claim_match.pairs(LIVE) == [("cargo-test", "make-test")]
    assert json.loads(kept(store) or "")["pairs"] == [["cargo-test", "make-test"]]
    no_pairing(monkeypatch)
    assert corrections.live_pairs(store, LIVE) == [("cargo-test", "make-test")]
    assert corrections.live_pairs(store, dict(reversed(LIVE.items()))) == [("cargo-test", "make-test")]


def test_a_changed_claim_is_paired_again(store: Store) -> None:
    corrections.live_pairs(store, LIVE)
    changed = {**LIVE, "make-test": "the build uses gradle"}
    assert corrections.live_pairs(store, changed) == [] == claim_match.pairs(changed)
    added = {**LIVE, "cargo-2": "We run the tests with cargo nextest"}
    assert corrections.live_pairs(store, added) == claim_match.pairs(added)
    assert len(claim_match.pairs(added)) == 2


def test_a_kept_answer_this_code_did_not_write_is_not_used(store: Store) -> None:
    digest = corrections._claims_digest(LIVE)
    right = [("cargo-test", "make-test")]
    for forged in (
        "not json",
        "[" * 100_000 + "]" * 100_000,
        json.dumps([digest, []]),
        json.dumps({"digest": "0" * 64, "pairs": []}),  # another set of claims
        json.dumps({"digest": digest, "pairs": "cargo-test"}),
        json.dumps({"digest": digest, "pairs": [["cargo-test", "gone"]]}),  # not a live claim
        json.dumps({"digest": digest, "pairs": [["make-test", "cargo-test"]]}),  # not in pairs' order
        json.dumps({"digest": digest, "pairs": [["cargo-test", "make-test"]] * 2}),
        json.dumps({"digest": digest, "pairs": [["cargo-test", "make-test", "x"]]}),
        json.dumps({"digest": digest, "pairs": [[1, 2]]}),
        json.dumps({"digest": digest, "pairs": [[["cargo-test"], "make-test"]]}),
        json.dumps({"digest": digest, "pairs": [["cargo-test", "make-test"]], "x": "y" * (1 << 22)}),
    ):
        keep(store, forged)
        assert corrections.live_pairs(store, LIVE) == right, forged[:80]
        assert json.loads(kept(store) or "") == {"digest": digest, "pairs": [list(p) for p in right]}


def doctor(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "doctor"], capture_output=True, text=True, check=False
    )


def test_doctor_says_the_same_with_the_answer_kept_and_after_a_change(store: Store) -> None:
    for slug, text in LIVE.items():
        write_memory(store.root, slug, "project", text)
    first = doctor(store.root)
    assert "make-test and cargo-test revise one another" in first.stdout or (
        "cargo-test and make-test revise one another" in first.stdout
    )
    assert kept(store) is not None
    again = doctor(store.root)
    assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)
    write_memory(store.root, "make-test", "project", "the build uses gradle")
    changed = doctor(store.root)
    assert "revise one another" not in changed.stdout
