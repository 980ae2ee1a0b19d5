"""A move is a correction (issue 30): "We moved the app off Heroku to Fly.io last month" said
to an agent while the store holds "The app runs on Heroku" is drafted as that memory's
replacement, through a real ``kura distill run`` on a real-shaped Claude Code transcript, and
pouring the draft supersedes the old memory. Before, the sentence splitter cut the sentence
at "Fly." (no candidate at all) and the words alone called the pair "different"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_requests_and_not_facts import SID, configured, transcript

from kura.distill import drafts as dr
from kura.life import scratch as sc
from kura.store.store import Store

MOVES = [
    "We moved the app off Heroku to Fly.io last month.",
    "We switched the app from Heroku to Fly.io.",
    "Heads up: the app was migrated from Heroku to Fly.io in March.",
    "The app no longer runs on Heroku, it runs on Fly.io now.",
    "We replaced Heroku with Fly.io for the app.",
]
NOT_MOVES = [
    "We moved the meeting from Monday to Tuesday.",  # names nothing the memory says
    "We moved the CI runners off Heroku to GitHub Actions.",  # another subject moved
    "The app runs on Heroku, we checked the dashboard again today.",  # no move at all
]


def kura(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", *args]
    return subprocess.run(command, capture_output=True, text=True)


def hosted(tmp_path: Path, said: str) -> tuple[Store, Path, dict[str, object]]:
    store, journals, config = configured(tmp_path, "distiller-only")
    (store.root / "app-hosting.md").write_text(
        "---\nname: App hosting\ndescription: The app runs on Heroku\ntype: project\n---\n"
        "The app runs on Heroku.\n",
        encoding="utf-8",
    )
    transcript(journals / f"{SID}.jsonl", said)
    done = kura(config, "distill", "run", "--json")
    assert done.returncode == 0, done.stderr
    return store, config, json.loads(done.stdout)


@pytest.mark.parametrize("said", MOVES)
def test_a_move_is_drafted_as_the_replacement_of_the_memory_it_moves_from(tmp_path: Path, said: str) -> None:
    store, config, report = hosted(tmp_path, said)
    [draft] = dr.drafts(store)
    assert "replaces:app-hosting" in draft.flags, (report, draft.flags)
    assert f"[USER] {said}" in draft.path.read_text(encoding="utf-8")
    poured = kura(config, "distill", "pour", draft.id)
    assert poured.returncode == 0, poured.stdout + poured.stderr
    old = (store.root / "app-hosting.md").read_text(encoding="utf-8")
    assert f"superseded_by: {draft.slug}" in old
    assert "app-hosting.md" not in (store.root / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("said", MOVES[:2])
def test_a_move_is_not_also_held_on_the_ladder(tmp_path: Path, said: str) -> None:
    """The correction is the spotter's: held in scratch too, it could cross later as a
    second memory saying the same move."""
    store, _, _ = hosted(tmp_path, said)
    assert [i.claim for i in sc.load(store).items.values()] == []


@pytest.mark.parametrize("said", NOT_MOVES)
def test_what_is_no_move_of_the_memory_replaces_nothing(tmp_path: Path, said: str) -> None:
    store, _, _ = hosted(tmp_path, said)
    assert not any(any(f.startswith("replaces:") for f in d.flags) for d in dr.drafts(store))
    assert "superseded_by" not in (store.root / "app-hosting.md").read_text(encoding="utf-8")
