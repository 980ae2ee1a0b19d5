"""Capture: a host's hook fires, and what the session said reaches memory by itself.

A hook is on the host's clock (Claude Code waits for ``Stop``, ``SessionEnd`` and
``PreCompact`` hooks before it goes on), so the firing does only what is cheap and leaves
the pass to a worker that outlives it:

    fire (in the hook):   choose the store as a command run in the session's folder would
                          → register the transcript (``kura.hosts.host_journals``; on
                          ``PreCompact``, with its size: what it holds falls out of the
                          window) → mark "run again" → take the capture lock without
                          waiting: taken, start a detached worker that inherits it; held,
                          the running worker will see the mark
    work (the worker):    while the mark is there: clear it, absorb Claude's auto memory,
                          one distill pass over the store's journals (configured and
                          registered), the ladder's TIDE for each compaction mark → let go
                          of the lock → a mark made meanwhile: take it again and go on

The lock is an ``flock`` on ``.kura/capture.lock`` held by the worker's inherited
descriptor for its whole life, so it is let go when the worker ends however it ends (a
SIGKILL included) and never goes stale. The mark is made *before* the lock is tried, and the
worker looks for it again *after* letting go, so a firing that found the lock held is never
lost: either the worker still holding it sees the mark, or the lock is free when the firing
tries it. Five firings at once start one worker. A killed worker loses nothing: the journals'
watermarks move only after a stretch is done (``kura.transcripts.journals``), a request
staged but not yet poured is poured by the next pass (``kura.distill.run``), and compaction
marks are settled only once applied.

The worker's output and one line per pass go to ``.kura/capture.log`` (moved aside to
``capture.log.1`` once it passes ``LOG_BYTES``). Its failures are logged, never raised: nobody is
waiting for it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kura import config as cfg
from kura.errors import InvalidRequest, KuraError
from kura.hosts import host_journals as hj
from kura.store.state import clear, folder, folder_aside

Event = Literal["Stop", "SessionEnd", "PreCompact", "SubagentStop"]
EVENTS: tuple[Event, ...] = ("Stop", "SessionEnd", "PreCompact", "SubagentStop")
LOCK_NAME = "capture.lock"
AGAIN_NAME = "capture.again"
LOG_NAME = "capture.log"
LOG_BYTES = 1 << 20
MAX_INPUT = 1 << 20  # a hook's JSON is a few hundred bytes; more is not a host talking
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # .kura/ may come with a clone: never write through a link
_OPEN = os.O_RDWR | os.O_CREAT | _NOFOLLOW
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW


@dataclass(frozen=True, slots=True)
class Firing:
    """What a host's hook said: the session, its transcript, its folder and the event."""

    event: Event
    cwd: Path
    session: str = ""
    transcript: Path | None = None
    trigger: str = ""  # PreCompact: "manual" or "auto"


@dataclass(frozen=True, slots=True)
class Fired:
    store: str
    registered: bool  # the registry changed
    started: bool  # a worker was started (False: one was running, and will run again)


def read_firing(text: str, *, cwd: Path | None = None) -> Firing:
    """The hook's stdin JSON, checked field by field (InvalidRequest names what is wrong)."""
    if len(text) > MAX_INPUT:
        raise InvalidRequest(f"the hook's input is {len(text)} characters; a host sends a small JSON object")
    try:
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError) as err:
        raise InvalidRequest(f"the hook's input is not JSON ({str(err).split(':')[0]})") from None
    if not isinstance(data, dict):
        raise InvalidRequest("the hook's input is not a JSON object")
    event = data.get("hook_event_name", "Stop")
    if event not in EVENTS:
        raise InvalidRequest(f"hook_event_name {str(event)[:40]!r} is not one of {', '.join(EVENTS)}")
    folder_ = _text(data, "cwd") or str(cwd or Path.cwd())
    transcript = _text(data, "transcript_path")
    if not os.path.isabs(folder_) or (transcript and not os.path.isabs(transcript)):
        raise InvalidRequest("cwd and transcript_path must be absolute paths")
    if transcript and not transcript.endswith(".jsonl"):
        raise InvalidRequest("transcript_path is not a .jsonl transcript")
    named = Path(transcript) if transcript else None
    session = _text(data, "session_id")[:200]
    return Firing(
        event=event, cwd=Path(folder_), session=session, transcript=named, trigger=_text(data, "trigger")
    )


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str) or "\x00" in value:
        raise InvalidRequest(f"{key} must be a string")
    return value


def hook(text: str, *, selector: str | None = None) -> str:
    """The whole firing from the hook's stdin ``text``: "" when done, else the problem, for
    one line on stderr (a hook never fails the host; ``KURA_DEBUG=1`` raises instead)."""
    try:
        fire(read_firing(text), selector=selector)
    except Exception as err:  # an edge: the host must never see a failure
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        return f"hook capture: {err} (nothing captured this time)"
    return ""


def fire(firing: Firing, *, selector: str | None = None) -> Fired:
    """Register the firing's transcript with its store and see that one worker runs a pass."""
    chosen = hj.store_for(firing.cwd, selector)
    state = folder(chosen.path, store=chosen.name, create=True)
    changed = False
    if firing.transcript is not None:
        changed = hj.register(state, firing.transcript, host="claude", session=firing.session,
                              compact=firing.event == "PreCompact")  # fmt: skip
    return Fired(chosen.name, changed, start(state, chosen.path, firing.cwd))


def start(state: Path, store_root: Path, cwd: Path) -> bool:
    """Mark "run again", then start a worker unless one holds the lock; True when started."""
    for name in (AGAIN_NAME, LOCK_NAME, LOG_NAME):  # a clone's link or folder there: no pass would ever run
        clear(state / name, then="a new one is made")
        folder_aside(state / name, then="a new one is made")
    os.close(os.open(state / AGAIN_NAME, _OPEN, 0o600))
    fd = os.open(state / LOCK_NAME, _OPEN, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # the worker holding it sees the mark
        log = _log_fd(state)
        try:
            subprocess.Popen(  # our own module, by this Python; -P: never one from the cwd (a clone's kura/)
                [sys.executable, "-P", "-m", "kura.hosts.capture", str(fd), str(store_root), str(cwd)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                pass_fds=(fd,), close_fds=True,
            )  # fmt: skip
        finally:
            os.close(log)
        return True
    finally:
        os.close(fd)  # the worker holds the lock through its own copy of the descriptor


# -- the worker -------------------------------------------------------------------------------


def work(fd: int, store_root: Path, cwd: Path) -> int:
    """Run passes while there is a mark (see the module docstring); how many ran."""
    state = folder(store_root, create=True)
    _log(state, f"worker {os.getpid()} started")
    passes = 0
    while True:
        while _take_mark(state):
            passes += 1
            _log(state, one_pass(store_root, cwd))
        fcntl.flock(fd, fcntl.LOCK_UN)
        if not (state / AGAIN_NAME).exists():
            break
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            break  # another worker took it, and the mark with it
    _log(state, f"worker {os.getpid()} done after {passes} pass(es)")
    return passes


def _take_mark(state: Path) -> bool:
    try:
        (state / AGAIN_NAME).unlink()
    except FileNotFoundError:
        return False
    return True


def one_pass(store_root: Path, cwd: Path) -> str:
    """One pass over the store's journals, then the ladder's TIDE for each compaction mark;
    the line to log. Every failure is the line, never raised."""
    from kura.distill.model_steps import Minds
    from kura.distill.reading import Reading
    from kura.distill.run import journals_for, run_pass
    from kura.distill.scribe_language import configured
    from kura.hosts.claude_memory import absorb
    from kura.life.scratch import fell_out

    try:
        config = cfg.load_config(cwd=cwd)
        chosen = config.store_config(str(store_root))
        store = chosen.open()
        absorbed = absorb(store)
        own = journals_for(config.distill, chosen.distill, config_source=config.source, store=chosen.name)
        reading = Reading.of(config.distill, chosen.distill)
        language = configured(config.distill, chosen.distill)
        minds = Minds(
            config.brain_for(chosen),
            config.scribe_for(chosen),
            store.charter,
            reading=reading,
            language=language,
        )
        window = config.map_settings(chosen).window_tokens
        metrics = run_pass(store, hj.with_hosts(own, store), minds=minds, window_tokens=window)
        done: dict[Path, tuple[int, ...]] = {}
        marked = 0
        for entry in hj.registered(store.state_dir):
            if entry.compact_at:
                marked += fell_out(store, str(entry.path), _lines_in(entry.path, max(entry.compact_at)) + 1)
                done[entry.path] = entry.compact_at
        if done:
            hj.settle(store.state_dir, done)
    except (KuraError, OSError) as err:
        return f"pass failed: {type(err).__name__}: {err}"
    extra = (f", {len(absorbed)} absorbed from Claude's auto memory" if absorbed else "") + (
        f", {marked} mention(s) out of the window (compacted)" if marked else ""
    )
    return metrics.line() + extra


def _lines_in(path: Path, size: int) -> int:
    """Complete lines in the first ``size`` bytes of ``path`` (0 when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            count, left = 0, size
            while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
                count, left = count + chunk.count(b"\n"), left - len(chunk)
    except OSError:
        return 0
    return count


def _log_fd(state: Path) -> int:
    """The log, opened to append (never through a link); past ``LOG_BYTES`` the old one is
    moved aside to ``capture.log.1`` first."""
    path = state / LOG_NAME
    try:
        if os.lstat(path).st_size > LOG_BYTES:
            os.replace(path, state / f"{LOG_NAME}.1")
    except OSError:
        pass
    return os.open(path, _APPEND, 0o600)


def _log(state: Path, line: str) -> None:
    try:
        fd = _log_fd(state)
        try:
            os.write(fd, f"{dt.datetime.now(dt.UTC):%Y-%m-%dT%H:%M:%SZ} capture: {line}\n".encode())
        finally:
            os.close(fd)
    except OSError:
        pass  # no log is no reason to stop


def main(argv: list[str]) -> int:
    """``python -m kura.hosts.capture FD STORE_ROOT CWD``: the worker ``start`` runs."""
    fd, store_root, cwd = int(argv[0]), Path(argv[1]), Path(argv[2])
    try:
        work(fd, store_root, cwd)
    except Exception as err:  # noqa: BLE001 — a detached worker: the log is its only voice
        _log(folder(store_root), f"worker failed: {type(err).__name__}: {err}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
