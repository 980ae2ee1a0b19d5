"""A weave after a change reuses what did not change (the catalog's rows, the layer cache, the
trigger ledger) and must weave exactly the cloth a weave from nothing weaves: byte for byte,
with the same summary, after an edit, a type that turns pinned, a memory added, deleted,
renamed or retired, file dates moved, and the index edited by hand — in git and outside it.
Each step weaves the store in place (its ``.kura`` kept from the step before) and a copy of
it with no ``.kura`` at all, and compares."""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kura.map.prefill import MapSettings
from kura.map.weave import Woven, weave
from kura.store.store import Store

TODAY = dt.date(2026, 6, 30)
NOON = dt.datetime(2026, 6, 30, 12).timestamp()  # local noon: file days are local days
TYPES = ("user", "feedback", "project", "project", "reference", "project")
WORDS = (
    "deploy staging postgres redis caddy backup restore queue worker retry webhook token ferry pier".split()
)
JAPANESE = ("本番のバックアップは毎晩二時", "ステージングは db2 に移った", "デプロイは金曜にしない")
SUMMARY = ("text", "tokens", "fresh_days", "over_budget", "weight", "layers", "notes", "folds", "pinned")


def _memory(root: Path, i: int, rng: random.Random, *, kind: str | None = None, extra: str = "") -> str:
    """Write memory ``m{i}`` (a plain flat value with ": " in some, Japanese in some, a date in
    some); its index line."""
    slug, words = f"m{i:04d}", rng.sample(WORDS, 6)
    text = f"{words[0]} {words[1]} uses {words[2]} on port {8000 + i} because {words[3]} {words[4]}"
    text += f" — {JAPANESE[i % 3]}" if i % 4 == 0 else ""
    dated = f"updated: 2026-06-{rng.randint(1, 29):02d}\n" if i % 5 == 0 else ""
    note = "note: the value holds: a colon\n" if i % 6 == 0 else ""
    (root / f"{slug}.md").write_text(
        f"---\nname: Memory {i}\ndescription: {text}\ntype: {kind or TYPES[i % 6]}\n{dated}{note}{extra}---\n\n"
        f"{text}.\n\nRelated: [[m{(i + 1) % 120:04d}]]\n"
    )
    return f"- [Memory {i}]({slug}.md) — {text}"


def _store(root: Path) -> None:
    rng = random.Random(3)
    root.mkdir()
    lines = ["# Memory index", ""]
    for i in range(120):
        lines += ["", f"## Area {i // 40}", ""] if i % 40 == 0 else []
        lines.append(_memory(root, i, rng))
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
    for n, path in enumerate(sorted(root.glob("*.md"))):  # a spread of file days up to 40 days back
        stamp = NOON - (n * 7919 % 40) * 86400
        os.utime(path, (stamp, stamp))


def _index_edit(root: Path, change: Callable[[list[str]], list[str]]) -> None:
    index = root / "MEMORY.md"
    index.write_text("\n".join(change(index.read_text().split("\n")[:-1])) + "\n")


def _edit(root: Path) -> None:
    path = root / "m0007.md"
    path.write_text(path.read_text() + "\nOne more line.\n")


def _pinned_now(root: Path) -> None:
    path = root / "m0009.md"
    path.write_text(path.read_text().replace("type: project", "type: feedback"))


def _added(root: Path) -> None:
    line = _memory(root, 500, random.Random(9))
    _index_edit(root, lambda lines: [*lines[:10], line, *lines[10:]])


def _deleted(root: Path) -> None:
    (root / "m0011.md").unlink()  # its index line stays: it names nothing now
    (root / "m0012.md").unlink()
    _index_edit(root, lambda lines: [line for line in lines if "(m0012.md)" not in line])


def _renamed(root: Path) -> None:
    os.rename(root / "m0013.md", root / "renamed-13.md")
    _index_edit(root, lambda lines: [line.replace("(m0013.md)", "(renamed-13.md)") for line in lines])


def _retired(root: Path) -> None:
    path = root / "m0014.md"
    path.write_text(path.read_text().replace("---\n\n", "superseded_by: m0015\n---\n\n", 1))


def _dates_moved(root: Path) -> None:
    for n in range(20, 60, 3):  # made fresh, some of them today
        stamp = NOON - (n % 4) * 86400
        os.utime(root / f"m{n:04d}.md", (stamp, stamp))


def _index_by_hand(root: Path) -> None:
    def change(lines: list[str]) -> list[str]:
        entries = [i for i, line in enumerate(lines) if line.startswith("- [")]
        a, b = entries[3], entries[30]
        lines[a], lines[b] = lines[b], lines[a]  # two lines swapped
        lines[entries[5]] += " (checked by hand)"
        return [
            *lines[:20],
            "<!-- a note to myself",
            "- [Memory 1](m0001.md) — inside a comment",
            "-->",
            *lines[20:],
        ]

    _index_edit(root, change)


def _copied_back(root: Path) -> None:
    """A checkout or copy: every file of the store stamped with one day."""
    for path in root.glob("*.md"):
        os.utime(path, (NOON - 3 * 86400, NOON - 3 * 86400))


STEPS = [_edit, _pinned_now, _added, _deleted, _renamed, _retired, _dates_moved, _index_by_hand, _copied_back]


def _woven(root: Path, settings: MapSettings) -> dict[str, object]:
    woven = weave(Store(root), settings, today=TODAY)
    assert isinstance(woven, Woven) and not woven.error, woven
    cloth = (root / ".kura" / "map.md").read_bytes()
    assert cloth == woven.text.encode("utf-8")
    return {name: getattr(woven, name) for name in SUMMARY}


def _cold(root: Path, where: Path, settings: MapSettings) -> dict[str, object]:
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(root, where / root.name, ignore=shutil.ignore_patterns(".kura"))  # copy2: times kept
    return _woven(where / root.name, settings)


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-06-20T10:00:00",
        "GIT_COMMITTER_DATE": "2026-06-20T10:00:00",
    }
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


@pytest.mark.parametrize("in_git", [False, True])
@pytest.mark.parametrize("window", [1_000_000, 60_000])
def test_every_weave_after_a_change_weaves_the_cloth_a_weave_from_nothing_weaves(
    tmp_path: Path, in_git: bool, window: int
) -> None:
    root = tmp_path / "store"
    _store(root)
    if in_git:
        _git(root, "init", "-q")
        _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
        _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    settings = MapSettings(window_tokens=window)
    assert _woven(root, settings) == _cold(root, tmp_path / "cold", settings)
    windows = set()
    for step in STEPS:
        step(root)
        kept = _woven(root, settings)
        assert kept == _cold(root, tmp_path / "cold", settings), step.__name__
        windows.add(kept["fresh_days"])
    if window == 60_000:  # the budget bites: more than one fresh window was tried along the way
        assert len(windows) > 1


def test_kura_weave_after_an_edit_writes_the_map_kura_weave_writes_from_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    _store(root)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "KURA_HOME": str(home / "kura"),
    }

    def kura_weave(store: Path) -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "kura", "-s", str(store), "weave", "--no-model"],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode in (0, 2), done.stderr
        return (store / ".kura" / "map.md").read_bytes()

    kura_weave(root)
    for step in (_edit, _added, _renamed, _index_by_hand):
        step(root)
        kept = kura_weave(root)
        shutil.rmtree(tmp_path / "cold", ignore_errors=True)
        shutil.copytree(root, tmp_path / "cold" / "store", ignore=shutil.ignore_patterns(".kura"))
        assert kept == kura_weave(tmp_path / "cold" / "store"), step.__name__
