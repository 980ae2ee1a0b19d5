"""kura mcp's resources and prompts as the MCP Inspector's CLI sees them (another client than
the Python SDK: the TypeScript one hosts are built on).

``mcp-inspector`` comes from npm (``npm install -g @modelcontextprotocol/inspector@2.12.0``,
as ``.ci/run`` does when it is missing). A missing one skips these tests with that hint, or
fails them when ``KURA_HOST_TESTS=required``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
REQUIRED = os.environ.get("KURA_HOST_TESTS") == "required"  # read before the autouse fixture strips KURA_*


def inspector() -> str:
    found = shutil.which("mcp-inspector")
    if found:
        return found
    hint = f"mcp-inspector is not on PATH: npm install -g {PACKAGE}"
    if REQUIRED:
        pytest.fail(hint + " (KURA_HOST_TESTS=required)")
    pytest.skip(hint)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Path:
    return sample_copy(tmp_path_factory.mktemp("inspected") / "team")


def inspect(store: Path, *method: str, writable: bool = False) -> Any:
    """The Inspector CLI's JSON answer to one method on a ``kura mcp`` bound to ``store``."""
    home = store.parent / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8",
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
           "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache")}  # fmt: skip
    server = [
        sys.executable,
        "-m",
        "kura",
        "mcp",
        "--store",
        str(store),
        *(["--writable"] if writable else []),
    ]
    kura_env = ["-e", f"HOME={home}", "-e", f"KURA_HOME={home / '.kura'}"]
    done = subprocess.run(
        [inspector(), "--cli", *kura_env, *server, "--method", *method],
        capture_output=True, text=True, env=env, cwd=store.parent, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def test_the_inspector_lists_and_reads_the_resources(store: Path) -> None:
    listed = inspect(store, "resources/list")["resources"]
    assert listed[0]["uri"] == "kura://team/map"
    memory = next(r for r in listed if r["name"] == "deploy-commands")
    assert memory["uri"] == "kura://team/memory/deploy-commands" and memory["mimeType"] == "text/markdown"
    (template,) = inspect(store, "resources/templates/list")["resourceTemplates"]
    assert template["uriTemplate"] == "kura://{store}/memory/{slug}"
    (read,) = inspect(store, "resources/read", "--uri", "kura://team/memory/deploy-commands")["contents"]
    assert read["text"] == (store / "deploy-commands.md").read_text()


def test_the_inspector_lists_and_gets_the_prompts(store: Path) -> None:
    assert [p["name"] for p in inspect(store, "prompts/list")["prompts"]] == ["recall"]
    writable = inspect(store, "prompts/list", writable=True)["prompts"]
    assert [p["name"] for p in writable] == ["recall", "remember"]
    got = inspect(
        store, "prompts/get", "--prompt-name", "recall", "--prompt-args", "question=where are the runbooks"
    )
    (message,) = got["messages"]
    assert message["role"] == "user" and "runbooks-location" in message["content"]["text"]
