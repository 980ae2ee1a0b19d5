"""The resident block: stable bytes, never half a map, never a silent blank."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli, ModelServer, make_store, write_memory

from kura.errors import ConfigError
from kura.map import prefill as pf
from kura.map import record
from kura.map.prefill import MapSettings, build, header_text

TODAY = dt.date(2026, 11, 30)
LONG = "the archive lives on the slow disk (hdd0, 8 TB) because the fast NVMe burns write endurance; the fast one stays scratch"


def store_with(tmp_path: Path, n: int = 3) -> Path:
    sections = "## People\n- [Mika](mika.md) — Mika leads\n## Infra\n"
    store = make_store(tmp_path / "s", [(f"m{i}", "project", LONG.replace("archive", f"m{i}"), "2026-03-01") for i in range(n)],
                       extra_index=sections)  # fmt: skip
    write_memory(store.root, "mika", "user", "Mika leads", date="2026-03-01")
    return store.root


def test_block_shape_and_byte_identical_reruns(tmp_path: Path) -> None:
    root = store_with(tmp_path)
    first = build(root, "s", MapSettings(), today=TODAY)
    assert first.state == "rewoven"
    assert first.text.startswith(
        "<<<KURA-MAP store=s>>>\nThis is the map of what you remember (kura store 's')"
    )
    assert first.text.endswith(
        "- [m2](m2.md) — m2 lives slow disk (hdd0, 8 TB) fast NVMe burns write endurance; fast one stays scratch\n<<<END KURA-MAP>>>\n"
    )
    second = build(root, "s", MapSettings(), today=TODAY)
    assert second.state == "current"
    assert (second.text, second.etag) == (first.text, first.etag)
    write_memory(root, "m1", "project", "a different line now", date="2026-03-01")
    index = (root / "MEMORY.md").read_text().replace(LONG.replace("archive", "m1"), "a different line now")
    (root / "MEMORY.md").write_text(index)
    third = build(root, "s", MapSettings(), today=TODAY)
    assert third.state == "rewoven" and third.etag != first.etag and "a different line now" in third.text


@pytest.mark.parametrize(
    "header",
    [
        "Map as of 2026-11-30",
        "Updated at 09:15",
        "Good morning, today's map",
        "Session id: 42",
        "{date}",
        "$(date)",
        "Built Monday",
        "There are 40 memories here",
    ],
)
def test_a_header_that_ticks_is_refused_at_build_time(header: str) -> None:
    with pytest.raises(ConfigError, match=r"\[prefill\] header contains"):
        header_text(MapSettings(header=header), "s")


def test_a_steady_header_is_fine() -> None:
    assert header_text(MapSettings(header="What you remember. Open a memory before you rely on it."), "s")


def test_over_budget_warns_in_json_only(tmp_path: Path) -> None:
    root = store_with(tmp_path, n=6)
    block = build(
        root, "s", MapSettings(window_tokens=2600, budget_fraction=0.05, hard_fraction=0.9), today=TODAY
    )
    assert block.state == "over-budget" and block.warning.startswith("the map is ~")
    assert "budget" not in block.text.split("\n", 2)[1]  # no banner in the text
    assert "- [m5](m5.md)" in block.text


def test_over_the_hard_limit_a_sector_map_not_a_truncated_list(tmp_path: Path) -> None:
    root = store_with(tmp_path, n=6)
    block = build(root, "s", MapSettings(window_tokens=600, hard_fraction=0.2), today=TODAY)
    assert block.state == "sectors"
    assert "This is NOT the full map: the index names 7 memories" in block.text
    assert "- People (1): Mika" in block.text and "- Infra (6): m0; m1; m2; …" in block.text
    assert "(m0.md)" not in block.text


def test_missing_store_says_missing_not_empty(tmp_path: Path) -> None:
    block = build(tmp_path / "gone", "gone", MapSettings(), today=TODAY)
    assert block.state == "missing" and block.exit_code == 1
    assert "MISSING, not empty" in block.text and block.text.startswith("<<<KURA-MAP store=gone>>>")


def test_stale_map_is_never_served_as_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = store_with(tmp_path)
    build(root, "s", MapSettings(), today=TODAY)
    write_memory(root, "m0", "project", "changed", date="2026-03-01")
    monkeypatch.setattr(pf, "MAX_QUICK_PARSE", 0)
    block = build(root, "s", MapSettings(), today=TODAY)
    assert block.state == "stale" and block.exit_code == 2
    assert "(This map was not re-woven: it is MEMORY.md as written.)" in block.text
    assert LONG.replace("archive", "m0") in block.text  # the canonical line, not an old cloth


def test_a_new_day_re_weaves(tmp_path: Path) -> None:
    root = store_with(tmp_path)
    build(root, "s", MapSettings(), today=TODAY)
    assert build(root, "s", MapSettings(), today=TODAY + dt.timedelta(days=1)).state == "rewoven"


def test_cli_prefill_text_and_json(cli: Cli, tmp_path: Path) -> None:
    root = store_with(tmp_path)
    text = cli("-s", str(root), "prefill")
    assert text.code == 0 and text.out.startswith("<<<KURA-MAP store=s>>>")
    data = json.loads(cli("-s", str(root), "prefill", "--json").out)
    assert data["state"] == "current" and data["text"] == text.out and data["etag"].startswith('"')
    gone = cli("-s", str(tmp_path / "nope"), "prefill")
    assert gone.code == 1 and "MISSING" in gone.out


def test_cli_weave_exit_codes(cli: Cli, tmp_path: Path, sample_copy: Callable[[Path], Path]) -> None:
    sample = sample_copy(tmp_path / "sample-store")  # a private copy: no test writes the checkout's
    first = cli("-s", str(sample), "weave", "--no-model")
    assert first.code in (0, 2) and "sample-store map" in first.out
    assert cli("-s", str(sample), "weave", "--no-model").code == 2


def test_the_sector_map_comes_from_the_weave_when_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = store_with(tmp_path, n=6)
    settings = MapSettings(window_tokens=600, hard_fraction=0.2)
    first = build(root, "s", settings, today=TODAY)
    monkeypatch.setattr(pf, "sector_map", lambda index: (_ for _ in ()).throw(AssertionError("re-parsed")))
    second = build(root, "s", settings, today=TODAY)
    assert second.state == "sectors" and second.text == first.text


def test_far_over_the_limit_only_the_index_is_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = store_with(tmp_path, n=40)
    settings = MapSettings(window_tokens=400, hard_fraction=0.25)
    first = build(root, "s", settings, today=TODAY)
    assert first.state == "sectors"
    write_memory(root, "m3", "user", "now pinned and long " * 5, date="2026-03-01")
    monkeypatch.setattr(
        record, "stamp_files", lambda root: (_ for _ in ()).throw(AssertionError("walked the files"))
    )
    second = build(root, "s", settings, today=TODAY)
    assert second.state == "sectors" and second.text == first.text
    write_memory(root, "n1", "project", "newly added", date="2026-03-01")
    (root / "MEMORY.md").write_text(
        (root / "MEMORY.md").read_text() + "## Extra\n- [n1](n1.md) — newly added\n"
    )
    monkeypatch.undo()
    third = build(root, "s", settings, today=TODAY)
    assert third.state == "sectors" and third.text != first.text


@pytest.mark.parametrize("name", ["now", "standup-today", "monday"])
def test_a_store_named_like_a_time_word_still_gets_its_map(tmp_path: Path, name: str) -> None:
    store = make_store(tmp_path / name, [("a", "user", "fine", "2026-03-01")])
    assert build(store.root, name, MapSettings(), today=TODAY).state == "rewoven"


def test_a_stale_index_that_is_not_utf8_is_still_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = store_with(tmp_path)
    (root / "MEMORY.md").write_bytes((root / "MEMORY.md").read_bytes() + b"- [caf\xe9](m0.md) \xe9\n")
    monkeypatch.setattr(pf, "MAX_QUICK_PARSE", 0)
    block = build(root, "s", MapSettings(), today=TODAY)
    assert block.state == "stale" and "- [Mika](mika.md) — Mika leads" in block.text


def test_a_partly_model_woven_map_is_current_for_prefill_not_for_weave(
    tmp_path: Path, model_server: ModelServer
) -> None:
    from kura.config import ModelConfig
    from kura.map.weave import weave
    from kura.store.store import Store

    root = store_with(tmp_path)
    scribe = ModelConfig(role="scribe", url=model_server.url, model="m")
    model_server.replies = ["m0 on slow disk hdd0, 8 TB"]
    assert build(root, "s", MapSettings(), today=TODAY, scribe=scribe).state == "rewoven"  # no model call
    assert model_server.requests == []
    assert build(root, "s", MapSettings(), today=TODAY, scribe=scribe).state == "current"
    woven = weave(Store(root, name="s"), MapSettings(), today=TODAY, scribe=scribe)
    assert woven is not None and woven.model_calls == 3  # weave finishes what prefill skipped
    assert build(root, "s", MapSettings(), today=TODAY).state == "rewoven"  # scribe gone from the config
