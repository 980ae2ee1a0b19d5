"""Issue 18, one way through: a failure that is worked around is said, a store is resolved
one way by every command, and read-only vs writable is one switch with one name.

Each failure is made to really happen: a MEMORY.md left mid-merge, a memory file too big
to read, a cache path that is a folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Cli, write_memory

from kura.config import load_config
from kura.store.safe_read import MEMORY_CAP
from kura.store.store import Store

CONFLICTED = (
    "# Memory index\n\n<<<<<<< HEAD\n- [deploy](deploy.md) — deploys go out on Fridays\n"
    "=======\n- [deploy](deploy.md) — deploys go out on Mondays\n>>>>>>> theirs\n"
)


def _too_big(root: Path, slug: str) -> Path:
    """A real memory file kura will not read: over MEMORY_CAP (sparse, so it is quick)."""
    path = root / f"{slug}.md"
    with path.open("wb") as out:
        out.write(b"---\nname: big\ndescription: the deploy runbook\n---\n")
        out.truncate(MEMORY_CAP + 1)
    return path


# -- swallowed errors say so ---------------------------------------------------------------


def test_context_says_the_map_is_raw_memory_md_when_the_weave_failed(cli: Cli, store: Store) -> None:
    write_memory(store.root, "deploy", "project", "deploys go out on Fridays")
    (store.root / "MEMORY.md").write_text(CONFLICTED)
    result = cli("-s", str(store.root), "context", "when do deploys go out?", "--no-model", "--json")
    told = json.loads(result.out)
    assert len(told["degraded"]) == 1
    said = told["degraded"][0]
    assert said.startswith("map: the map could not be woven (")
    assert "MEMORY.md:3:" in said and said.endswith("; MEMORY.md is shown as it is instead")
    plain = cli("-s", str(store.root), "context", "when do deploys go out?", "--no-model")
    assert f"kura: context degraded — {said}\n" in plain.err


def test_why_says_a_contradicting_memory_it_could_not_read(cli: Cli, store: Store) -> None:
    (store.root / "fridays.md").write_text(
        "---\nname: Fridays\ndescription: deploys go out on Fridays\ncontradicted_by: big\n---\n\nFridays.\n"
    )
    _too_big(store.root, "big")
    result = cli("-s", str(store.root), "why", "fridays", "--json")
    found = json.loads(result.out)
    assert found["degraded"] == [
        f"contradicted_by big: store/big.md could not be read ({MEMORY_CAP + 1} bytes, over the "
        "4 MiB kura reads in a memory); counted as a live contradiction"
    ]
    plain = cli("-s", str(store.root), "why", "fridays")
    assert f"  ! {found['degraded'][0]}\n" in plain.out


def test_why_of_a_contradiction_naming_no_memory_stays_quiet(cli: Cli, store: Store) -> None:
    (store.root / "fridays.md").write_text(
        "---\nname: Fridays\ndescription: deploys go out on Fridays\ncontradicted_by: gone\n---\n\nFridays.\n"
    )
    found = json.loads(cli("-s", str(store.root), "why", "fridays", "--json").out)
    assert found["degraded"] == []


def test_weave_says_the_layer_cache_could_not_be_saved(cli: Cli, store: Store) -> None:
    write_memory(store.root, "deploy", "project", "deploys go out on Fridays")
    (store.root / "MEMORY.md").write_text("# Memory index\n\n- [deploy](deploy.md) — deploys on Fridays\n")
    (store.root / ".kura" / "layers.json").mkdir(parents=True)  # a folder where the cache goes
    result = cli("-s", str(store.root), "weave", "--json")
    notes = json.loads(result.out)["notes"]
    assert [n for n in notes if "layers.json" in n] == [
        f"the layer cache {store.root / '.kura' / 'layers.json'} could not be saved "
        "(Is a directory); every weave re-layers the index until it can"
    ]
    assert "layers.json" in result.err


def test_recall_says_which_memories_it_could_not_read(cli: Cli, store: Store) -> None:
    write_memory(store.root, "deploy", "project", "deploys go out on Fridays")
    _too_big(store.root, "runbook")
    result = cli("-s", str(store.root), "recall", "deploy runbook", "--no-model", "--json")
    found = json.loads(result.out)
    assert found["unread"] == [
        f"store/runbook.md:1: {MEMORY_CAP + 1} bytes, over the 4 MiB kura reads in a memory; not read — "
        "split it into smaller memories or move it out of the store"
    ]
    plain = cli("-s", str(store.root), "recall", "deploy runbook", "--no-model")
    assert f"kura: not searched: {found['unread'][0]}\n" in plain.err


# -- a store is resolved one way ---------------------------------------------------------


def test_distill_check_uses_the_store_kura_dir_names(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_gate import USER_Q, write_raw

    write_memory(store.root, "archive-ro", "project", "ro", body="Keep the archive disk mounted read-only.")
    raw = write_raw(tmp_path / "raw.jsonl")
    cands = tmp_path / "c.json"
    cands.write_text(json.dumps([{"kind": "project", "quotes": [USER_Q]}]))
    monkeypatch.setenv("KURA_DIR", str(store.root))
    assert load_config().open().root == store.root  # what every other command reads
    result = cli("distill", "check", "--raw", str(raw), "--candidates", str(cands), "--json")
    verdict = json.loads(result.out)
    assert verdict["verdict"] == "dropped"
    assert "already in the store's own text (an echo)" in verdict["reason"]


def test_distill_check_without_any_store_still_judges(cli: Cli, tmp_path: Path) -> None:
    from test_gate import USER_Q, write_raw

    raw = write_raw(tmp_path / "raw.jsonl")
    cands = tmp_path / "c.json"
    cands.write_text(json.dumps([{"topic": "t", "kind": "project", "why": "w", "quotes": [USER_Q]}]))
    result = cli("distill", "check", "--raw", str(raw), "--candidates", str(cands), "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["verdict"] != "dropped"


def test_distill_check_with_a_named_store_that_is_not_there_fails(cli: Cli, tmp_path: Path) -> None:
    from test_gate import write_raw

    raw = write_raw(tmp_path / "raw.jsonl")
    cands = tmp_path / "c.json"
    cands.write_text("[]")
    result = cli(
        "-s", str(tmp_path / "nowhere"), "distill", "check", "--raw", str(raw), "--candidates", str(cands)
    )
    assert result.code == 1
    assert "nowhere" in result.err


# -- read-only vs writable: one switch, one name -------------------------------------------


def _remember_refusal(tools: object) -> str:
    said, failed = tools.call("kura_remember", {"slug": "x", "description": "y"}, "s")  # type: ignore[attr-defined]
    assert failed
    return str(said)


def test_every_refusal_names_a_flag_the_refusing_surface_has(store: Store) -> None:
    from kura.config import StoreConfig, load_config
    from kura.serve.mcp_server import Local, http_tools
    from kura.serve.mcp_tools import Tools
    from kura.serve.pool import StorePool

    config = load_config()
    config = type(config)(source=None, stores={"test": StoreConfig("test", store.root)})
    stdio = _remember_refusal(Tools(Local(StorePool(config)), readonly=True))
    assert "restart `kura mcp` with --writable (or KURA_READONLY=0)" in stdio
    over_http = _remember_refusal(http_tools(StorePool(config), readonly=None))
    assert "restart `kura serve` with --writable (or KURA_READONLY=0)" in over_http
    locked = _remember_refusal(http_tools(StorePool(config, readonly=True), readonly=None))
    assert "restart `kura serve` with --writable instead of --readonly" in locked
    assert not http_tools(StorePool(config), readonly=False).readonly  # kura serve --writable


def test_serve_and_mcp_accept_the_same_switch(cli: Cli) -> None:
    for command in ("serve", "mcp"):
        shown = cli(command, "--help").out
        assert "--writable" in shown and "--readonly" in shown, command


def test_the_switch_means_the_same_on_both_commands() -> None:
    from kura.serve.mcp_server import readonly_from

    on = {"KURA_READONLY": "0"}
    assert readonly_from({}) is True and readonly_from(on) is False  # unset: the variable decides
    assert readonly_from(on, False) is True  # --readonly wins over KURA_READONLY=0
    assert readonly_from({}, True) is False  # --writable


def test_a_readonly_server_refuses_a_write_naming_its_own_flag(store: Store) -> None:
    import urllib.error
    import urllib.request

    from conftest import uvicorn_app

    from kura.config import StoreConfig
    from kura.serve.http import create_app
    from kura.serve.pool import StorePool

    config = type(load_config())(source=None, stores={"test": StoreConfig("test", store.root)})
    service = StorePool(config, readonly=True)
    body = json.dumps({"slug": "tea", "description": "green tea in the kitchen"}).encode()
    with uvicorn_app(create_app(service, watch=False)) as url:
        ask = urllib.request.Request(
            f"{url}/remember", data=body, headers={"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(ask, timeout=10)
    service.close()
    assert refused.value.code == 403
    said = json.loads(refused.value.read())
    assert "(kura serve --readonly)" in json.dumps(said) and "restart it without --readonly" in json.dumps(
        said
    )
    assert not (store.root / "tea.md").exists()


# -- the recall request, defined once ------------------------------------------------------


def test_every_surface_takes_its_recall_defaults_and_ranges_from_one_request() -> None:
    import inspect
    import re

    from kura.cli import recall as cli_recall
    from kura.recall import recall
    from kura.request import RECALL, RecallRequest
    from kura.serve.mcp_tools import RECALL as MCP_RECALL  # the tool's spec
    from kura.serve.mcp_tools import Tools
    from kura.serve.pool import StorePool
    from kura.serve.schemas import RecallIn

    asked = {"top": RECALL.top, "hops": RECALL.hops, "chars": RECALL.chars}
    for function in (recall.recall, cli_recall.recall_command, StorePool.recall):
        defaults = inspect.signature(function).parameters
        assert {name: defaults[name].default for name in asked} == asked, function
    fields = RecallIn.model_fields
    assert {name: fields[name].default for name in asked} == asked
    from types import SimpleNamespace

    schema = Tools(SimpleNamespace(bound=None), readonly=True).schema(MCP_RECALL)["properties"]  # type: ignore[arg-type]
    for name, (low, high) in RecallRequest.RANGES.items():
        assert (schema[name]["default"], schema[name]["minimum"], schema[name]["maximum"]) == (
            asked[name], low, high,
        )  # fmt: skip
    assert RecallRequest("q", top=51).out_of_range() == "top must be between 1 and 50, got 51"
    package = Path(recall.__file__).parent.parent
    written = sorted(p.name for p in package.rglob("*.py") if re.search(r"\b6000\b", p.read_text()))
    assert written == ["request.py"]


def test_a_warm_index_says_a_memory_that_became_unreadable(store: Store) -> None:
    from kura.recall.embed import Unavailable
    from kura.recall.search import SearchIndex

    write_memory(store.root, "deploy", "project", "deploys go out on Fridays")
    write_memory(store.root, "runbook", "project", "the deploy runbook")
    index = SearchIndex(store, embedder=Unavailable("words only, for this test"))
    try:
        index.update()
        assert index.unread() == ()
        _too_big(store.root, "runbook")
        assert index.unread() == ()  # nothing re-read yet: the index still holds the old text
        index.update()  # what a server's next check (or its watcher) does
        said = index.unread()
    finally:
        index.close()
    assert said == (
        f"test/runbook.md:1: {MEMORY_CAP + 1} bytes, over the 4 MiB kura reads in a memory; not read — "
        "split it into smaller memories or move it out of the store",
    )
