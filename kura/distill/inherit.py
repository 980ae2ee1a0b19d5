"""What a distill-kura store had in progress, carried into a kura store on import.

``kura import kura DIR`` copies the memories byte for byte (``kura.store.importer``); a
distill-kura store also holds work that is not a memory yet, in its workshop ``_still/``:

* **staged drafts** (``_still/drafts/*.md``): an HTML comment (source, kind, evidence
  classes, the gate's mark, ``evidence_manifest: sha256:…``, the quotes clipped to 300
  characters) above ``TITLE:``/``DESC:`` (or ``EXTENDS: slug``), curation lines and the
  body. distill-kura's mark is keyed by a key kura does not have, so a draft is not trusted
  for it: its quotes (whole, from ``_evidence/<sha256>.json`` when that file hashes to its
  name, else the clipped ones) go through kura's gate, its text through the final-surface
  floor, and what passes is staged as kura's own draft, signed with kura's key. One that
  fails is reported with the reason, never dropped in silence, and left where it was.
* **journal watermarks** (``_still/watermark.json``: ``"claude:<file name>"`` or
  ``"text:<path>"`` → byte offset; ``"dsh:<session>"`` → an event number): each one that
  names a transcript among the store's configured journals becomes kura's watermark for it
  (at the start of the line the offset falls in, moving forward only), so no transcript
  is read twice. One that names no configured journal, two of them, or an archive kura
  does not read is reported.
* **seeds** (``_still/seeds.jsonl``: ideas, ``{"text", "topic", "from", "at",
  "confirmed"}``): each open one is added to kura's seed file; a confirmed one has
  already graduated there and is reported, not re-opened.

Running the import again brings nothing twice: a draft already staged (the same source and
quotes), a watermark already as far, a seed already there are passed over.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kura.distill import drafts as dr
from kura.distill import seeds as sd
from kura.distill.final_check import violations
from kura.distill.gate import judge
from kura.distill.run import store_text
from kura.errors import KuraError
from kura.store.store import Store
from kura.transcripts import journals as jr
from kura.transcripts.segments import CLASSES, Segment
from kura.transcripts.sources import cursor_at

WORKSHOP = "_still"
SAME = "already here"  # brought by an earlier import (or kura is as far already): passed over
_QUOTE = re.compile(r"^\s*\[([A-Z]+)\] (.*)$")
_HEAD = re.compile(r"^(EXTENDS|TITLE|DESC|TAGS|BELONGS_BECAUSE|KEEP|MAY_FADE):[ \t]*(.*)$")
_MANIFEST = re.compile(r"evidence_manifest:\s*sha256:([0-9a-f]{64})")


@dataclass(frozen=True, slots=True)
class Carried:
    """What the import brought besides memories, and what it could not (each with why)."""

    drafts: list[str] = field(default_factory=list)
    watermarks: list[str] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)
    not_brought: list[str] = field(default_factory=list)

    @property
    def did_work(self) -> bool:
        return bool(self.drafts or self.watermarks or self.seeds)

    def to_dict(self) -> dict[str, list[str]]:
        return {
            "drafts": self.drafts,
            "watermarks": self.watermarks,
            "seeds": self.seeds,
            "not_brought": self.not_brought,
        }


def carry(store: Store, folder: Path, journals: jr.Journals) -> Carried:
    """Bring ``folder``'s (a distill-kura store's) drafts, watermarks and seeds into ``store``."""
    carried = Carried()
    workshop = folder / WORKSHOP
    if not workshop.is_dir():
        return carried
    for path in sorted((workshop / "drafts").glob("*.md")):
        _draft(store, folder, path, carried)
    _watermarks(store, workshop / "watermark.json", journals, carried)
    _seeds(store, workshop / "seeds.jsonl", carried)
    return carried


@dataclass(frozen=True, slots=True)
class _Draft:
    source: str
    kind: str
    head: dict[str, str]
    body: str
    quotes: list[Segment]
    judgement: bool  # distill-kura flagged it as the agent's judgement (🧠), not an outside fact


def _read_draft(folder: Path, raw: str) -> _Draft:
    comment, _, rest = raw.partition("-->")
    source = re.search(r"^\s*source:\s*(.+?)\s*$", comment, re.M)
    kind = re.search(r"kind:\s*(\w+)", comment)
    head: dict[str, str] = {}
    lines = rest.strip("\n").splitlines()
    while lines and (_HEAD.match(lines[0]) or not lines[0].strip()):
        if found := _HEAD.match(lines.pop(0)):
            head[found.group(1)] = found.group(2).strip()
    clipped = [Segment(m.group(1), m.group(2)) for line in comment.splitlines() if (m := _QUOTE.match(line))]
    quotes = _manifest_quotes(folder, comment) or clipped
    body = "\n".join(lines).strip()
    said = [q for q in quotes if q.cls in CLASSES]
    named = (source.group(1) if source else "", kind.group(1) if kind else "")
    return _Draft(*named, head, body, said, "judgement" in comment)


def _manifest_quotes(folder: Path, comment: str) -> list[Segment]:
    """The whole quotes from the draft's evidence manifest, if it is there and intact."""
    named = _MANIFEST.search(comment)
    path = folder / "_evidence" / f"{named.group(1)}.json" if named else None
    try:
        data = path.read_bytes() if path is not None and path.is_file() else b""
    except OSError:
        return []
    if not data or hashlib.sha256(data).hexdigest() != named.group(1):  # type: ignore[union-attr]
        return []
    try:
        quotes = json.loads(data).get("quotes") or []
    except (ValueError, AttributeError):
        return []
    return [Segment(str(q.get("class")), str(q.get("text"))) for q in quotes if isinstance(q, dict)]


def _draft(store: Store, folder: Path, path: Path, carried: Carried) -> None:
    name = f"draft {path.name}"
    try:
        draft = _read_draft(folder, path.read_text(encoding="utf-8", errors="replace"))
    except OSError as err:
        carried.not_brought.append(f"{name}: could not be read ({err.strerror or err})")
        return
    why = _staged(store, path.stem, draft)
    if why != SAME:
        (carried.drafts if why.startswith("staged") else carried.not_brought).append(f"{name}: {why}")


def _staged(store: Store, stem: str, draft: _Draft) -> str:
    """Stage ``draft`` through kura's gate and floor; what happened, as one phrase."""
    extends = draft.head.get("EXTENDS", "")
    if extends and extends not in set(store.slugs()):
        return f"extends {extends!r}, which this store does not hold; left in the distill-kura store"
    title = draft.head.get("TITLE", "") or stem
    quotes = [f"[{q.cls}] {q.text}" for q in draft.quotes]
    candidate = {
        "topic": extends or title,
        "kind": draft.kind,
        "why": "carried from distill-kura",
        "quotes": quotes,
        "judgement": draft.judgement,
    }
    verdict = judge([candidate], draft.quotes, store_text(store.list()))[0]
    if verdict.verdict != "kept":
        return f"refused by kura's gate ({verdict.reason}); left in the distill-kura store"
    source = f"distill-kura {draft.source}".strip()
    if dr.key(source, verdict.evidence) in {dr.key_of(d) for d in dr.staged(store) if not d.incomplete}:
        return SAME
    description = "" if extends else draft.head.get("DESC", "")
    found = violations("\n\n".join((title, description, draft.body)), verdict.evidence, store.slugs())
    if found:
        return f"refused by kura's final-surface floor ({found[0]}); left in the distill-kura store"
    try:
        staged = dr.stage(
            store,
            slug=extends or stem,
            kind=draft.kind,
            title="" if extends else title,
            description=description,
            body=draft.body,
            evidence=verdict.evidence,
            source=source,
            flags=("carried:distill-kura",),
            extends=extends or None,
        )
    except KuraError as err:
        return f"could not be staged ({err})"
    lost = [key for key in ("TAGS", "BELONGS_BECAUSE", "KEEP", "MAY_FADE") if draft.head.get(key)]
    dropped = f" (its {', '.join(lost)} not carried: kura's drafts have no such field)" if lost else ""
    return f"staged as {staged.stem}{dropped}"


def _watermarks(store: Store, path: Path, journals: jr.Journals, carried: Carried) -> None:
    marks = _json(path, carried)
    if not isinstance(marks, dict) or not marks:
        return
    sources, _ = jr.discover(journals, store.root)
    for key, value in sorted(marks.items()):
        said = _watermark(store, sources, str(key), value)
        if said != SAME:
            brought = said.startswith("read up to")
            (carried.watermarks if brought else carried.not_brought).append(f"watermark {key}: {said}")


def _watermark(store: Store, sources: Sequence[jr.Source], key: str, value: Any) -> str:
    adapter, _, name = key.partition(":")
    if adapter == "dsh":
        return "a DeepSeek Harness archive, which kura does not read; not brought"
    if type(value) is not int or value < 0:
        return f"not a byte offset ({value!r}); not brought"
    same = [s for s in sources if (s.path.name == name if adapter == "claude" else str(s.path) == name)]
    if len(same) != 1:
        where = f"[stores.{store.name}.distill.journals]"
        if not same:
            return (
                f"names no transcript among this store's journals; add its folder to {where} and import again"
            )
        return f"names {len(same)} transcripts of that name among this store's journals; not brought"
    try:
        cursor = cursor_at(same[0].path, value)
    except OSError as err:
        return f"{same[0].path} could not be read ({err.strerror or err}); not brought"
    if cursor is None:
        return f"{same[0].path} is shorter than the mark ({value} bytes); not brought"
    if not jr.adopt(store.state_dir, same[0], cursor):
        return SAME
    return f"read up to line {cursor.line} of {same[0].path}"


def _seeds(store: Store, path: Path, carried: Carried) -> None:
    if not path.is_file():
        return
    try:
        rows = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as err:
        carried.not_brought.append(f"{path}: could not be read ({err.strerror or err})")
        return
    for number, row in enumerate(rows, start=1):
        try:
            seed = json.loads(row) if row.strip() else None
        except ValueError:
            seed = None
        if not isinstance(seed, dict):
            if row.strip():
                carried.not_brought.append(f"seed at {path.name}:{number}: not a JSON object; not brought")
            continue
        topic = str(seed.get("topic") or seed.get("text") or "")
        if seed.get("confirmed"):
            carried.not_brought.append(f"seed {topic!r}: already confirmed in distill-kura; not re-opened")
        elif _seed(store, topic, seed):
            carried.seeds.append(topic)
        elif not sd.words(topic):
            carried.not_brought.append(
                f"seed {topic!r}: kura's seed file matches ideas by words; it has none"
            )


def _seed(store: Store, topic: str, seed: dict[str, Any]) -> bool:
    why, said_by, when = (str(seed.get(k) or "") for k in ("text", "from", "at"))
    return sd.add(store, topic=topic, why=why, source=f"distill-kura {said_by}".strip(), when=when or None)


def _json(path: Path, carried: Carried) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        carried.not_brought.append(f"{path}: could not be read ({err}); nothing of it brought")
        return None
