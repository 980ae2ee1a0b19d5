"""What the store remembers about the prompt a person just typed, before the agent reads it.

Claude Code's ``UserPromptSubmit`` hook adds what it prints to the prompt's context, and
runs before the model sees the prompt — so it must be fast and must not add noise. The
memories come from recall without a model (the offline embedder, else words), only those
above recall's relevance floor (``kura.recall.recall.FLOOR``), no ``[[link]]`` walk, and
within ``MAX_CHARS`` in all: whole memories as far as they fit, the rest left out rather
than cut mid-line. When nothing bears on the prompt the answer is nothing at all — not a
block saying so, which the model would read on every turn.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kura.hosts.host_journals import store_for
from kura.recall.embed import preload
from kura.recall.recall import recall
from kura.store.store import Store

MAX_CHARS = 1500
TOP = 3
MIN_PROMPT = 8  # characters; "ok", "go on", "yes" bear on nothing
_CUT = "\n[…]"


def hook(text: str, *, selector: str | None = None, max_chars: int = MAX_CHARS) -> tuple[str, str]:
    """The whole hook from its stdin ``text``: (what to print, the problem for one line on
    stderr). Nothing raises: a hook never fails the host (``KURA_DEBUG=1`` raises instead)."""
    try:
        try:
            data = json.loads(text or "{}")
        except json.JSONDecodeError as err:  # said as ``kura hook capture`` says it
            return (
                "",
                f"hook prompt: the hook's input is not JSON ({str(err).split(':')[0]}) (no memories added)",
            )
        said = data.get("prompt", "") if isinstance(data, dict) else ""
        cwd = data.get("cwd") if isinstance(data, dict) else None
        if not isinstance(said, str) or len(" ".join(said.split())) < MIN_PROMPT:
            return "", ""
        folder = Path(cwd) if isinstance(cwd, str) and os.path.isabs(cwd) else Path.cwd()
        store = store_for(folder, selector).open()
        # the embedder loads while the store is read; not before a store is found: a process
        # that exits while that thread is still inside onnxruntime's start can abort (SIGABRT)
        preload(quick=True)
        return bearing(store, said, max_chars=max(200, max_chars)), ""
    except Exception as err:  # an edge: the host must never see a failure
        if os.environ.get("KURA_DEBUG") == "1":
            raise
        return "", f"hook prompt: {err} (no memories added)"


def bearing(store: Store, prompt: str, *, max_chars: int = MAX_CHARS) -> str:
    """The block of memories that bear on ``prompt`` (at most ``max_chars``), or ""."""
    prompt = " ".join(prompt.split())[:2000]
    if len(prompt) < MIN_PROMPT:
        return ""
    head, foot = f"<<<KURA-RECALL store={store.name}>>>\n", "\n<<<END KURA-RECALL>>>\n"
    room = max_chars - len(head) - len(foot)
    found = recall(store, prompt, top=TOP, hops=0, chars=room, quick=True)
    if not found.picked or not found.context.strip():
        return ""
    return head + fit(found.context, room) + foot


def fit(context: str, room: int) -> str:
    """Whole memories (``=== slug ===`` parts) while they fit in ``room``; the first one cut
    at a line, marked, when even it does not."""
    parts = context.split("\n\n=== ")
    kept = parts[0]
    if len(kept) > room:
        cut = kept[: room - len(_CUT)].rsplit("\n", 1)[0]
        return cut + _CUT
    for part in parts[1:]:
        more = kept + "\n\n=== " + part
        if len(more) > room:
            break
        kept = more
    return kept
