"""An agent's observations: kept with their task and next step, consolidated by themselves."""

from __future__ import annotations

from datetime import date

from kura.observe import observations as ob
from kura.store.store import Store
from kura.threads import Thread
from kura.threads.observer import log_store, observe

DAY = date(2026, 11, 30)


def test_past_the_size_hint_the_log_consolidates_itself_and_keeps_every_open_red(store: Store) -> None:
    thread = Thread.of(store, "t")
    lines = ["# Observations\n", "\n", "## 2026-11-29\n", "- 🔴 the VPN must be up before a deploy\n"]
    lines += [f"- 🟢 checked mirror {n} ✅\n" for n in range(ob.MAX_ENTRIES)]
    thread.make_folder()
    (thread.root / "_observations.md").write_text("".join(lines))
    done = observe(store, "mirror 7 is slow", "medium", thread=thread, task="mirrors", today=DAY)
    assert done.consolidated is not None and len(done.consolidated.dropped) == ob.MAX_ENTRIES
    left = ob.read_log(log_store(store, thread)).entries
    assert [(e.priority, e.text, e.resolved) for e in left] == [
        ("high", "the VPN must be up before a deploy", False),
        ("medium", "mirror 7 is slow", False),
    ]
    assert (done.entry.text, done.entry.task, done.entry.number) == ("mirror 7 is slow", "mirrors", 2)
    assert list((thread.root / ".kura/observations").glob("dropped-*.md"))


def test_under_the_hint_nothing_is_consolidated(store: Store) -> None:
    done = observe(store, "a first note", "low", continuation="read it tomorrow", today=DAY)
    assert done.consolidated is None and done.log == "_observations.md"
    assert ob.read_log(store).entries[0].continuation == "read it tomorrow"
