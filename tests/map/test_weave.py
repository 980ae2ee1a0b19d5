"""The weave: three layers, honest ages, the budget ladder, and the postcondition."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ModelServer, make_store, write_memory

from kura.config import ModelConfig
from kura.errors import StoreError
from kura.files.memory_index import parse_index
from kura.map.prefill import MapSettings
from kura.map.weave import weave
from kura.store import catalog
from kura.store.store import Store

TODAY = dt.date(2026, 11, 30)
LONG = "the archive lives on the slow disk (hdd0, 8 TB) because the fast NVMe burns write endurance; the fast one stays scratch for builds"
OLD = "2026-03-01"


def commit_all(root: Path) -> None:
    """A git repository of the store, everything committed on 2026-02-01."""
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-02-01T12:00:00",
        "GIT_COMMITTER_DATE": "2026-02-01T12:00:00",
    }
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)


def lines_of(text: str) -> dict[str, str]:
    return {ln.slugs[0]: ln.text for ln in parse_index(text).lines if ln.kind == "entry"}


def test_every_layer(tmp_path: Path) -> None:
    store = make_store(
        tmp_path / "s",
        [
            ("rule", "feedback", LONG.replace("archive", "rule"), OLD),
            ("person", "user", LONG.replace("archive", "person"), OLD),
            ("recent", "project", LONG.replace("archive", "recent"), "2026-11-25"),
            ("old", "project", LONG, OLD),
            ("short", "reference", "docs live in docs/", OLD),
        ],
        extra_index="## Section\n<!-- a comment -->\nSome prose.\n- Pair: [old](old.md) · [short](short.md)\n",
    )
    woven = weave(store, MapSettings(), today=TODAY)
    assert woven is not None and woven.written
    got = lines_of(woven.text)
    index = lines_of((store.root / "MEMORY.md").read_text())
    assert got["rule"] == index["rule"] and got["person"] == index["person"]  # pinned
    assert got["recent"] == index["recent"]  # fresh
    assert got["short"] == index["short"]  # already short
    assert got["old"] != index["old"] and got["old"].startswith("- [old](old.md) — ")
    assert "8 TB" in got["old"] and "hdd0" in got["old"]
    assert (
        "## Section\n<!-- a comment -->\nSome prose.\n- Pair: [old](old.md) · [short](short.md)\n"
        in woven.text
    )
    assert woven.layers == {"other": 5, "grouped": 1, "pinned": 2, "fresh": 1, "trigger": 2}


def test_git_dates_and_the_edit_in_progress(tmp_path: Path) -> None:
    store = make_store(
        tmp_path / "s", [("a", "project", LONG, None), ("b", "project", LONG.replace("archive", "b"), None)]
    )
    commit_all(store.root)
    woven = weave(store, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers["trigger"] == 2  # committed in February: not fresh
    (store.root / "b.md").write_text((store.root / "b.md").read_text() + "edited\n")
    woven = weave(store, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers == {"other": 2, "trigger": 1, "fresh": 1}


def test_bulk_copied_mtimes_are_not_freshness(tmp_path: Path) -> None:
    memories = [(f"m{i:02d}", "project", LONG.replace("archive", f"thing{i}"), None) for i in range(20)]
    store = make_store(tmp_path / "s", memories)
    now = time.time()
    for i in range(20):
        os.utime(store.root / f"m{i:02d}.md", (now, now + i * 0.01))  # one copy, one moment
    woven = weave(store, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers.get("fresh", 0) == 0
    spread = [(f"n{i:02d}", "project", LONG.replace("archive", f"x{i}"), None) for i in range(20)]
    real = make_store(tmp_path / "r", spread)
    for i in range(20):
        os.utime(real.root / f"n{i:02d}.md", (now, now - i * 86400))  # written one a day
    woven = weave(real, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers["fresh"] == 14 and woven.notes == []


def test_a_small_store_written_by_hand_today_has_no_known_age(tmp_path: Path) -> None:
    """The seed's rule as written: three undated files of one day, outside git, look
    exactly like a copy of an old store, so none is fresh, and the weave says why."""
    store = make_store(tmp_path / "s", [(f"m{i}", "project", LONG, None) for i in range(3)])
    woven = weave(store, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers.get("fresh", 0) == 0
    assert woven.notes[0].startswith("3 memories have no date of their own and share one file date")
    dated = make_store(
        tmp_path / "d", [(f"m{i}", "project", LONG, dt.date.today().isoformat()) for i in range(3)]
    )
    woven = weave(dated, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers["fresh"] == 3 and woven.notes == []


def test_a_written_date_beats_a_copy(tmp_path: Path) -> None:
    store = make_store(
        tmp_path / "s", [(f"m{i:02d}", "project", LONG.replace("archive", f"m{i}"), OLD) for i in range(12)]
    )
    woven = weave(store, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers["trigger"] == 12


def test_budget_ladder_shortens_the_fresh_window_never_drops_a_line(tmp_path: Path) -> None:
    memories = [
        (
            f"m{i}",
            "project",
            LONG.replace("archive", f"m{i}"),
            (TODAY - dt.timedelta(days=i * 2 + 1)).isoformat(),
        )
        for i in range(8)
    ]
    store = make_store(tmp_path / "s", memories)
    roomy = weave(store, MapSettings(window_tokens=100_000), today=TODAY, write=False)
    assert roomy is not None and (roomy.fresh_days, roomy.layers["fresh"]) == (14, 7)
    tight = weave(store, MapSettings(window_tokens=roomy.tokens * 20 - 400), today=TODAY, write=False)
    assert tight is not None and tight.fresh_days in (7, 3, 1, 0) and not tight.over_budget
    assert list(lines_of(tight.text)) == [f"m{i}" for i in range(8)]
    hopeless = weave(store, MapSettings(window_tokens=200), today=TODAY, write=False)
    assert hopeless is not None and hopeless.over_budget and hopeless.layers.get("fresh", 0) == 0
    assert list(lines_of(hopeless.text)) == [f"m{i}" for i in range(8)]
    assert (
        hopeless.notes[0].startswith("no setting brings the map within budget")
        and "trigger ~" in hopeless.notes[0]
    )


def test_postcondition_refuses_to_write_a_map_that_loses_a_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store(tmp_path / "s", [("a", "user", "one", OLD), ("b", "user", "two", OLD)])
    monkeypatch.setattr(
        "kura.map.weave._cloth", lambda index, lines: "\n".join(t for _, t in lines if "(b.md)" not in t)
    )
    with pytest.raises(StoreError, match=r"lost: \['b'\]; invented: none.*nothing was written"):
        weave(store, MapSettings(), today=TODAY)
    assert not (store.root / ".kura" / "map.md").exists()


def test_unchanged_cloth_is_not_rewritten_and_backups_are_kept(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", LONG, OLD)])
    first = weave(store, MapSettings(), today=TODAY)
    cloth = store.root / ".kura" / "map.md"
    stamp = cloth.stat().st_mtime_ns
    second = weave(store, MapSettings(), today=TODAY)
    assert first is not None and second is not None and first.written and not second.written
    assert cloth.stat().st_mtime_ns == stamp
    write_memory(store.root, "b", "user", "new one", date=OLD)
    (store.root / "MEMORY.md").write_text((store.root / "MEMORY.md").read_text() + "- [b](b.md) — new one\n")
    third = weave(store, MapSettings(), today=TODAY)
    assert third is not None and third.written
    assert (store.root / ".kura" / "map.md.1").read_text() == first.text


def test_work_is_proportional_to_change(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [(f"m{i}", "project", LONG, OLD) for i in range(30)])
    assert weave(store, MapSettings(), today=TODAY).parsed == 30  # type: ignore[union-attr]
    assert weave(store, MapSettings(), today=TODAY).parsed == 0  # type: ignore[union-attr]
    write_memory(store.root, "m3", "project", LONG + " (changed)", date=OLD)
    assert weave(store, MapSettings(), today=TODAY).parsed == 1  # type: ignore[union-attr]


def test_scribe_writes_grounded_triggers_once(tmp_path: Path, model_server: ModelServer) -> None:
    store = make_store(
        tmp_path / "s",
        [("a", "project", LONG, OLD), ("b", "project", LONG.replace("archive", "backup"), OLD)],
    )
    model_server.replies = [
        "archive on slow disk hdd0, 8 TB; NVMe stays scratch",
        "backup on slow disk, 16 TB",
    ]
    scribe = ModelConfig(role="scribe", url=model_server.url, model="m")
    woven = weave(store, MapSettings(), today=TODAY, scribe=scribe)
    assert woven is not None and woven.model_calls == 2
    got = lines_of(woven.text)
    assert got["a"] == "- [a](a.md) — archive on slow disk hdd0, 8 TB; NVMe stays scratch"
    assert "16 TB" not in got["b"] and "8 TB" in got["b"]  # ungrounded: the trimmer's version
    assert model_server.requests[0]["model"] == "m"
    unchanged = weave(store, MapSettings(), today=TODAY, scribe=scribe)
    assert unchanged is not None and not unchanged.written and unchanged.model_calls == 0
    model_server.replies = ["backup on the slow disk"]
    again = weave(store, MapSettings(), today=TODAY, scribe=scribe, force=True)
    assert again is not None and again.model_calls == 1 and len(model_server.requests) == 3  # only b retried
    assert lines_of(again.text)["b"] == "- [b](b.md) — backup on the slow disk"
    steady = weave(store, MapSettings(), today=TODAY, scribe=scribe, force=True)
    assert steady is not None and steady.model_calls == 0


def test_a_model_that_is_down_does_not_stop_the_weave(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", LONG, OLD)])
    scribe = ModelConfig(role="scribe", url="http://127.0.0.1:9/v1", model="m", timeout=1)
    woven = weave(store, MapSettings(), today=TODAY, scribe=scribe)
    assert woven is not None and "8 TB" in woven.text


def test_catalog_survives_deletion_of_state(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", LONG, OLD)])
    first = weave(store, MapSettings(), today=TODAY)
    for path in sorted((store.root / ".kura").iterdir()):
        if path.is_file():
            path.unlink()
    again = weave(store, MapSettings(), today=TODAY)
    assert first is not None and again is not None and again.text == first.text and again.parsed == 1


def test_read_only_store_still_weaves(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", LONG, OLD)])
    db = catalog.connect(Store(tmp_path / "nowhere-writable" / "x"))
    assert db.execute("SELECT count(*) FROM notes").fetchone() == (0,)
    woven = weave(store, MapSettings(), today=TODAY, write=False)
    assert woven is not None and not woven.written


def test_a_dated_body_line_is_the_memorys_age(tmp_path: Path) -> None:
    store = make_store(
        tmp_path / "s", [(f"m{i:02d}", "project", LONG.replace("archive", f"m{i}"), None) for i in range(12)]
    )
    body_dated = store.root / "m00.md"
    body_dated.write_text(body_dated.read_text() + "\n**Updated:** 2026-11-25\n")
    prose_dated = store.root / "m01.md"
    prose_dated.write_text(prose_dated.read_text() + "\nThe outage on 2026-11-27 taught us this.\n")
    woven = weave(store, MapSettings(), today=TODAY)
    assert woven is not None
    got, index = lines_of(woven.text), lines_of((store.root / "MEMORY.md").read_text())
    assert got["m00"] == index["m00"]  # dated five days ago: fresh, kept in full
    assert got["m01"] != index["m01"]  # an event date in prose is not the memory's age


def test_edits_in_progress_in_git_are_fresh_even_in_a_burst(tmp_path: Path) -> None:
    store = make_store(
        tmp_path / "s", [(f"m{i:02d}", "project", LONG.replace("archive", f"m{i}"), None) for i in range(12)]
    )
    commit_all(store.root)
    for i in range(12):  # like `sed -i` over every file: one burst of real edits
        path = store.root / f"m{i:02d}.md"
        path.write_text(path.read_text() + "edited\n")
    woven = weave(store, MapSettings(), today=dt.date.today())
    assert woven is not None and woven.layers["fresh"] == 12


def test_a_new_commit_makes_the_stored_map_stale(tmp_path: Path) -> None:
    from kura.map.prefill import build

    store = make_store(tmp_path / "s", [("a", "project", LONG, None)])
    commit_all(store.root)
    assert build(store.root, "s", MapSettings()).state == "rewoven"
    assert build(store.root, "s", MapSettings()).state == "current"
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--amend", "-m", "y"],
        cwd=store.root,
        check=True,
    )
    assert build(store.root, "s", MapSettings()).state == "rewoven"  # the commit date moved to today


def test_moving_a_folder_is_a_change(tmp_path: Path) -> None:
    from kura.map.prefill import build

    store = make_store(tmp_path / "s", [("a", "project", LONG, OLD)])
    (store.root / "sub").mkdir()
    write_memory(store.root / "sub", "x", "project", LONG, date=OLD)
    build(store.root, "s", MapSettings(), today=TODAY)
    assert build(store.root, "s", MapSettings(), today=TODAY).state == "current"
    (store.root / "sub").rename(store.root / "other")
    assert build(store.root, "s", MapSettings(), today=TODAY).state == "rewoven"


def test_a_shared_cloth_path_never_serves_another_stores_map(tmp_path: Path) -> None:
    from kura.map.prefill import build

    shared = MapSettings(cloth_path=str(tmp_path / "shared-map.md"))
    a = make_store(tmp_path / "a", [("only-in-a", "user", "a's memory", OLD)])
    b = make_store(tmp_path / "b", [("only-in-b", "user", "b's memory", OLD)])
    weave(a, shared, today=TODAY)
    weave(b, shared, today=TODAY)
    block = build(a.root, "a", shared, today=TODAY)
    assert "only-in-a" in block.text and "only-in-b" not in block.text and block.state == "rewoven"


def test_a_store_whose_state_cannot_be_written_says_so(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "project", LONG, OLD)])
    shutil.rmtree(store.root / ".kura", ignore_errors=True)
    (store.root / ".kura").write_text("not a folder")  # as unwritable as a read-only mount
    woven = weave(store, MapSettings(), today=TODAY)
    assert woven is not None and not woven.written and woven.error.startswith("could not save the map")
    assert "8 TB" in woven.text


def test_the_layering_is_reused_until_the_index_or_a_pin_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kura.map.layers

    store = make_store(
        tmp_path / "s", [("a", "project", LONG, OLD), ("b", "project", LONG.replace("archive", "b"), OLD)]
    )
    first = weave(store, MapSettings(), today=TODAY)
    real_parse = kura.map.layers.parse_index
    monkeypatch.setattr(
        kura.map.layers, "parse_index", lambda text: (_ for _ in ()).throw(AssertionError("re-parsed"))
    )
    write_memory(store.root, "a", "project", LONG, date="2026-11-29")  # now fresh; same type
    second = weave(store, MapSettings(), today=TODAY)
    assert first is not None and second is not None
    assert lines_of(second.text)["a"] == lines_of((store.root / "MEMORY.md").read_text())["a"]
    monkeypatch.setattr(kura.map.layers, "parse_index", real_parse)
    write_memory(store.root, "b", "user", LONG.replace("archive", "b"), date=OLD)  # now pinned
    third = weave(store, MapSettings(), today=TODAY)
    assert third is not None and third.layers.get("pinned") == 1
