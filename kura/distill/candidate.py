"""A candidate memory, as the spotters propose it and the gate, novelty and composer read it.

A ``TypedDict``, not a dataclass: a model's candidate arrives as JSON, and the gate
(``kura.distill.gate.judge``) must judge whatever arrived — a candidate with a stray key, a
quote that is an object, a ``why`` that is a number — with the same verdicts and reasons as
a well-formed one. A ``TypedDict`` is that JSON object, typed: the gate and the brain's
reader (``kura.distill.model_steps``) are the only places that read an untyped object; every
spotter builds a ``Candidate`` and every later step reads one.

The gate's fields are ``topic``, ``kind``, ``why``, ``quotes`` (``"[USER] verbatim…"``) and
``judgement``; ``rule`` names the spotter (``remember``, ``correction``, ``scar``, ``brain``, and
``ladder`` for a claim that crossed on TIDE and CALLUS witnesses, ``kura.distill.ladder``).
The rest are the verbatim pieces the template composer and the novelty check need: ``said``
(the human's sentence), ``failed``/``failed_call``/``fixed``/``output``/``keywords`` (a scar)
and ``replaces`` (the memory a contradiction revises).
"""

from typing import Literal, NotRequired, TypedDict

Rule = Literal["remember", "correction", "scar", "brain", "ladder"]  # the spotter that proposed it


class Candidate(TypedDict):  # no `from __future__ import annotations`: it would hide NotRequired
    topic: str
    kind: str  # one of gate.KINDS for a spotter; a contradiction copies the memory's type
    why: str
    quotes: list[str]
    rule: Rule
    judgement: NotRequired[bool]
    said: NotRequired[str]
    failed: NotRequired[str]
    failed_call: NotRequired[str]
    fixed: NotRequired[str]
    output: NotRequired[str]
    keywords: NotRequired[list[str]]
    replaces: NotRequired[str]
