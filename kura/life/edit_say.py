"""What an edit in place did, said in words: the CLI's lines and the MCP tool's answer.

Apart from ``kura.life.edit`` because these read only the edit's dictionary
(``Edited.to_dict()``), and the MCP tools import them before any store is opened.
"""

from __future__ import annotations

from typing import Any

_VERBS = {"append": "appended to", "prepend": "prepended to", "replace": "edited", "section": "edited"}


def summary(done: dict[str, Any]) -> str:
    """One line: what the edit did."""
    slug = done["slug"]
    if not done["changed"]:
        what = "already forgotten" if done["op"] == "forget" else "unchanged (it already says so)"
        if done["op"] == "rename":
            what = "already has that name"
        return f"{slug}: {what}"
    if done["op"] == "rename":
        return f"renamed {done['was']} to {slug} ({done['path']})"
    if done["op"] == "forget":
        return f"forgot {slug}: archived ({done['detail']}); still on disk, off the index"
    if done["op"] == "purge":
        return f"purged {slug} and everything derived from it; a tombstone keeps the distiller from it"
    detail = f": {done['detail']}" if done.get("detail") else ""
    return f"{_VERBS[done['op']]} {slug} in store '{done['store']}' ({done['path']}){detail}"


def notes(done: dict[str, Any]) -> list[str]:
    """What the writer should know after the edit."""
    said = []
    if done.get("relinked"):
        said.append(f"links and pointers to it rewritten in {', '.join(done['relinked'])}")
    if done.get("revises"):
        said.append(
            f'{done["slug"]} now appears to revise {done["revises"]} ("{done.get("revised_claim") or "?"}"), '
            f"which stays current beside it; if it replaces that one, remember {done['slug']} again with "
            f"supersedes {done['revises']}"
        )
    if done.get("purged"):
        said.append("its text remains in git history and in the source transcripts, if any")
    return said


def edited_text(done: dict[str, Any]) -> str:
    """The MCP tool's answer: the summary, then the notes."""
    return "\n".join([summary(done), *(done.get("notes") or notes(done))])
