"""What ``kura weave`` spends on a store that changed: no collector passes over objects that
all live to the end, and no second look at a stored map the command found stale."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
from conftest import write_memory

import kura.map.weave as weave_module
from kura.cli.map import weave_command
from kura.store.store import Store


def _woven_store(store: Store) -> Path:
    for i, kind in enumerate(("user", "project", "reference")):
        write_memory(store.root, f"m{i}", kind, f"memory number {i} about the staging deploy")
    lines = "".join(f"- [m{i}](m{i}.md) — memory number {i} about the staging deploy\n" for i in range(3))
    store.index_path.write_text("# Memory index\n\n" + lines)
    assert weave_command({"store": str(store.root), "no_model": "1"}) == 0
    return store.root / "m1.md"


def test_the_weave_runs_without_the_cyclic_collector_and_turns_it_back_on(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = _woven_store(store)
    edited.write_text(edited.read_text() + "\nedited\n")
    during: list[bool] = []
    real = weave_module.weave

    def watched(*args: Any, **kwargs: Any) -> Any:
        during.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(weave_module, "weave", watched)
    assert gc.isenabled()
    assert weave_command({"store": str(store.root), "no_model": "1"}) in (0, 2)
    assert during == [False]
    assert gc.isenabled()


def test_the_collector_is_back_on_after_a_weave_that_failed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = _woven_store(store)
    edited.write_text(edited.read_text() + "\nedited\n")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(weave_module, "weave", broken)
    with pytest.raises(RuntimeError, match="boom"):
        weave_command({"store": str(store.root), "no_model": "1"})
    assert gc.isenabled()


def test_a_map_the_command_found_stale_is_not_read_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = _woven_store(store)
    edited.write_text(edited.read_text() + "\nedited\n")
    looked: list[str] = []
    real = weave_module.stored_map

    def counted(*args: Any, **kwargs: Any) -> Any:
        looked.append("weave")
        return real(*args, **kwargs)

    monkeypatch.setattr(weave_module, "stored_map", counted)
    before = (store.root / ".kura" / "map.md").read_bytes()
    assert weave_command({"store": str(store.root), "no_model": "1"}) == 2  # re-woven, same bytes
    assert looked == []
    assert (store.root / ".kura" / "map.md").read_bytes() == before
    # a caller that did not check (the library call) still gets the stored map when current
    found = weave_module.weave(Store(store.root, name=store.name), _settings(store))
    assert found is not None and found.parsed == 0 and looked == ["weave"]


def _settings(store: Store) -> Any:
    from kura.config import load_config

    config = load_config(None)
    return config.map_settings(config.store_config(str(store.root)))
