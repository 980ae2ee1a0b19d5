"""Picking by meaning with the thinker model: recognition, not retrieval.

The seed's method: every memory's recognition trigger goes into one prompt and a small
model names the ones that bear on the question. It catches what no word index can ("SSD
inference chips" ↔ "running the 2.6T model off an SSD tier") and costs one call. The menu
(the store's charter, the instructions, then one line per memory in the index's order) is
the system prompt and the question comes last, so the big stable block sits in a model
server's prefix cache and only the question is new each time.

Someone is waiting on a recall, so the thinker gets ``recall_timeout`` (10 s by default),
not the minutes a distill pass may give the same model: a hung endpoint costs one recall
that much, then the embedded answer, said to be degraded and why.

A menu past the thinker's token budget is not sent whole: the caller passes a shortlist
from embedded retrieval instead, and the menu says so.

The reply is read leniently and trusted never: a JSON array of slugs (inside a code fence
or after some prose is fine), else slugs named in prose are salvaged; every name must be a
memory of this store — anything else is dropped and reported, never opened. An empty array
means nothing bears on the question. A reply that is neither (or no reply at all) is
``Unheard`` with the reason, so recall falls back to embedded retrieval and says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kura.llm import NoAnswer, chat, clip, with_charter
from kura.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.config import ModelConfig

DEFAULT_BUDGET = 12_000  # tokens of menu a thinker is sent when its config names no budget
SHORTLIST = 40  # candidates offered when the whole menu is over budget
_INSTRUCTIONS = """You pick memories for an agent. Below is the memory index: one line per memory,
its slug, then what it is about. The user message is a question. Name the memories whose
subject bears on the question, judged by meaning, not shared words. If none does, name none.
Reply with only a JSON array of slugs, most relevant first, e.g. ["slug-one", "slug-two"], or []."""
_ARRAY = re.compile(r"\[[^\[\]]*\]", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Picked:
    slugs: tuple[str, ...]  # memories of this store, most relevant first
    unknown: tuple[str, ...]  # names the model gave that are not memories here
    salvaged: bool  # read from prose, not from a JSON array


@dataclass(frozen=True, slots=True)
class Unheard:
    reason: str


def menu(triggers: Mapping[str, str]) -> str:
    """One line per memory: ``slug — trigger``, newlines folded so a line is a memory."""
    return "\n".join(f"{slug} — {' '.join(trigger.split())}" for slug, trigger in triggers.items())


def fits(triggers: Mapping[str, str], model: ModelConfig) -> bool:
    return estimate_tokens(menu(triggers)) <= (model.budget or DEFAULT_BUDGET)


def ask(
    model: ModelConfig,
    question: str,
    triggers: Mapping[str, str],
    *,
    top: int,
    charter: str = "",
    shortlist: bool = False,
) -> Picked | Unheard:
    """The thinker's picks among ``triggers`` (slug → trigger) for ``question``."""
    scope = "\nThese are only the closest candidates, not the whole index." if shortlist else ""
    system = with_charter(charter, f"{_INSTRUCTIONS}{scope}\n\nMemory index:\n{menu(triggers)}\n")
    user = f"Question: {question}\nAt most {top} slugs."
    reply = chat(
        model, system, user, max_tokens=64 + 24 * top, timeout=min(model.recall_timeout, model.timeout)
    )
    if isinstance(reply, NoAnswer):
        return Unheard(unheard(model, reply))
    return read_reply(reply, triggers, top)


def unheard(model: ModelConfig, failed: NoAnswer) -> str:
    """Why the thinker gave no picks, with the key to change when one would help."""
    who = f"the thinker ({model.model} at {model.url})"
    if failed.kind == "timeout":
        hint = f"raise recall_timeout in {model.table} if it needs longer"
        return f"{who} {failed.reason}; recall answered without it ({hint})"
    return f"{who} did not answer: {failed.reason}"


def read_reply(reply: str, known: Mapping[str, str] | Sequence[str], top: int) -> Picked | Unheard:
    """Slugs from a model's reply: a JSON array if there is one, else names in the prose."""
    names = set(known)
    named = _json_names(reply)
    salvaged = named is None
    if named is None:
        named = _prose_names(reply, names)
        if not named:
            return Unheard(f"the thinker's reply was not a JSON array of slugs: {clip(reply)!r}")
    picked: list[str] = []
    unknown: list[str] = []
    for name in named:
        slug = name.strip().removesuffix(".md").strip("[]` ")
        if slug in names:
            if slug not in picked:
                picked.append(slug)
        elif name.strip() and name not in unknown:
            unknown.append(name)
    return Picked(tuple(picked[:top]), tuple(unknown), salvaged)


def _json_names(reply: str) -> list[str] | None:
    """The last JSON array of strings in the reply (models often think before answering)."""
    for candidate in reversed(_ARRAY.findall(reply)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
    return None


def _prose_names(reply: str, names: set[str]) -> list[str]:
    """Known slugs the reply mentions, in the order it mentions them."""
    found: list[tuple[int, str]] = []
    for match in re.finditer(r"[\w][\w.-]*", reply):
        word = match.group().rstrip(".").removesuffix(".md")
        if word in names:
            found.append((match.start(), word))
    return [slug for _, slug in sorted(found)]
