"""A model folder whose ``modules.json`` names its Pooling folder with a name no filesystem
takes (a NUL byte, a name over 255 bytes): the folder is refused like any other hostile one,
and ``kura recall`` answers from words and says why, instead of dying with a traceback.

Real files and a real ``kura recall`` process; the ONNX file and tokenizer are never opened
(the folder is refused while its configs are read), so the test needs no model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kura.recall.embed import Unavailable
from kura.recall.model_folder import folder_embedder

NAMES = {"a NUL byte": "pool\u0000ing", "an over-long name": "p" * 300}


def hostile(root: Path, pooling: str) -> Path:
    root.mkdir(parents=True)
    (root / "model.onnx").write_bytes(b"not read")
    (root / "tokenizer.json").write_text("{}")
    (root / "modules.json").write_text(
        json.dumps([{"type": "sentence_transformers.models.Pooling", "path": pooling}])
    )
    return root


@pytest.mark.parametrize("name", NAMES, ids=list(NAMES))
def test_a_pooling_folder_no_filesystem_takes_is_refused(tmp_path: Path, name: str) -> None:
    found = folder_embedder(str(hostile(tmp_path / "model", NAMES[name])))
    assert isinstance(found, Unavailable), found
    assert found.reason.startswith(f"[embedder] path = {tmp_path / 'model'}: a file it names cannot be read")


@pytest.mark.parametrize("name", NAMES, ids=list(NAMES))
def test_recall_answers_from_words_through_such_a_folder(tmp_path: Path, name: str) -> None:
    hostile(tmp_path / "model", NAMES[name])
    store = tmp_path / "memory"
    store.mkdir()
    (store / "deploy.md").write_text(
        "---\nname: Deploy\ndescription: how we deploy\ntype: project\n---\nmake deploy\n"
    )
    (store / "MEMORY.md").write_text("- [Deploy](deploy.md) — how we deploy\n")
    (tmp_path / "kura.toml").write_text('[stores.s]\npath = "memory"\n\n[embedder]\npath = "model"\n')
    done = subprocess.run(
        [sys.executable, "-m", "kura", "recall", "--json", "--no-model", "how do we deploy"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "KURA_INDEX_BACKGROUND": "0"}, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert (
        said["how"] == "lexical" and said["degraded"] and "a file it names cannot be read" in said["reason"]
    )
    assert [p["slug"] for p in said["picked"]] == ["deploy"]
