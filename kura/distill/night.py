"""Night: stay resident and distil when the journals have gone quiet, once per quiet spell.

An agent's transcript is written while the agent works; reading it mid-sentence costs
nothing (the watermark keeps the unread tail) but wastes a pass on half a thought. So the
loop waits for quiet instead of running on a timer:

    every ``poll`` seconds: look at the journals (discovery, then each file's size and
    mtime) → if anything changed, note when → once nothing has changed for ``idle``
    seconds, run the tasks (one pass, then one drain when a scribe is configured) → wait
    for the next change before running again

Starting counts as a change, so a fresh ``night`` runs once after its first quiet spell
(whatever piled up while it was not running gets read). A pass never touches the journals
(its watermarks live in the state folder), so the loop does not wake itself up.

The quiet spell is ``idle_min`` and the wait after a failure ``backoff_min``, from
``[distill]`` (or the store's ``[stores.NAME.distill]``) unless the command line says. A
spell in which a task raised is tried again once ``backoff`` seconds have passed, changed
journals or not; with no backoff the next change is the retry.

The loop is resident and nobody watches it, so a task that raises is logged with its
error and the loop goes on — this is the one place in the core that catches ``Exception``,
because it is an edge in time: the backoff, or the next quiet spell, is the retry. ``KeyboardInterrupt`` or
the ``stop`` event ends it cleanly. Clock and sleep are injected so tests run in
milliseconds without sleeping; the default sleep waits on the stop event, so a stop is
seen at once rather than after a poll.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kura.distill.drain import drain
from kura.distill.ladder import WINDOW_TOKENS
from kura.distill.model_steps import Minds
from kura.distill.reading import Reading
from kura.distill.run import run_pass
from kura.store.store import Store
from kura.threads.groom import groom
from kura.transcripts import journals as jr

if TYPE_CHECKING:
    from kura.config import ModelConfig

Snapshot = tuple[tuple[str, int, int], ...]  # (path, size, mtime_ns) per journal file
Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class NightReport:
    """What one task did: its metrics line, and whether it did any work."""

    line: str
    worked: bool


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    run: Callable[[], NightReport]


def snapshot(journals: jr.Journals, store_root: Path) -> Snapshot:
    """Every journal's path, size and mtime; a file that vanished meanwhile is left out."""
    sources, _ = jr.discover(journals, store_root)
    seen: list[tuple[str, int, int]] = []
    for source in sources:
        try:
            st = source.path.stat()
        except OSError:
            continue
        seen.append((source.key, st.st_size, st.st_mtime_ns))
    return tuple(seen)


def tasks_for(
    store: Store,
    journals: jr.Journals | Callable[[], jr.Journals],
    scribe: ModelConfig | None,
    brain: ModelConfig | None = None,
    *,
    window_tokens: int = WINDOW_TOKENS,
    reading: Reading | None = None,
    language: str = "",
) -> list[Task]:
    """One pass over ``store``'s journals (the brain spotting when there is one; the ladder's
    window is ``window_tokens``; the scribe writes in ``language``), then one drain when a
    scribe is configured, then grooming the store's threads (``kura.threads.groom``).
    ``journals`` may be a function, asked before each pass (transcripts a hook registers
    meanwhile are read too)."""

    def one_pass() -> NightReport:
        minds = Minds(
            brain=brain, scribe=scribe, charter=store.charter, reading=reading or Reading(), language=language
        )
        now = journals() if callable(journals) else journals
        metrics = run_pass(store, now, minds=minds, window_tokens=window_tokens)
        return NightReport(metrics.line(), not metrics.nothing)

    tasks = [Task("pass", one_pass)]
    if scribe is not None:
        model = scribe

        def one_drain() -> NightReport:
            metrics = drain(store, model)
            return NightReport(metrics.line(), metrics.did_work)

        tasks.append(Task("drain", one_drain))

    def one_groom() -> NightReport:
        groomed = groom(store)
        return NightReport(groomed.line(), groomed.worked)

    tasks.append(Task("groom", one_groom))  # thread items: duplicates by key, resolved observations
    return tasks


@dataclass(kw_only=True, slots=True)
class Night:
    """The resident loop (see the module docstring); ``run`` it, or ``step`` it in tests."""

    look: Callable[[], Snapshot]
    tasks: Sequence[Task]
    idle: float
    poll: float
    backoff: float | None = None  # after a spell whose task failed: seconds until it runs again
    log: Log = print
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], object] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    spells: int = 0  # quiet spells that ran the tasks
    worked: int = 0  # tasks that did work
    failures: int = 0  # tasks that raised
    _last: Snapshot | None = None
    _changed: float = 0.0
    _done: bool = False
    _ran: float = 0.0
    _failed: bool = False

    def step(self) -> bool:
        """Look once; run the tasks if this is a new quiet spell (or the backoff after a
        failed one has passed). True when they ran."""
        now = self.clock()
        seen = self.look()
        if self._last is None or seen != self._last:
            self._last, self._changed, self._done = seen, now, False
            return False
        retry = self._done and self._failed and self.backoff is not None and now - self._ran >= self.backoff
        if not retry and (self._done or now - self._changed < self.idle):
            return False
        self._done, self._ran = True, now
        self.spells += 1
        if retry:
            self.log(f"night: a task failed {now - self._changed:.0f}s ago; trying again after the backoff")
        else:
            self.log(f"night: journals quiet for {now - self._changed:.0f}s; distilling")
        failures = self.failures
        for task in self.tasks:
            self._attempt(task)
        self._failed = self.failures > failures
        return True

    def _attempt(self, task: Task) -> None:
        try:
            report = task.run()
        except Exception as err:  # noqa: BLE001 — resident loop: log it, retry next spell
            self.failures += 1
            self.log(f"night: {task.name} failed: {type(err).__name__}: {err}; the loop goes on")
            return
        self.worked += report.worked
        self.log(report.line)

    def run(self, *, once: bool = False) -> None:
        """Loop until ``stop`` is set or Ctrl-C; with ``once``, return after one quiet spell."""
        wait = self.sleep or self.stop.wait
        backoff = f", backoff {self.backoff:g}s" if self.backoff is not None else ""
        self.log(f"night: watching the journals (idle {self.idle:g}s, poll {self.poll:g}s{backoff})")
        try:
            while not self.stop.is_set():
                if self.step() and once:
                    break
                wait(self.poll)
        except KeyboardInterrupt:
            pass
        self.log(f"night: stopped after {self.spells} quiet spell(s)")
