"""Transcripts a host keeps, registered as journals without editing kura.toml.

Coordination stub: the capture work (wt-capture) implements this module; ``kura setup
codex`` (wt-setup) calls ``register_codex``.
"""

from __future__ import annotations

from pathlib import Path


def register_codex(sessions: Path) -> bool:
    """Register Codex's rollout folder (``~/.codex/sessions``) as a journal whose sessions go
    to the store of the project each ran in; True when it was not registered before.
    (Stub until implemented.)"""
    del sessions
    return False
