"""Drafts: what the distiller proposes, staged as files a person can read, and the one door
through which a draft becomes a memory.

A draft is a markdown file in the state folder (``.kura/drafts/<slug>.md``, derived state):

    <!-- kura draft
    slug: deploy-checklist
    when: 2026-11-30T07:58:00Z
    source: ~/.claude/projects/x/session.jsonl
    kind: feedback
    classes: USER, TOOL
    flags: unbacked-number, extends:deploy
    quotes:
    [USER] always run the smoke tests before a deploy
    [TOOL] 12 passed in 3.41s
    mark: <hex>
    -->
    TITLE: Run the smoke tests before deploying
    DESC: Deploys go out only after the smoke tests pass

    body…

Why it looks like this:

- **A person reviews drafts in an editor**, so everything the gate knew — where the text
  came from, which classes of evidence carry it, what is doubtful — sits in a comment at the
  top, and the proposed memory below it, as it would be written.
- **Nothing in the comment can close it early.** Quotes are folded to one line, secrets
  are redacted, and ``-->`` (and ``--!>``) are neutralised, so a transcript cannot smuggle
  text out of the comment and into what looks like the draft.
- **The mark binds the draft to the distiller**: an HMAC-SHA256 over every field but
  itself, keyed per store (``kura.distill.signature``). A draft edited by hand (a number slipped
  into the body, a quote added to license one) no longer matches and is quarantined, never
  poured: a person's text goes in through ``kura remember``, not the distiller's door.
- **Pouring re-checks, never trusts**: the mark, then the final-surface floor against the
  draft's own evidence and the store's current slugs, then a write through the store as
  ``actor="distiller"`` (the store's policy decides). The memory keeps its evidence in its
  own frontmatter (``evidence:``, ``distilled:``, ``source:``): drafts are derived state.
- A refusal is a ``PourResult`` with the reason; a broken draft file is listed with its
  ``file:line``. A draft saying what a memory poured since says adds a witness to it.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from dataclasses import fields as field_list
from functools import partial
from pathlib import Path
from typing import Any

from kura.distill import draft_file
from kura.distill.draft_file import free_name, move, place
from kura.distill.final_check import violations
from kura.distill.restated import restatement
from kura.distill.signature import matches, sign
from kura.distill.waiting import DRAFTS_DIR, staged_files
from kura.errors import InvalidRequest, KuraError, NotFound, StoreError
from kura.files import memory_file as nt
from kura.files.slugs import new_slug
from kura.life.lifecycle import also_from_flags, from_flags, supersede, unreplaced
from kura.store import state as st
from kura.store import write_checks
from kura.store.atomic import write_atomic
from kura.store.store import Memory, Store
from kura.text.secrets import redact
from kura.transcripts.segments import CLASSES, Segment, comment_safe, from_comment, normalise

KINDS = ("user", "feedback", "project", "reference", "idea")
EVIDENCE_CHARS = 200
_HEAD = "<!-- kura draft"
_QUOTE = re.compile(r"^\[([A-Z]+)\] (.*)$")
_FIELDS = ("slug", "when", "source", "kind", "classes", "flags")
_SIGNED = ("slug", "kind", "title", "description", "extends", "body", "source", "when")


@dataclass(kw_only=True, frozen=True, slots=True)
class Draft:
    """One staged draft as read back; ``problem`` is a ``file:line`` message when it is
    broken, and ``tampered`` is true when it is broken or its mark does not match —
    except an ``incomplete`` one, which a stopped pass left and nobody edited."""

    id: str
    slug: str
    kind: str
    title: str
    description: str
    body: str
    evidence: tuple[Segment, ...]
    source: str
    flags: tuple[str, ...]
    when: str
    extends: str | None
    path: Path
    tampered: bool
    problem: str = ""
    incomplete: bool = False  # left empty or cut short by a stopped pass; not tampered


@dataclass(kw_only=True, frozen=True, slots=True)
class DraftInfo:
    """A draft as ``kura distill drafts`` lists it."""

    id: str
    slug: str
    kind: str
    title: str
    description: str
    flags: tuple[str, ...]
    path: Path
    tampered: bool
    when: str
    problem: str = ""
    incomplete: bool = False

    def to_dict(self) -> dict[str, Any]:  # every field in order, flags a list and path a string
        shown = {f.name: getattr(self, f.name) for f in field_list(self)}
        return {**shown, "flags": list(self.flags), "path": str(self.path)}


@dataclass(frozen=True, slots=True)
class PourResult:
    """What ``pour`` did with one draft: ``poured`` or refused with ``reason``."""

    id: str
    poured: bool
    reason: str
    slug: str = ""
    memory: Path | None = None
    quarantined: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "poured": self.poured,
            "reason": self.reason,
            "slug": self.slug,
            "memory": str(self.memory) if self.memory else None,
            "quarantined": self.quarantined,
        }


# -- staging ---------------------------------------------------------------------------


def stage(
    store: Store,
    *,
    slug: str,
    kind: str,
    title: str,
    description: str,
    body: str,
    evidence: Sequence[Segment],
    source: str,
    flags: Sequence[str] = (),
    extends: str | None = None,
) -> Path:
    """Write one draft file, whole (``kura.distill.draft_file``), and return its path; a
    draft already staged for the same slug is never overwritten (the new one gets ``-2``…)."""
    slug = new_slug(slug)
    if kind not in KINDS:
        raise StoreError(f"draft {slug!r}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if extends is not None:
        extends = new_slug(extends)
    all_flags = [_line(f) for f in flags if _line(f)]
    if extends and f"extends:{extends}" not in all_flags:
        all_flags.append(f"extends:{extends}")
    draft = Draft(
        id="",
        slug=slug,
        kind=kind,
        title=_line(title),
        description="" if extends else _line(description),
        body=redact(body)[0].strip("\n") + "\n",
        evidence=tuple(Segment(s.cls, _line(s.text)) for s in evidence if s.cls in CLASSES),
        source=_line(source),
        flags=tuple(dict.fromkeys(all_flags)),
        when=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        extends=extends,
        path=Path(),
        tampered=False,
    )
    text = render(draft, sign(store.state_dir, _signed(draft)))
    folder = st.folder(store.root, DRAFTS_DIR, store=store.name, create=True)
    return place(folder, slug.replace("/", "--"), text.encode("utf-8"))


Key = tuple[str, tuple[tuple[str, str], ...]]


def key(source: str, evidence: Sequence[Segment]) -> Key:
    """What makes two drafts one candidate: the same source and the same quotes, as a
    draft records them. A stretch read again after a stopped pass spots the same moments
    with the same quotes, so a draft already staged for one is recognised, whatever slug
    or words it was given."""
    return _line(source), tuple((s.cls, _line(s.text)) for s in evidence if s.cls in CLASSES)


def key_of(draft: Draft) -> Key:
    """A staged draft's ``key`` (its fields are already in the form ``key`` makes)."""
    return draft.source, tuple((s.cls, s.text) for s in draft.evidence)


def render(draft: Draft, mark: str) -> str:
    """The draft file's text (see the module docstring for the layout)."""
    lines = [_HEAD, *(f"{name}: {_header_value(draft, name)}" for name in _FIELDS), "quotes:"]
    lines += [f"[{s.cls}] {s.text}" for s in draft.evidence]
    lines += [f"mark: {mark}", "-->"]
    lines.append(f"TITLE: {draft.title}")
    lines.append(f"EXTENDS: {draft.extends}" if draft.extends else f"DESC: {draft.description}")
    return "\n".join(lines) + "\n\n" + draft.body


def _header_value(draft: Draft, name: str) -> str:
    if name == "classes":
        return ", ".join(c for c in CLASSES if any(s.cls == c for s in draft.evidence))
    if name == "flags":
        return ", ".join(draft.flags)
    return str(getattr(draft, name))


def _line(text: str) -> str:
    """One line, secrets redacted, unable to close the comment it sits in."""
    return comment_safe(normalise(redact(text)[0]))


# -- the mark ------------------------------------------------------------------------


def _signed(draft: Draft) -> dict[str, Any]:
    """Every field of the draft but its mark and where it lies."""
    fields = {name: getattr(draft, name) for name in _SIGNED}
    fields["evidence"] = [[seg.cls, seg.text] for seg in draft.evidence]
    fields["flags"] = list(draft.flags)
    return fields


# -- reading -------------------------------------------------------------------------


def drafts_dir(store: Store) -> Path:
    return st.folder(store.root, DRAFTS_DIR, store=store.name)  # a link or a file there: StoreError


def drafts(store: Store) -> list[DraftInfo]:
    """Every staged draft (not poured, tossed or quarantined ones), oldest name first."""
    return [DraftInfo(id=d.id, slug=d.slug, kind=d.kind, title=d.title, description=d.description,
                      flags=d.flags, path=d.path, tampered=d.tampered, when=d.when, problem=d.problem,
                      incomplete=d.incomplete) for d in staged(store)]  # fmt: skip


def staged(store: Store) -> list[Draft]:
    """Every staged draft, read whole, oldest name first."""
    return [_load_path(store, path) for path in staged_files(drafts_dir(store))]


def load(store: Store, draft_id: str) -> Draft:
    """One staged draft by its id (the file name without ``.md``), or NotFound."""
    path = _draft_path(store, draft_id)
    if not path.is_file():
        raise NotFound(
            f"no staged draft {draft_id!r} in store '{store.name}'; `kura distill drafts` lists them"
        )
    return _load_path(store, path)


def _draft_path(store: Store, draft_id: str) -> Path:
    name = draft_id.removesuffix(".md")
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise InvalidRequest(f"{draft_id!r} is not a draft id; `kura distill drafts` lists them")
    return drafts_dir(store) / f"{name}.md"


def _load_path(store: Store, path: Path) -> Draft:
    try:
        data = draft_file.read(path)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return _broken(path, 1, f"cannot be read ({getattr(err, 'strerror', None) or err})")
    why = draft_file.incomplete(data)
    if why:
        return replace(_broken(path, 1, why), tampered=False, incomplete=True,
                       problem=draft_file.problem(path, why))  # fmt: skip
    try:
        draft, mark = parse(text, path)
    except _ParseError as err:
        return _broken(path, err.line, err.message)
    if not matches(store.state_dir, _signed(draft), mark):
        return replace(
            draft, tampered=True, problem=f"{path}:1: the mark does not match; edited outside the distiller"
        )
    return draft


def _broken(path: Path, line: int, message: str) -> Draft:
    return Draft(id=path.stem, slug="", kind="", title="", description="", body="", evidence=(), source="",
                 flags=(), when="", extends=None, path=path, tampered=True,
                 problem=f"{path}:{line}: {message}")  # fmt: skip


class _ParseError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


def parse(text: str, path: Path) -> tuple[Draft, str]:
    """A draft file's fields and its mark; ``_ParseError(line, message)`` when it is not one."""
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0] != _HEAD:
        raise _ParseError(1, f"does not start with {_HEAD!r}; not a draft kura wrote")
    try:
        close = lines.index("-->")
    except ValueError:
        raise _ParseError(1, "the comment is never closed with a '-->' line") from None
    fields, evidence, mark = _read_comment(lines[1:close])
    if close + 1 >= len(lines) or not lines[close + 1].startswith("TITLE: "):
        raise _ParseError(close + 2, "expected 'TITLE: …' after the comment")
    second = lines[close + 2] if close + 2 < len(lines) else ""
    if not second.startswith(("DESC: ", "EXTENDS: ")):
        raise _ParseError(close + 3, "expected 'DESC: …' or 'EXTENDS: <slug>'")
    if close + 3 < len(lines) and lines[close + 3] != "":
        raise _ParseError(close + 4, "expected a blank line before the body")
    extends = second.removeprefix("EXTENDS: ") if second.startswith("EXTENDS: ") else None
    draft = Draft(
        id=path.stem,
        slug=fields.get("slug", ""),
        kind=fields.get("kind", ""),
        title=lines[close + 1].removeprefix("TITLE: "),
        description="" if extends is not None else second.removeprefix("DESC: "),
        body="\n".join(lines[close + 4 :]),
        evidence=tuple(evidence),
        source=fields.get("source", ""),
        flags=tuple(f for f in fields.get("flags", "").split(", ") if f),
        when=fields.get("when", ""),
        extends=extends,
        path=path,
        tampered=False,
    )
    return draft, mark


def _read_comment(lines: list[str]) -> tuple[dict[str, str], list[Segment], str]:
    fields: dict[str, str] = {}
    evidence: list[Segment] = []
    mark = ""
    in_quotes = False
    for number, line in enumerate(lines, start=2):
        quote = _QUOTE.match(line) if in_quotes else None
        if quote and quote.group(1) in CLASSES:
            evidence.append(Segment(quote.group(1), quote.group(2)))
            continue
        key, sep, value = line.partition(": ")
        if line == "quotes:":
            in_quotes = True
        elif sep and key in _FIELDS:
            fields[key] = value
        elif sep and key == "mark":
            mark = value
        elif not (sep and key == "tossed"):
            raise _ParseError(number, f"unexpected line in the draft's comment: {line[:60]!r}")
    missing = [k for k in ("slug", "kind") if not fields.get(k)] + ([] if mark else ["mark"])
    if missing:
        raise _ParseError(1, f"the comment has no {', '.join(missing)}")
    return fields, evidence, mark


# -- pouring and tossing ----------------------------------------------------------------


def pour(store: Store, draft_id: str, *, actor: str = "distiller") -> PourResult:
    """Pour one staged draft into the store, or say why not (see the module docstring)."""
    draft = load(store, draft_id)
    if draft.incomplete:
        return PourResult(draft.id, False, draft.problem)
    if draft.tampered:
        moved = move(draft.path, "quarantine")
        why = draft.problem or "the mark does not match"
        return PourResult(draft.id, False, f"{why}; quarantined to {moved} — never poured", draft.slug,
                          quarantined=True)  # fmt: skip
    if draft.kind == "idea":
        return PourResult(
            draft.id, False, "an idea is never poured into the store; it belongs in a seed file"
        )
    draft = replace(draft, evidence=tuple(Segment(s.cls, from_comment(s.text)) for s in draft.evidence))
    found = violations(_composed(draft), draft.evidence, store.slugs())
    if found:
        return PourResult(
            draft.id, False, "the final-surface floor refuses it: " + "; ".join(found), draft.slug
        )
    try:  # said again in another session: one more witness of the memory, not a second one
        again = restatement(store, draft, actor)
        memory = again or (_extend(store, draft, actor) if draft.extends else _create(store, draft, actor))
    except KuraError as err:
        return PourResult(draft.id, False, str(err), draft.slug)
    move(draft.path, "poured")
    if again:
        return PourResult(
            draft.id, True, f"poured as a witness of {again.stem}: it says the same", again.stem, again
        )
    return PourResult(draft.id, True, "poured", draft.extends or draft.slug, memory)


def _composed(draft: Draft) -> str:
    return "\n\n".join(filter(None, (draft.title, draft.description, draft.body)))


def _evidence_meta(draft: Draft) -> list[str]:
    return [f"[{s.cls}] {redact(s.text)[0][:EVIDENCE_CHARS]}" for s in draft.evidence]


def _create(store: Store, draft: Draft, actor: str) -> Path:
    if draft.slug in store.slugs():
        raise StoreError(
            f"{store.name}/{draft.slug}: a memory with this slug exists; the draft stays staged — "
            "toss it, or distil it again as an extension"
        )
    seen, replaces = from_flags(draft.flags, draft.source, draft.evidence)
    also = also_from_flags(draft.flags, draft.source, draft.evidence)  # the ladder's other witnesses
    meta: dict[str, Any] = {
        "name": draft.title or draft.slug,
        "description": draft.description,
        "type": draft.kind,
        "created": _today(),
        "distilled": _today(),
        "source": draft.source,
        "evidence": _evidence_meta(draft),
        **({"witnesses": [w.to_meta() for w in (seen, *also)]} if seen else {}),
    }
    where = f"{store.name}/{draft.slug}"
    write_checks.check_text(where, title=meta["name"], description=draft.description, body=draft.body)
    if replaces in store.slugs():  # refused before anything is written
        unreplaced(store, replaces, draft.slug, where)
    text = nt.render(nt.new_note(meta, draft.body))
    path = store.write_file(draft.slug, text.encode("utf-8"), actor=actor).path
    if replaces and replaces in store.slugs():  # a revision: the old memory stays, superseded
        supersede(store, replaces, draft.slug, actor=actor)
    return path


def _extend(store: Store, draft: Draft, actor: str) -> Path:
    """Append the body (and the evidence) to the memory it extends, read and written under
    the store lock (``Store.update``): an edit saved meanwhile is kept, the pour goes on it."""
    assert draft.extends is not None
    return store.update(draft.extends, partial(_extended, draft=draft), actor=actor).path


def _extended(old: Memory, *, draft: Draft) -> nt.MemoryFile:
    kept = old.note.meta.get("evidence")
    merged = [str(e) for e in kept] if isinstance(kept, list) else []
    merged += [e for e in _evidence_meta(draft) if e not in merged]
    note = old.note.with_body(old.note.body.rstrip("\n") + "\n\n" + draft.body.strip("\n") + "\n")
    seen, _ = from_flags(draft.flags, draft.source, draft.evidence)
    kept_w = old.note.meta.get("witnesses")
    witnesses = [*(kept_w if isinstance(kept_w, list) else []), *([seen.to_meta()] if seen else [])]
    return note.with_meta(distilled=_today(), evidence=merged, witnesses=witnesses or None)


def rewrite(store: Store, draft: Draft, *, title: str, description: str, body: str) -> Draft:
    """Write the scribe's fix over a staged draft and sign it again (the fix is the
    distiller's own text, so its mark stays valid); refused if the file changed meanwhile."""
    if _load_path(store, draft.path) != draft:
        raise StoreError(f"{draft.path}: the draft changed while it was judged; it stays as it is")
    desc = "" if draft.extends else _line(description)
    new = replace(draft, title=_line(title), description=desc, body=redact(body)[0].strip("\n") + "\n")
    write_atomic(draft.path, render(new, sign(store.state_dir, _signed(new))).encode("utf-8"))
    return new


def toss(store: Store, draft_id: str, reason: str) -> Path:
    """Move a staged draft to ``tossed/`` with the reason recorded in its comment."""
    path = _draft_path(store, draft_id)
    try:
        text = draft_file.read(path).decode("utf-8", errors="replace")
    except OSError as err:
        raise StoreError(f"{path}: cannot read the draft ({err.strerror})") from None
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    line = f"tossed: {stamp} {_line(reason)}\n"
    at = text.find("\n-->")
    text = text[: at + 1] + line + text[at + 1 :] if at >= 0 else f"<!-- {line}-->\n" + text
    target = free_name(drafts_dir(store) / "tossed", path.name)
    write_atomic(target, text.encode("utf-8"))
    path.unlink()
    return target


def _today() -> str:
    return _dt.date.today().isoformat()
