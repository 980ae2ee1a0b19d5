"""Which drafts wait for review: the drafts folder as a listing, without reading a draft.

A host's SessionStart hook says how many drafts wait (never what they say) before every
session, so counting them must cost no more than a folder listing: this module imports
only the state folder's checks, none of the distiller. ``kura distill drafts`` lists the
same files (``kura.distill.drafts.staged``), so the count and the list agree.
"""

from __future__ import annotations

from pathlib import Path

from kura.store import state as st

DRAFTS_DIR = "drafts"  # in the state folder: .kura/drafts/


def staged_files(folder: Path) -> list[Path]:
    """The staged drafts in ``folder``, oldest name first."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.md"), key=lambda p: p.stem)


def waiting(root: Path, store: str = "") -> int:
    """How many drafts wait for review in the store at ``root``; StoreError when the drafts
    folder (or ``.kura``) is a link or a file."""
    return len(staged_files(st.folder(root, DRAFTS_DIR, store=store)))
