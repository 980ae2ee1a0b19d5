"""A name never holds a secret (issue 29, item 4): not a slug given to `kura remember`, not
a slug the distiller makes from a topic, not a draft's file name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_store

from kura.distill import drafts as dr
from kura.distill.compose import unique_slug
from kura.errors import PolicyRefused
from kura.transcripts.segments import Segment

PASSWORD = "Hx7kq2Lm9zP"
TOKENS = ["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", "dop_v1_" + "4f9a1c2e" * 8, "SK" + "0a1b2c3d4e5f6a7b" * 2]


def everything(root: Path) -> str:
    return "\n".join(
        str(p) + "\n" + (p.read_text(errors="replace") if p.is_file() else "") for p in root.rglob("*")
    )


@pytest.mark.parametrize("token", TOKENS)
def test_remember_never_makes_a_file_named_by_a_token(tmp_path: Path, token: str) -> None:
    store = make_store(tmp_path / "mem", [])
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store.root), "remember", token, "where the key lives"],
        capture_output=True, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 1
    assert "looks like it holds a secret" in done.stderr and token not in done.stderr
    assert token not in everything(store.root)


def test_the_distillers_slug_leaves_the_password_out() -> None:
    slug = unique_slug(f"the root password on db-main is {PASSWORD}", taken=())
    assert slug == "root-password-db-main"


def test_a_draft_never_holds_a_password_said_in_prose(tmp_path: Path) -> None:
    store = make_store(tmp_path / "mem", [])
    said = f"the root password on db-main is {PASSWORD}"
    dr.stage(
        store, slug="db-root", kind="reference", title=said[:40], description=said, body=said + "\n",
        evidence=[Segment("USER", said)], source="s.jsonl",
    )  # fmt: skip
    assert PASSWORD not in everything(store.root)
    with pytest.raises(PolicyRefused):
        dr.stage(
            store, slug=TOKENS[1], kind="reference", title="t", description="d", body="b\n",
            evidence=[], source="s.jsonl",
        )  # fmt: skip
    assert TOKENS[1] not in everything(store.root)
