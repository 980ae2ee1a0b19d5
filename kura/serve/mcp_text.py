"""What the MCP tools answer: plain text written for a model to read (the recalled
memories themselves, a listing, the context it would be told), never JSON — the structured
forms are the HTTP API's job. Secrets a model sent are never echoed back."""

from __future__ import annotations

from typing import Any

from kura.files.finding import Finding
from kura.health.doctor import in_proportion
from kura.store.listing import Retired
from kura.text.secrets import find_secret

MAX_ECHO = 200  # characters of a value the model sent that an answer may repeat


def recall_text(found: dict[str, Any]) -> str:
    store, question = found.get("store", "?"), found.get("question", "")
    if not found.get("picked"):
        note = f" ({found['reason']})" if found.get("reason") else ""
        question = "that" if find_secret(question) else repr(question[:MAX_ECHO])
        then = f" as of {found['at']}" if found.get("at") else ""
        return (
            f"nothing in store '{store}' bears on {question}{then}{note}; try other words, or kura_map "
            "to see what is remembered"
        )
    how = str(found.get("how"))
    if found.get("method") not in (None, how):  # distill-kura's word, and kura's beside it
        how = f"{how}, {found['method']}"
    if found.get("degraded"):
        how = f"{how} — degraded: {found['reason']}"
    picks = ", ".join(_named(p["slug"], p.get("store", store), store) for p in found["picked"])
    linked = [_named(w["slug"], w["store"], store) for w in found.get("walked_store") or ()]
    linked = linked or found.get("walked") or []
    walked = f"; linked: {', '.join(linked)}" if linked else ""
    unread = "".join(f"\n(kura: not searched: {said})" for said in found.get("unread") or ())
    where = f"store '{store}'"
    if found.get("stores"):  # the project's store and the person's store beside it
        where = "stores " + " and ".join(f"'{name}'" for name in found["stores"])
    when = f" as of {found['at']} (what it held then, not necessarily now)" if found.get("at") else ""
    return f"recalled from {where}{when} ({how}): {picks}{walked}{unread}\n\n{found.get('context', '')}"


def _named(slug: str, store: str, first: str) -> str:
    """A memory of the first store by its slug; one of another store with that store's name."""
    return slug if store == first else f"{slug} [{store}]"


def read_text(memory: dict[str, Any]) -> str:
    text = str(memory.get("text") or memory.get("body") or "")
    problems = "".join(f"\n(kura: {f})" for f in memory.get("findings", []))
    return text + problems


def doctor_text(report: dict[str, Any]) -> str:
    kinds = ", ".join(f"{kind} {n}" for kind, n in report.get("types", {}).items())
    findings = report.get("findings", [])
    state = "healthy" if report.get("healthy") else "problems found"
    lines = [f"store '{report.get('store')}': {report.get('memories')} memories ({kinds}) — {state}"]
    given = [(f["check"], Finding(f["path"], f["line"], f["message"], f["severity"])) for f in findings]
    shown = in_proportion(given)  # islands and dead ends: one line per kind, with the count
    lines += [f"  {text}  [{check}, {severity}]" for check, severity, text in shown]
    return "\n".join(lines)


def memories_text(rows: list[dict[str, Any]], store: str, *, everything: bool = False) -> str:
    """The listing (``rows``: every memory, each with its state); archived and superseded
    ones only with ``everything``, marked, else counted."""
    shown = [r for r in rows if everything or r.get("state", "current") == "current"]
    hidden = len(rows) - len(shown)
    left = f" ({hidden} archived or superseded not shown; all=true lists them)" if hidden else ""
    if not shown:
        return f"store '{store}' has no such memories{left}"
    width = max(len(r["slug"]) for r in shown)
    head = f"store '{store}': {len(shown)} memories{left}"
    return "\n".join(
        [
            head,
            *(
                f"{r['slug']:<{width}}  {r.get('type') or '?':<9}  {r['description']}{_mark(r)}"
                for r in shown
            ),
        ]
    )


def _mark(row: dict[str, Any]) -> str:
    """``[superseded by X]`` / ``[archived DATE: reason]``, as ``kura list --all`` marks them."""
    if row.get("state", "current") == "current":
        return ""
    gone = Retired(row.get("archived"), row.get("archived_reason") or "", row.get("superseded_by") or "")
    return f"  {gone.mark}"


def stores_text(rows: list[dict[str, Any]], current: str) -> str:
    lines = []
    for row in rows:
        mark = "*" if row["name"] == current else " "
        label = f" — {row['label']}" if row.get("label") else ""
        modes = f"; modes: {', '.join(row['modes'])}" if row.get("modes") else ""
        writes = "writable" if row.get("writable") else "read-only"
        lines.append(f"{mark} {row['name']}{label} [{row.get('write_policy')}, {writes}{modes}]")
    return "\n".join(lines) + "\n(* the store this session uses)"


def remember_text(done: dict[str, Any]) -> str:
    verb = "created" if done.get("created") else "updated" if done.get("changed") else "unchanged (same text)"
    lines = [f"{verb} {done['slug']} in store '{done['store']}' ({done.get('path')})"]
    if done.get("superseded"):
        lines.append(f"it supersedes {done['superseded']}: kept as history, out of the index")
    return "\n".join([*lines, *(str(note) for note in done.get("notes") or [])])


def context_text(told: dict[str, Any]) -> str:
    left = told.get("left_out") or []
    foot = (
        f"\n(kura: {told.get('tokens')}/{told.get('budget')} tokens from store '{told.get('store')}'"
        + (f"; {len(left)} item(s) left out for budget or as unsafe to show" if left else "")
        + "".join(f"; degraded — {said}" for said in told.get("degraded") or ())
        + ")"
    )
    body = str(told.get("text") or "").rstrip("\n")
    return (body or f"store '{told.get('store')}' has nothing to tell for this task") + foot
