"""Grooming on the night's quiet spell: duplicates by key, resolved observations."""

from __future__ import annotations

from kura.distill.night import tasks_for
from kura.observe import observations as ob
from kura.store.store import Store
from kura.threads import Thread
from kura.threads.groom import groom
from kura.threads.observer import log_store
from kura.transcripts.journals import Journals


def test_groom_removes_identical_copies_keeps_differing_ones_and_drops_resolved_observations(
    store: Store,
) -> None:
    thread = Thread.of(store, "t")
    thread.write("work:current-project", "Building A2A", "fact")
    original = (thread.root / "work/current-project.md").read_text()
    (thread.root / "work/current-project copy.md").write_text(original)
    (thread.root / "old-project.md").write_text(original.replace("Building A2A", "Building A1"))
    (thread.root / "_observations.md").write_text(
        "# Observations\n\n## 2026-11-29\n- 🔴 the VPN must be up\n- 🟡 mirror 3 was slow ✅\n- 🟢 noted\n"
    )
    done = groom(store)
    assert done.removed == ("threads/t/work/current-project copy.md",)
    assert done.differing == ("threads/t/old-project.md",)
    assert (done.threads, done.dropped, done.worked) == (1, 1, True)
    assert not (thread.root / "work/current-project copy.md").exists()
    assert (thread.root / "old-project.md").exists() and thread.read(
        "work:current-project"
    ).value == "Building A2A"
    left = ob.read_log(log_store(store, thread)).entries
    assert [(e.priority, e.text) for e in left] == [("high", "the VPN must be up"), ("low", "noted")]
    again = groom(store)
    assert (again.removed, again.dropped, again.worked) == ((), 0, False)


def test_the_night_grooms_after_its_pass(store: Store) -> None:
    assert [t.name for t in tasks_for(store, Journals(), None)] == ["pass", "groom"]
    assert tasks_for(store, Journals(), None)[-1].run().line == (
        "groom: 0 threads, 0 duplicate items removed, 0 left to reconcile, 0 observations dropped"
    )
