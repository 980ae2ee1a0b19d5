"""The detached index build itself: what ``kura.recall.index_job.start`` runs.

``python -m kura.recall.index_worker FD ROOT CONFIG``: FD is the store's build lock, taken by
the starter and held here until the process ends (however it ends). The build lowers its
priority, loads the config the recall used, embeds every memory with no vector (committed
chunk by chunk: resumable), saves the vector matrix so the next one-question process reads
it in one row, and says where it is in ``.kura/index-build.json`` as it goes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from kura.config import load_config
from kura.recall.index_build import WHOLE
from kura.recall.index_job import NICE, SAY_EVERY, Progress, say
from kura.recall.search import SearchIndex, remote_embedder


def build(root: Path, config: Path | None) -> Progress:
    """Embed every memory of the store at ``root`` that has no vector; how it ended."""
    began = time.time()
    said = Progress("running", os.getpid(), 0, 0, began, began)
    say(root, said, log="started")
    last = 0.0

    def report(stage: str, done: int, total: int) -> None:
        nonlocal said, last
        if stage in ("embedding", "headlines"):  # the memories' own vectors, then their headlines'
            if stage == "embedding":
                said = replace(said, done=done, total=total, updated=time.time())
            else:
                said = replace(said, headlines=done, headlines_total=total, updated=time.time())
            if time.monotonic() - last >= SAY_EVERY or done == total:
                say(root, said)
                last = time.monotonic()

    try:
        loaded = load_config(str(config) if config else None)
        chosen = loaded.store_config(str(root))
        index = SearchIndex(chosen.open(), embedder=remote_embedder(loaded.embedder_for(chosen)))
        try:
            index.update(progress=report, budget=WHOLE)
            whole = index.complete()
            if whole:
                index.prepare()  # the next one-question process reads the matrix in one row
        finally:
            index.close()
        said = replace(said, state="done" if whole else "stopped", updated=time.time())
    except Exception as err:  # noqa: BLE001 - a detached build: its progress file is its only voice
        said = replace(said, state="failed", updated=time.time(), reason=f"{type(err).__name__}: {err}")
    say(root, said, log=said.line())
    return said


def main(argv: list[str]) -> int:
    """``python -m kura.recall.index_worker FD ROOT CONFIG``: the build ``index_job.start`` runs."""
    fd, root, config = int(argv[0]), Path(argv[1]), Path(argv[2]) if argv[2] else None
    with contextlib.suppress(OSError):  # not allowed here: build at the priority there is
        os.nice(NICE)
    ended = build(root, config)
    fcntl.flock(fd, fcntl.LOCK_UN)
    return 0 if ended.state == "done" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
