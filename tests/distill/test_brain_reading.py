"""distill-kura's ``[distill] chunk_chars`` and ``max_items``, honoured: the most transcript
one brain call is sent, and the most candidates one call may yield. A scripted brain on a
real loopback socket records what it was asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, ModelServer
from test_brain import Script
from test_distill_run import SID, cc, jsonl

from kura.store.store import init_store

FACTS = [
    f"The build server number {n} sits in rack {n} of the north room, its fans were replaced in "
    f"spring, and the spare disks for it are kept on shelf {n} beside the door."
    for n in range(1, 9)
]


def found(n: int) -> dict[str, Any]:
    quote = f"The build server number {n} sits in rack {n} of the north room"
    return {"topic": f"Build server {n} is in rack {n}", "kind": "reference", "why": "where it is",
            "quotes": [f"[USER] {quote}"]}  # fmt: skip


def setup(tmp_path: Path, model_server: ModelServer, distill: str) -> Path:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    jsonl(journals / "racks" / f"{SID}.jsonl", [cc("user", fact, f"u{i}") for i, fact in enumerate(FACTS)])
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\nwrite_policy = "distiller-only"\n\n'
        f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n\n'
        f'[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\ntimeout = 5\n\n{distill}'
    )
    return config


def run(config: Path) -> dict[str, Any]:
    result = Cli()("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


def transcripts(script: Script) -> list[str]:
    users = [body["messages"][1]["content"] for body in script.asked["brain"]]
    return [user.removeprefix("<transcript>\n").removesuffix("\n</transcript>") for user in users]


@pytest.mark.parametrize("where", ["[distill]", "[stores.test.distill]"])
def test_chunk_chars_is_the_most_transcript_one_brain_call_reads(
    tmp_path: Path, model_server: ModelServer, where: str
) -> None:
    script = Script({"candidates": []}, scribe="no idea")
    model_server.respond = script
    run(setup(tmp_path / "whole", model_server, ""))
    assert len(transcripts(script)) == 1  # kura's own piece size takes the whole stretch at once
    script.asked["brain"].clear()
    run(setup(tmp_path / "chunked", model_server, f"{where}\nchunk_chars = 400\n"))
    pieces = transcripts(script)
    assert len(pieces) >= 3 and all(len(piece) <= 400 for piece in pieces), [len(p) for p in pieces]
    assert all(fact in "\n".join(pieces) for fact in FACTS)  # every line read, in some piece


def test_max_items_caps_what_one_brain_call_yields_and_the_brain_is_told(
    tmp_path: Path, model_server: ModelServer
) -> None:
    script = Script({"candidates": [found(1), found(2), found(3)]}, scribe="no idea")
    model_server.respond = script
    assert run(setup(tmp_path / "free", model_server, ""))["candidates"] == 3
    assert "Propose at most" not in script.asked["brain"][0]["messages"][0]["content"]
    script.asked["brain"].clear()
    report = run(setup(tmp_path / "capped", model_server, "[distill]\nmax_items = 1\n"))
    assert report["candidates"] == 1 and report["kept"] == 1
    assert script.asked["brain"][0]["messages"][0]["content"].endswith("Propose at most 1 candidates.")
