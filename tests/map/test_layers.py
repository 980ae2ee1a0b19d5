"""The layer cache (``kura.map.layers``): what a weave after one edit reads instead of laying
out the index again. Since version 2 it stores no line of the index (each line's text is taken
from the index it is keyed to); version 3 packs the columns (``kura.map.layer_cache``). Read
back, it must give exactly the lines a fresh layering makes, for every shape of index."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_weave_bytes import TODAY, generated, pinned_times

from kura.map import layers
from kura.map.prefill import MapSettings
from kura.map.weave import _read_index, weave
from kura.store import catalog
from kura.store.store import Store

SETTINGS = MapSettings(window_tokens=4000)
EXTRA = (
    "\n## Odd lines\n\n<!-- a comment\nthat spans -->\n```\n- [Fenced](m00001.md) — in a fence\n```\n"
    "- [Missing](gone.md) — a dead link\n- [A](m00002.md), [B](m00003.md) — a grouped line\n  \n"
)


def _store(tmp_path: Path, shape: str) -> Store:
    root = tmp_path / "store"
    generated(root, 300)
    index = root / "MEMORY.md"
    text = index.read_text() + EXTRA
    if shape == "crlf":
        index.write_bytes(text.replace("\n", "\r\n").encode())
    elif shape == "mixed":  # some lines CRLF: nothing is converted, those lines keep their \r
        index.write_bytes(text.replace("\n", "\r\n", 40).encode())
    elif shape == "bom":
        index.write_bytes("\ufeff".encode() + text.encode())
    elif shape == "no final newline":
        index.write_text(text.rstrip("\n"))
    else:
        index.write_text(text)
    pinned_times(root)
    return Store(root)


def _both(store: Store) -> tuple[layers.Layering | None, layers.Layering]:
    """(the cache read back, a fresh layering) for the store as it is now."""
    data, (seen, digest) = _read_index(store)
    db = catalog.connect(store)
    try:
        entries = catalog.entries(store)
        key = layers._key(digest, entries, SETTINGS, None, seen)
        cached = layers._load(store.state_dir / layers.CACHE, key, data.decode("utf-8", "replace"), entries)
        fresh = layers.layering(None, db, data, entries, SETTINGS, scribe=None, max_calls=0, force=True)
    finally:
        db.close()
    return cached, fresh


@pytest.mark.parametrize("shape", ["lf", "crlf", "mixed", "bom", "no final newline"])
def test_the_cache_read_back_gives_the_lines_a_fresh_layering_makes(tmp_path: Path, shape: str) -> None:
    store = _store(tmp_path, shape)
    woven = weave(store, SETTINGS, today=TODAY)
    assert woven is not None and not woven.error
    cached, fresh = _both(store)
    assert cached is not None, "the weave saved no cache this index can use"
    assert cached.lines == fresh.lines and cached.sectors == fresh.sectors
    assert all(type(line) is layers.Layered and type(line.slugs) is tuple for line in cached.lines)
    kinds = {line.kind for line in fresh.lines}
    assert {"entry", "group", "comment", "prose", "blank", "heading"} <= kinds  # every kind went through
    edited = store.root / "m00004.md"
    edited.write_text(edited.read_text() + "\nedited\n")
    again = weave(store, SETTINGS, today=TODAY)  # one edit: the map comes from the cache
    redone = weave(store, SETTINGS, today=TODAY, force=True)
    assert again is not None and redone is not None and again.text == redone.text


def test_the_cache_holds_no_line_of_the_index_and_no_short_equal_to_its_line(tmp_path: Path) -> None:
    store = _store(tmp_path, "lf")
    assert weave(store, SETTINGS, today=TODAY) is not None
    stored = json.loads((store.state_dir / layers.CACHE).read_text())
    index = (store.root / "MEMORY.md").read_text()
    assert stored["version"] == 3 and "text" not in stored["columns"]
    shorts = stored["columns"]["short"].split("\n")
    assert "1" in stored["columns"]["same"]  # some lines' short is their own text, not stored
    assert stored["columns"]["same"].count("0") == len(shorts)
    assert all(short not in index.split("\n") for short in shorts)


DAMAGE: dict[str, tuple[str, Callable[[Any], object]]] = {
    "short a number": ("short", lambda _: 7),
    "short a list": ("short", lambda _: ["x"]),
    "short an object": ("short", lambda _: {"a": 1}),
    "an unknown layer letter": ("layer", lambda v: v[:-1] + "x"),
    "a layer short of a line": ("layer", lambda v: v[:-1]),
    "an unknown kind letter": ("kind", lambda v: "z" + v[1:]),
    "a short too few": ("same", lambda v: v.replace("1", "0", 1)),
    "a short too many": ("same", lambda v: v.replace("0", "1", 1)),
    "a slug short of a line": ("slug", lambda v: v.split("\n", 1)[1]),
    "links under a digit not ASCII": ("slugs", lambda _: {"\u00b2": ["m00001"]}),
    "links under a huge number": ("slugs", lambda _: {"9" * 5000: ["m00001"]}),
    "links past the last line": ("slugs", lambda _: {"99999": ["m00001"]}),
    "links that are a string": ("slugs", lambda _: {"1": "m00001"}),
    "links that are numbers": ("slugs", lambda _: {"1": [3]}),
    "a negative count": ("full", lambda v: [-1] * len(v)),
    "counts as text": ("bare", lambda v: [str(n) for n in v]),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_column_makes_the_weave_lay_out_the_index_again(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every column is checked as it is unpacked (``kura.map.layer_cache``): a wrong type, an
    unknown letter, a count that does not match the index's lines is a cache rebuilt, never
    a crash or a map made from it."""
    store = _store(tmp_path, "lf")
    assert weave(store, SETTINGS, today=TODAY) is not None
    path = store.state_dir / layers.CACHE
    stored = json.loads(path.read_text())
    column, spoil = DAMAGE[damage]
    stored["columns"][column] = spoil(stored["columns"][column])
    path.write_text(json.dumps(stored))
    cached, _ = _both(store)
    assert cached is None
    assert "layers.json" in capsys.readouterr().err  # said, and the next weave rebuilds it
    edited = store.root / "m00004.md"
    edited.write_text(edited.read_text() + "\nedited\n")
    again = weave(store, SETTINGS, today=TODAY)
    redone = weave(store, SETTINGS, today=TODAY, force=True)
    assert again is not None and redone is not None and again.text == redone.text


def test_a_version_1_cache_is_laid_out_again_not_read(tmp_path: Path) -> None:
    store = _store(tmp_path, "lf")
    assert weave(store, SETTINGS, today=TODAY) is not None
    path = store.state_dir / layers.CACHE
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "version": 1}))
    cached, _ = _both(store)
    assert cached is None
