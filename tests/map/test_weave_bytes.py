"""The woven map, byte for byte, pinned: a faster weave must weave the same cloth.

The hashes are of what the weave before the speed work wrote (commit 9542817), for the
sample store and for a generated store of the shape bench/map_scale.py measures (one-fact
lines, four types, code, dead links, dates in some frontmatter), with the day and every
file time fixed so the answer cannot drift with the calendar. Both cold (nothing in
``.kura/``) and warm (the catalog and the trigger ledger reused after one file changed).
The sample store's layers and summary were read again when an accented letter became half
a token (``kura.text.tokens``): its one line with an "ó" costs 47 tokens, not 48; the cloth
itself is the same bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from kura.map import layer_cache
from kura.map.prefill import MapSettings
from kura.map.weave import weave
from kura.store.store import Store

TODAY = dt.date(2026, 6, 30)
NOON = dt.datetime(2026, 6, 30, 12, tzinfo=dt.UTC).timestamp()
SAMPLE = Path(__file__).resolve().parents[2] / "sample-store"
WORDS = (
    "deploy staging postgres redis caddy hetzner migration rollback incident runbook oncall "
    "pytest flaky fixture coverage ruff mypy uv lockfile docker compose nightly backup restore "
    "archive disk nvme latency queue worker retry timeout sla ticket routing webhook token"
).split()
NAMES = ("Mika", "Tomasz", "Aiko", "Sam", "Ferrydesk", "GitHub", "Grafana", "Sentry")
TYPES = ("user", "feedback", "project", "project", "reference")
SUMMARY = ("tokens", "budget", "fresh_days", "over_budget", "weight", "layers", "notes", "folds", "floor")


def generated(root: Path, n: int = 700) -> None:
    rng = random.Random(11)
    root.mkdir()
    index = ["# Memory index", ""]
    for section in range(n // 100):
        index += ["", f"## Area {section}", ""]
        for i in range(section * 100, (section + 1) * 100):
            slug, w = f"m{i:05d}", rng.sample(WORDS, 9)
            text = (
                f"{rng.choice(NAMES)} {w[0]} {w[1]} on port {8000 + i % 90} uses {w[2]} ({rng.randint(2, 64)} GB) "
                f"because {w[3]} {w[4]} {w[5]}; {w[6]} stays {w[7]}"
                + (" — never on Fridays" if i % 7 == 0 else "")
            )
            dated = f"created: 2026-{rng.randint(1, 6):02d}-{rng.randint(1, 28):02d}\n" if i % 3 == 0 else ""
            code = f"\n```sh\nif [[ -d /srv/{slug} ]]; then ls; fi\n```\n" if i % 5 == 0 else ""
            dead = f"See also: [[m{i}-old]]\n" if i % 50 == 0 else ""
            (root / f"{slug}.md").write_text(
                f"---\nname: Memory {i}\ndescription: {text}\ntype: {TYPES[i % 5]}\n{dated}---\n\n{text}.\n\n"
                f"**Why:** it matters.\n\nRelated: [[m{(i + 1) % n:05d}]]\n{code}{dead}"
            )
            index.append(f"- [Memory {i}]({slug}.md) — {text}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


def pinned_times(root: Path) -> None:
    """Every file a fixed time before TODAY: a spread of ages, the same on any day it runs."""
    for n, path in enumerate(sorted(root.rglob("*.md"))):
        stamp = NOON - (n * 7919 % 400) * 3600 * 7
        os.utime(path, (stamp, stamp))


def cloth(root: Path, settings: MapSettings) -> dict[str, str]:
    woven = weave(Store(root), settings, today=TODAY)
    assert woven is not None and not woven.error
    state = root / ".kura"
    layers = as_pinned(json.loads((state / "layers.json").read_text())["columns"], root / "MEMORY.md")
    recorded = json.loads((state / "map.json").read_text())
    return {
        "map.md": hashlib.sha256((state / "map.md").read_bytes()).hexdigest(),
        "sectors.md": hashlib.sha256((state / "sectors.md").read_bytes()).hexdigest(),
        "layers": hashlib.sha256(json.dumps(layers, sort_keys=True).encode()).hexdigest(),
        "summary": hashlib.sha256(
            json.dumps({k: recorded[k] for k in SUMMARY}, sort_keys=True).encode()
        ).hexdigest(),
    }


def as_pinned(columns: dict[str, Any], index: Path) -> dict[str, list[object]]:
    """The cache's columns as the pinned hashes saw them (layer cache version 1): each line's
    text, which versions 2 and 3 take from the index instead of storing, and every column a
    list with every value spelled out (version 3 packs them, ``kura.map.layer_cache``)."""
    text = index.read_text().split("\n")[:-1]
    lines = layer_cache.unpack(columns, text, set(columns["slug"].split("\n")))
    assert lines is not None
    spelled: dict[str, list[object]] = {
        name: [getattr(line, name) for line in lines] for name in ("layer", "slug", "kind", "head", "short")
    }
    spelled["slugs"] = [list(line.slugs) for line in lines]
    spelled.update(
        (name, [line.cost[i] for line in lines]) for i, name in enumerate(("full", "folded", "bare"))
    )
    return {**spelled, "text": text}


def edit_one(root: Path) -> None:
    path = sorted(root.glob("*.md"))[3]
    path.write_text(path.read_text() + "\nUpdated: 2026-06-29\n")
    os.utime(path, (NOON - 3600, NOON - 3600))


@pytest.mark.parametrize("window", [1_000_000, 131072, 4000])
def test_the_sample_store_weaves_the_cloth_it_wove_before(tmp_path: Path, window: int) -> None:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
    pinned_times(root)
    settings = MapSettings(window_tokens=window)
    cold = cloth(root, settings)
    edit_one(root)
    warm = cloth(root, settings)
    assert (cold, warm) == PINNED[("sample", window)]


@pytest.mark.parametrize("window", [1_000_000, 131072, 4000])
def test_a_generated_store_weaves_the_cloth_it_wove_before(tmp_path: Path, window: int) -> None:
    root = tmp_path / "generated"  # the store name is in the map header
    generated(root)
    pinned_times(root)
    settings = MapSettings(window_tokens=window)
    cold = cloth(root, settings)
    edit_one(root)
    warm = cloth(root, settings)
    assert (cold, warm) == PINNED[("generated", window)]


PINNED: dict[tuple[str, int], tuple[dict[str, str], dict[str, str]]] = {  # read off commit 9542817
    ("generated", 4000): (
        {
            "layers": "a86c85b240c916a84d38129e9c84eda20d2d213148a4a9ac90dfff4debec4f36",
            "map.md": "5bbcbeff5b4c1c34a2335cfaabc9360a4355616622b18b59e4a30c1c616dd808",
            "sectors.md": "cbeeedf5caee84871fdc4fd967fc3f41f7471404ebe20115dbef97f71b922d5b",
            "summary": "2464985cc6863191bdcfda409a3b532eda1e6cece736c9f9094e00b892e8312a",
        },
        {
            "layers": "a86c85b240c916a84d38129e9c84eda20d2d213148a4a9ac90dfff4debec4f36",
            "map.md": "5bbcbeff5b4c1c34a2335cfaabc9360a4355616622b18b59e4a30c1c616dd808",
            "sectors.md": "cbeeedf5caee84871fdc4fd967fc3f41f7471404ebe20115dbef97f71b922d5b",
            "summary": "2464985cc6863191bdcfda409a3b532eda1e6cece736c9f9094e00b892e8312a",
        },
    ),
    ("generated", 131072): (
        {
            "layers": "a86c85b240c916a84d38129e9c84eda20d2d213148a4a9ac90dfff4debec4f36",
            "map.md": "5bbcbeff5b4c1c34a2335cfaabc9360a4355616622b18b59e4a30c1c616dd808",
            "sectors.md": "cbeeedf5caee84871fdc4fd967fc3f41f7471404ebe20115dbef97f71b922d5b",
            "summary": "0487d80f91e1fccd760c10205b072881a15569996300aef4c20e488683918672",
        },
        {
            "layers": "a86c85b240c916a84d38129e9c84eda20d2d213148a4a9ac90dfff4debec4f36",
            "map.md": "5bbcbeff5b4c1c34a2335cfaabc9360a4355616622b18b59e4a30c1c616dd808",
            "sectors.md": "cbeeedf5caee84871fdc4fd967fc3f41f7471404ebe20115dbef97f71b922d5b",
            "summary": "0487d80f91e1fccd760c10205b072881a15569996300aef4c20e488683918672",
        },
    ),
    ("generated", 1000000): (
        {
            "layers": "a86c85b240c916a84d38129e9c84eda20d2d213148a4a9ac90dfff4debec4f36",
            "map.md": "35b2e82aefbc22c884154b04e7abf3b4163f923e3e2c82ff87b26ca303e0fb1d",
            "sectors.md": "cbeeedf5caee84871fdc4fd967fc3f41f7471404ebe20115dbef97f71b922d5b",
            "summary": "6760f062083a6bee00af507f748188d6cc586047be652f91ad4d46bbb6542c83",
        },
        {
            "layers": "a86c85b240c916a84d38129e9c84eda20d2d213148a4a9ac90dfff4debec4f36",
            "map.md": "359f3818a6b8ed741fa6357c1489eb9412e797a12fbaeb04dd31c1813bd26911",
            "sectors.md": "cbeeedf5caee84871fdc4fd967fc3f41f7471404ebe20115dbef97f71b922d5b",
            "summary": "2ae6f4dce4885fc13b7ca94704c3449654054f2fc6044264d209122f4ec9c356",
        },
    ),
    ("sample", 4000): (
        {
            "layers": "d80c718b193822a748b8c7978a69e4404098383bcf980b0255506324817ff53c",
            "map.md": "b8f5a4db42b17d4ed9d9bd6b0c445d3a01feaaca350e2c85c3a7ab492c560866",
            "sectors.md": "b65b56e1b100a946ccb29261d283afca23839d0052480167f3e5a74e3057c2f4",
            "summary": "ca2340afc77c648ca9d6169508eace8c607c34cbabb116202083d01b4ded9fcc",
        },
        {
            "layers": "d80c718b193822a748b8c7978a69e4404098383bcf980b0255506324817ff53c",
            "map.md": "b8f5a4db42b17d4ed9d9bd6b0c445d3a01feaaca350e2c85c3a7ab492c560866",
            "sectors.md": "b65b56e1b100a946ccb29261d283afca23839d0052480167f3e5a74e3057c2f4",
            "summary": "ca2340afc77c648ca9d6169508eace8c607c34cbabb116202083d01b4ded9fcc",
        },
    ),
    ("sample", 131072): (
        {
            "layers": "d80c718b193822a748b8c7978a69e4404098383bcf980b0255506324817ff53c",
            "map.md": "59c432c65ee1e7c4ed049a5bec8071e489c0b0c46b7a550d6567d8a8cc0a178d",
            "sectors.md": "b65b56e1b100a946ccb29261d283afca23839d0052480167f3e5a74e3057c2f4",
            "summary": "332a96a87104b26db23fd584d3d222a5073282915cf7e31c6eaa61fe0c60bc01",
        },
        {
            "layers": "d80c718b193822a748b8c7978a69e4404098383bcf980b0255506324817ff53c",
            "map.md": "59c432c65ee1e7c4ed049a5bec8071e489c0b0c46b7a550d6567d8a8cc0a178d",
            "sectors.md": "b65b56e1b100a946ccb29261d283afca23839d0052480167f3e5a74e3057c2f4",
            "summary": "332a96a87104b26db23fd584d3d222a5073282915cf7e31c6eaa61fe0c60bc01",
        },
    ),
    ("sample", 1000000): (
        {
            "layers": "d80c718b193822a748b8c7978a69e4404098383bcf980b0255506324817ff53c",
            "map.md": "59c432c65ee1e7c4ed049a5bec8071e489c0b0c46b7a550d6567d8a8cc0a178d",
            "sectors.md": "b65b56e1b100a946ccb29261d283afca23839d0052480167f3e5a74e3057c2f4",
            "summary": "cd3a3465eabd9b77c1376a6b292892c4ce4edb8959bcabf209ddf9fd04815f9c",
        },
        {
            "layers": "d80c718b193822a748b8c7978a69e4404098383bcf980b0255506324817ff53c",
            "map.md": "59c432c65ee1e7c4ed049a5bec8071e489c0b0c46b7a550d6567d8a8cc0a178d",
            "sectors.md": "b65b56e1b100a946ccb29261d283afca23839d0052480167f3e5a74e3057c2f4",
            "summary": "cd3a3465eabd9b77c1376a6b292892c4ce4edb8959bcabf209ddf9fd04815f9c",
        },
    ),
}
