"""Typed candidates through the distiller: the model's JSON is untrusted up to the gate and
the brain's reader, and typed (``kura.distill.candidate.Candidate``) everywhere after.

The first tests are regression guards: they pin the verdicts and reasons the gate and the
brain's reader give malformed model JSON, and passed on the code before candidates were
typed, so the typing changed none of them."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Literal, get_args, get_type_hints

import pytest

from kura.config import ModelConfig
from kura.distill import model_steps
from kura.distill.gate import check, judge
from kura.distill.rules import spot
from kura.transcripts.segments import Segment

RAW = [
    Segment("USER", "Let's keep the archive disk mounted read-only from now on, please."),
    Segment("TOOL", "bench: 2.3 ms per call, 1,200 calls"),
    Segment("SELF", "I think the watcher should debounce for longer."),
]
USER_Q = "[USER] keep the archive disk mounted read-only"
SELF_Q = "[SELF] the watcher should debounce for longer"
NOT_OBJECT = "not a candidate: expected a JSON object"
BAD_KIND = "unknown or missing kind; expected one of user, feedback, project, reference, idea"


def verdicts(candidates: list[Any]) -> list[tuple[str, str, tuple[str, ...], bool, bool]]:
    return [
        (v.verdict, v.reason, v.classes, v.judgement, v.unverified_numbers) for v in judge(candidates, RAW)
    ]


# -- regression guards: the gate's verdicts on malformed model JSON --------------------------


@pytest.mark.parametrize("raw", ["a string", ["a", "list"], None, 42, 4.2, True])
def test_the_gate_drops_what_is_not_an_object(raw: Any) -> None:
    assert verdicts([raw]) == [("dropped", NOT_OBJECT, (), False, False)]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"kind": 5, "quotes": [USER_Q]}, BAD_KIND),
        ({"kind": "Project", "quotes": [USER_Q]}, BAD_KIND),
        ({"kind": ["project"], "quotes": [USER_Q]}, BAD_KIND),
        ({"topic": "t", "quotes": [USER_Q]}, BAD_KIND),
        ({"kind": "project", "quotes": USER_Q}, "quotes must be a list of strings"),
        ({"kind": "project", "quotes": {"0": USER_Q}}, "quotes must be a list of strings"),
        ({"kind": "project"}, "no quote survived the gate"),
        ({"kind": "project", "quotes": None}, "no quote survived the gate"),
        ({"kind": "project", "quotes": []}, "no quote survived the gate"),
    ],
)
def test_the_gate_drops_wrong_types_and_missing_quotes_with_the_same_reasons(
    raw: dict[str, Any], reason: str
) -> None:
    assert verdicts([raw]) == [("dropped", reason, (), False, False)]


def test_the_gate_ignores_quotes_that_are_not_strings_and_names_them_by_number() -> None:
    raw = {"kind": "project", "quotes": [5, None, {"class": "user", "text": 7}, USER_Q, "[USER] short"]}
    assert verdicts([raw]) == [
        (
            "kept",
            "USER evidence survived (quote 1: not a string; ignored; quote 2: not a string; ignored; "
            "quote 3: not a string; ignored; quote 5: under 12 characters; ignored)",
            ("USER",),
            False,
            False,
        )
    ]


def test_the_gate_reads_a_quote_given_as_an_object() -> None:
    raw = {
        "kind": "feedback",
        "quotes": [{"class": "user", "text": "keep the archive disk mounted read-only"}],
    }
    assert verdicts([raw]) == [("kept", "USER evidence survived", ("USER",), False, False)]


def test_the_gate_takes_only_the_json_true_as_judgement_and_a_string_why_for_numbers() -> None:
    loose = {"kind": "project", "quotes": [SELF_Q], "judgement": "true", "why": 1200}
    strict = {"kind": "project", "quotes": [SELF_Q], "judgement": True, "why": "it costs 1200 ms"}
    assert verdicts([loose, strict]) == [
        (
            "dropped",
            "only the agent's own words (SELF) survived; a fact needs USER, TOOL or ACT evidence",
            ("SELF",),
            False,
            False,
        ),
        (
            "kept",
            "kept as the agent's judgement: only SELF quotes survived, write it in the first person",
            ("SELF",),
            True,
            True,
        ),
    ]


def test_extra_keys_change_nothing() -> None:
    plain = {"topic": "disk", "kind": "project", "why": "asked", "quotes": [USER_Q]}
    extra = {**plain, "colour": "red", "rule": "scar", "replaces": 3, "said": ["x"], "keywords": "k"}
    assert (
        verdicts([extra])
        == verdicts([plain])
        == [("kept", "USER evidence survived", ("USER",), False, False)]
    )


def test_check_ignores_own_text_of_the_wrong_type() -> None:
    rows = check([{"kind": "project", "quotes": [USER_Q], "text": ["the disk is 4 TB"]}, "x"], RAW)
    assert [(r["verdict"], r["violations"]) for r in rows] == [("kept", []), ("dropped", [])]


def test_the_brain_reader_keeps_well_formed_items_and_counts_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    items = [
        {
            "topic": "  disk read-only  ",
            "kind": "project",
            "why": 3,
            "quotes": [USER_Q],
            "judgement": "yes",
            "x": 1,
        },
        {"topic": "", "kind": "project", "quotes": [USER_Q]},
        {"topic": "t", "kind": "fact", "quotes": [USER_Q]},
        {"topic": "t", "kind": "user", "quotes": [USER_Q, 5]},
        {"topic": "t", "kind": "user", "quotes": USER_Q},
        "a string",
        {"topic": "an idea", "kind": "idea", "judgement": True, "quotes": [USER_Q] * 8},
    ]
    replies = iter([json.dumps({"candidates": items})])
    monkeypatch.setattr(model_steps, "chat", lambda *_, **__: next(replies))
    minds = model_steps.Minds(brain=ModelConfig(role="brain", url="http://127.0.0.1:9/v1", model="unused"))
    found, malformed = model_steps.spot(minds, RAW)
    assert malformed == 5
    assert found == [
        {"topic": "disk read-only", "kind": "project", "why": "", "quotes": [USER_Q], "judgement": False,
         "rule": "brain"},
        {"topic": "an idea", "kind": "idea", "why": "", "quotes": [USER_Q] * 6, "judgement": True, "rule": "brain"},
    ]  # fmt: skip


# -- typed candidates ------------------------------------------------------------------------


def _conforms(candidate: object) -> None:
    from kura.distill.candidate import Candidate

    assert isinstance(candidate, dict)
    hints = get_type_hints(Candidate)
    assert Candidate.__required_keys__ <= candidate.keys() <= hints.keys(), candidate
    for key, value in candidate.items():
        expected = hints[key]
        origin = getattr(expected, "__origin__", expected)
        if origin is Literal:
            assert value in get_args(expected), (key, value)
            continue
        assert isinstance(value, origin), (key, value)
        if origin is list:
            assert all(isinstance(v, str) for v in value), (key, value)


def test_the_rule_spotter_returns_typed_candidates() -> None:
    segments = [
        Segment("USER", "Remember that the staging database lives on db-staging.internal."),
        Segment("SELF", "I will run the tests with pytest now."),
        Segment("USER", "No, we run the tests with make check in this repo."),
        Segment("ACT", 'Bash: {"command": "make test"}'),
        Segment("TOOL", "make: *** [test] Error 2"),
        Segment("ACT", 'Bash: {"command": "make check"}'),
        Segment("TOOL", "ran 42 checks, 0 failed"),
    ]
    found = spot(segments)
    assert [c["rule"] for c in found] == ["remember", "correction", "scar"]
    for candidate in found:
        _conforms(candidate)


# -- no dict[str, Any] for a candidate inside the distiller ------------------------------------

DISTILL = Path(__file__).resolve().parents[2] / "kura" / "distill"
CANDIDATE_NAMES = {"candidate", "candidates", "brained", "ruled"}
# the model boundary: these take a model's JSON as it came, and only they may
BOUNDARY = {("gate", "judge"), ("gate", "_judge_one"), ("gate", "check"), ("gate", "_own_text"),
            ("gate", "_decide"), ("model_steps", "_candidate")}  # fmt: skip
# JSON going out (a report, a frontmatter block), not candidates
JSON_OUT = {("drafts", "_signed"), ("gate", "check")}


def _offences() -> list[str]:
    found = []
    for path in sorted(DISTILL.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            where = (path.stem, node.name)
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for arg in args:
                shown = ast.unparse(arg.annotation) if arg.annotation else ""
                if arg.arg in CANDIDATE_NAMES and where not in BOUNDARY and "Candidate" not in shown:
                    found.append(f"{path.stem}.{node.name}({arg.arg}: {shown})")
            returned = ast.unparse(node.returns) if node.returns else ""
            untyped = "dict[str, Any]" in returned or "Mapping[str, Any]" in returned
            if untyped and node.name != "to_dict" and where not in JSON_OUT:
                found.append(f"{path.stem}.{node.name} -> {returned}")
    return found


def test_no_candidate_in_the_distiller_is_an_untyped_dict() -> None:
    assert _offences() == []
