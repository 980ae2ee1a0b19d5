"""Drafts staged in a served sample store through the real draft writer
(``kura.distill.drafts.stage``), as a distiller pass would leave them: one that pours, one
to toss, one the final-surface floor refuses, and one edited by hand after staging."""

from __future__ import annotations

from pathlib import Path

from kura.config import parse_config
from kura.distill.drafts import stage
from kura.store.store import Store
from kura.transcripts.segments import Segment

SOURCE = "~/.claude/projects/ferrydesk/2026-11-30.jsonl"


def open_sample(root: Path) -> Store:
    """The served store, opened as the server opens it (the same folder, the same mark key)."""
    return parse_config({"stores": {"sample": {"path": str(root)}}}).store_config("sample").open()


def stage_examples(root: Path) -> dict[str, str]:
    """Stage the four drafts; their ids by role: pour, toss, floor, tampered."""
    store = open_sample(root)
    pour = stage(
        store, slug="smoke-tests-before-deploy", kind="feedback", title="Run the smoke tests before deploying",
        description="deploys go out only after the smoke tests pass",
        body="Run the smoke tests before every deploy.",
        evidence=[Segment("USER", "always run the smoke tests before a deploy"),
                  Segment("TOOL", "smoke tests passed on the release branch"),
                  Segment("ACT", "ran make smoke"), Segment("SELF", "I will run the smoke tests before deploying")],
        source=SOURCE,
    )  # fmt: skip
    toss = stage(
        store, slug="release-notes-short", kind="feedback", title="Keep release notes short",
        description="release notes stay under a page", body="Keep the release notes short and plain.",
        evidence=[Segment("USER", "keep the release notes short please")], source=SOURCE,
    )  # fmt: skip
    floor = stage(
        store, slug="usual-port", kind="reference", title="The usual port is 9999",
        description="the dev server listens on 9999", body="Use port 9999 for the dev server.",
        evidence=[Segment("USER", "use the usual port for the dev server")], source=SOURCE,
    )  # fmt: skip
    tampered = stage(
        store, slug="staging-password-rotation", kind="project", title="Rotate the staging password",
        description="the staging password is rotated monthly", body="Rotate the staging password monthly.",
        evidence=[Segment("USER", "rotate the staging password monthly")], source=SOURCE,
    )  # fmt: skip
    text = tampered.read_text(encoding="utf-8")
    tampered.write_text(text.replace("Rotate the staging password monthly.", "Rotate it every 90 days."))
    return {"pour": pour.stem, "toss": toss.stem, "floor": floor.stem, "tampered": tampered.stem}
