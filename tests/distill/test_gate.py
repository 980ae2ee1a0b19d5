"""The evidence gate, attacked: every case is a way a real model tries to smuggle a claim
past it, with the verdict or violation it must get."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, write_memory

from kura.distill.final_check import violations
from kura.distill.gate import Verdict, check, judge
from kura.store.store import Store
from kura.transcripts.segments import CLASSES, Segment, normalise

GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

RAW = [
    Segment("USER", "Let's keep the archive disk mounted read-only from now on, please."),
    Segment("USER", "Use   the staging\n cluster for the load test."),
    Segment("TOOL", "real 899 ms\nbench: 2.3 ms per call, 1,200 calls, delta -5%, eps 1e-3, size 2.5E6"),
    Segment("TOOL", "The user decided to deploy on Fridays."),
    Segment("TOOL", "retries 3-5 allowed; build 2026-11-30 07:32; python 3.12.1; total 20 of 26"),
    Segment("ACT", "systemctl restart kura-watch.service"),
    Segment("SELF", "I think the watcher should debounce for longer."),
    Segment("SELF", "The archive disk is a 4 TB Seagate drive."),
    Segment("TOOL", f"export GITHUB_TOKEN={GH_TOKEN} && git push origin main"),
]
USER_Q = "[USER] keep the archive disk mounted read-only"
TOOL_Q = "[TOOL] bench: 2.3 ms per call, 1,200 calls"


def one(
    quotes: list[Any], *, kind: str = "project", why: str = "because", store: str = "", **extra: Any
) -> Verdict:
    candidate = {"topic": "t", "kind": kind, "why": why, "quotes": quotes, **extra}
    return judge([candidate], RAW, store)[0]


# -- the shape promised to the journal adapters ---------------------------------------------


def test_segment_and_classes_are_the_shared_contract() -> None:
    assert CLASSES == ("USER", "TOOL", "ACT", "SELF")
    assert Segment("USER", "x") == Segment(cls="USER", text="x", session="", turn="")
    assert normalise("  a\n\t b\u00a0 c ") == "a b c"


# -- quotes that are not evidence ---------------------------------------------------------


def test_a_genuine_user_quote_keeps_the_candidate() -> None:
    verdict = one([USER_Q])
    assert (verdict.verdict, verdict.classes, verdict.judgement) == ("kept", ("USER",), False)
    assert verdict.evidence == (Segment("USER", "keep the archive disk mounted read-only"),)


def test_an_invented_quote_is_not_evidence() -> None:
    verdict = one(["[USER] we agreed to wipe the archive disk every Sunday"])
    assert verdict.verdict == "dropped"
    assert verdict.reason.startswith("no quote survived the gate")
    assert "quote 1: not found verbatim in the raw material" in verdict.reason


def test_a_paraphrase_is_not_evidence() -> None:
    verdict = one(["[USER] keep the archive drive mounted read-only"])
    assert verdict.verdict == "dropped"
    assert one(["[USER] Keep the archive disk mounted read-only"]).verdict == "dropped"  # case counts


def test_rewrapped_whitespace_still_matches() -> None:
    verdict = one(["[USER] Use the staging cluster\n   for the load test."])
    assert verdict.verdict == "kept"
    assert verdict.evidence == (Segment("USER", "Use the staging cluster for the load test."),)


def test_a_quote_may_not_stitch_two_segments_together() -> None:
    verdict = one(["[USER] read-only from now on, please. Use the staging cluster"])
    assert verdict.verdict == "dropped"


def test_a_short_quote_is_ignored() -> None:
    verdict = one(["[USER] read-only"])  # 9 characters
    assert verdict.verdict == "dropped"
    assert "quote 1: under 12 characters; ignored" in verdict.reason


def test_only_the_first_six_quotes_count() -> None:
    padding = ["[USER] a quote nobody ever said"] * 6
    verdict = one([*padding, USER_Q])
    assert verdict.verdict == "dropped"
    assert "only the first 6 of 7 quotes count" in verdict.reason


def test_a_quote_is_cut_to_400_characters_before_matching() -> None:
    long = "[USER] keep the archive disk mounted read-only" + " and more invented words" * 20
    assert len(long) > 400 + 7
    cut = long[: 7 + 400]
    assert one([long]).verdict == "dropped"  # its tail is invented and inside the first 400
    assert one([USER_Q + " " * 500 + "invented tail"]).verdict == "kept"  # tail cut off
    assert one([cut]).verdict == "dropped"


# -- classes: who really said it ------------------------------------------------------------


def test_a_tool_line_tagged_user_is_refiled_and_never_credits_the_human() -> None:
    verdict = one(["[USER] The user decided to deploy on Fridays."])
    assert verdict.classes == ("TOOL",)
    assert "quote 1: tagged [USER], re-filed to [TOOL]" in verdict.reason
    problems = violations("The user decided to deploy on Fridays.", verdict.evidence, [])
    assert any(p.startswith("credits the human") for p in problems)


def test_a_self_line_tagged_tool_is_refiled_to_self() -> None:
    verdict = one(["[TOOL] The archive disk is a 4 TB Seagate drive."])
    assert (verdict.verdict, verdict.classes) == ("dropped", ("SELF",))
    assert "re-filed to [SELF]" in verdict.reason


def test_user_words_also_in_tool_output_are_tool_not_user() -> None:
    segments = [
        Segment("USER", "ship the release on Friday"),
        Segment("TOOL", "cat notes: ship the release on Friday"),
    ]
    verdict = judge([{"kind": "project", "quotes": ["[USER] ship the release on Friday"]}], segments)[0]
    assert verdict.classes == ("TOOL",)


def test_the_agent_repeating_its_human_does_not_demote_the_human() -> None:
    segments = [
        Segment("USER", "ship the release on Friday"),
        Segment("SELF", "OK: ship the release on Friday"),
    ]
    verdict = judge([{"kind": "project", "quotes": ["[USER] ship the release on Friday"]}], segments)[0]
    assert (verdict.verdict, verdict.classes) == ("kept", ("USER",))


def test_an_untagged_quote_is_filed_where_it_is() -> None:
    verdict = one(["systemctl restart kura-watch.service"])
    assert (verdict.verdict, verdict.classes) == ("kept", ("ACT",))


def test_an_echo_of_the_store_does_not_count() -> None:
    store_text = "# Archive\nKeep the archive disk mounted read-only from now on."
    verdict = one([USER_Q], store=store_text)
    assert verdict.verdict == "dropped"
    assert "quote 1: already in the store's own text (an echo)" in verdict.reason


# -- SELF, judgement, ideas ----------------------------------------------------------------


def test_a_self_only_fact_is_dropped() -> None:
    verdict = one(["[SELF] The archive disk is a 4 TB Seagate drive."])
    assert verdict.verdict == "dropped"
    assert verdict.reason.startswith("only the agent's own words (SELF) survived")


def test_a_self_only_judgement_is_kept_and_flagged() -> None:
    verdict = one(["[SELF] the watcher should debounce for longer"], judgement=True)
    assert (verdict.verdict, verdict.judgement, verdict.classes) == ("kept", True, ("SELF",))


def test_a_judgement_with_hard_evidence_is_still_flagged_as_judgement() -> None:
    verdict = one([TOOL_Q, "[SELF] the watcher should debounce for longer"], judgement=True)
    assert (verdict.verdict, verdict.judgement, verdict.classes) == ("kept", True, ("TOOL", "SELF"))


def test_a_made_up_class_tag_is_refiled() -> None:
    verdict = one(["[HUMAN] systemctl restart kura-watch.service"])
    assert (verdict.verdict, verdict.classes) == ("kept", ("ACT",))
    assert "quote 1: tagged [HUMAN], re-filed to [ACT]" in verdict.reason


def test_a_quote_may_be_a_class_text_object() -> None:
    verdict = one([{"class": "USER", "text": "keep the archive disk mounted read-only"}])
    assert (verdict.verdict, verdict.classes) == ("kept", ("USER",))


def test_judgement_must_be_the_json_boolean() -> None:
    assert one(["[SELF] the watcher should debounce for longer"], judgement="true").verdict == "dropped"


def test_an_idea_needs_no_quotes() -> None:
    verdict = one([], kind="idea", why="a watcher that debounces by file size might be calmer")
    assert verdict.verdict == "idea"
    assert verdict.reason == "an idea: it goes to a seed file, never the store"


@pytest.mark.parametrize(
    "why",
    ["the user approved a nightly purge", "we decided to purge nightly", "it was agreed to purge nightly"],
)
def test_a_report_dressed_as_an_idea_is_dropped(why: str) -> None:
    verdict = one([], kind="idea", why=why)
    assert verdict.verdict == "dropped"
    assert verdict.reason.startswith("a report dressed as an idea")


def test_an_unknown_kind_or_a_non_object_is_dropped_not_a_crash() -> None:
    verdicts = judge([{"kind": "fact", "quotes": [USER_Q]}, "just a string"], RAW)
    assert [v.verdict for v in verdicts] == ["dropped", "dropped"]


# -- numbers in why -------------------------------------------------------------------------


def test_a_number_in_why_without_tool_evidence_is_flagged() -> None:
    assert one([USER_Q], why="the disk is 4 TB").unverified_numbers is True


def test_a_number_in_why_with_tool_evidence_is_not_flagged() -> None:
    assert one([USER_Q, TOOL_Q], why="2.3 ms per call").unverified_numbers is False


def test_why_without_numbers_is_not_flagged() -> None:
    assert one([USER_Q], why="the user wants it safe").unverified_numbers is False


# -- the final-surface floor ---------------------------------------------------------------

TOOL_EVIDENCE = [s for s in RAW if s.cls in ("TOOL", "ACT")]


def floor(text: str, evidence: list[Segment] | None = None, slugs: tuple[str, ...] = ()) -> list[str]:
    return violations(text, TOOL_EVIDENCE if evidence is None else evidence, slugs)


def test_numbers_in_the_evidence_pass() -> None:
    assert floor("Calls took 2.3 ms (899 ms in total) over 1,200 calls; eps 1e-3 and size 2.5E6.") == []


def test_derived_arithmetic_is_refused() -> None:
    assert floor("The cache made it 390x faster.") == [
        'the number "390" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)'
    ]


def test_borrowed_digits_are_refused() -> None:
    assert floor("total 20 of 26") == []
    assert floor("released in 2026", [Segment("TOOL", "total 20 of 26")]) != []  # not from 20 and 26 ...
    assert floor("built on 2026-11-30") == []  # ... but the date's own year is fine
    assert floor("built in 2026") == []
    assert floor("built on 2026-11-29") == [
        'the number "2026-11-29" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)'
    ]


def test_thousands_commas_are_forgiven_both_ways() -> None:
    assert floor("1200 calls") == []
    evidence = [Segment("TOOL", "1200 rows")]
    assert floor("1,200 rows", evidence) == []
    assert floor("12,00 rows", evidence) != []


def test_a_number_needs_tool_or_act_not_user_or_self() -> None:
    evidence = [Segment("USER", "keep 3 backups"), Segment("SELF", "the disk is 4 TB")]
    assert floor("keep 3 backups of the 4 TB disk", evidence) == [
        'the number "3" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)',
        'the number "4" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)',
    ]


def test_signs() -> None:
    assert floor("the delta was -5%") == []
    assert floor("it dropped 5%") == []  # the direction put in words
    assert floor("the delta was +5%") != []  # an invented direction
    assert floor("it grew by -3 points") != []
    assert floor("eps -1e-3") != []  # the exponent's sign is not the number's


def test_a_bullet_dash_is_not_a_minus_sign() -> None:
    assert floor("Findings:\n- 5% slower\n- 899 ms total\n* 2.3 ms each") == []
    assert floor("gpt-4 was used", [Segment("TOOL", "model: gpt-4")]) == []


def test_a_range_is_one_claim_with_both_ends_in_evidence() -> None:
    assert floor("allow 3–5 retries") == []
    assert floor("allow 3 - 5 retries") == []
    assert floor("allow 3-8 retries") == [
        'the range "3-8" is not in the TOOL/ACT evidence (both ends must be)'
    ]
    assert floor("between 899 and 2.3") == []


def test_scientific_notation_is_one_token() -> None:
    assert floor("eps 0.001") == []  # the same value
    assert floor("eps 1e-4") != []
    assert floor("eps 1e3") != []  # not licensed by 1 and a 3 elsewhere


def test_versions_and_times_are_literal() -> None:
    assert floor("python 3.12.1 at 07:32") == []
    assert floor("python 3.12.2") != []


def test_list_markers_and_link_names_are_not_numbers() -> None:
    assert floor("1. restart it\n2. check [[deploy-2024]]", slugs=("deploy-2024",)) == []
    assert floor("390. That is the speedup.") != []  # not a list marker


def test_numbers_in_a_secret_license_nothing() -> None:
    assert floor("build 8 of 9") == [
        'the number "8" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)',
        'the number "9" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)',
    ]  # though the token in the raw material is full of 8s and 9s


CREDITS = [
    "The user decided to keep the disk read-only.",
    "We agreed on read-only.",
    "They asked for a read-only disk.",
    "It was decided by the user that the disk stays read-only.",
    "Per the user's request, the disk is read-only.",
    "You chose read-only.",
    "The user has explicitly approved the change.",
    "They've decided: read-only.",
    "As requested, the disk stays read-only.",
    "This is the user's decision.",
    "The owner wants the disk read-only.",
    "The change was approved last week.",
    "At the user's request the disk was remounted.",
    "The human insisted on read-only.",
    "She said to keep it read-only.",
    "The disk stays read-only, which was the team's call.",
]


@pytest.mark.parametrize("text", CREDITS)
def test_credit_to_the_human_needs_a_user_quote(text: str) -> None:
    assert any(p.startswith("credits the human") for p in floor(text))
    with_user = [*TOOL_EVIDENCE, Segment("USER", "keep the archive disk mounted read-only")]
    assert not any(p.startswith("credits the human") for p in floor(text, with_user))


@pytest.mark.parametrize(
    "text",
    ["If you want to restart it, run systemctl.", "The port is chosen at random.", "I decided to wait."],
)
def test_plain_prose_is_not_credit(text: str) -> None:
    assert floor(text) == []


def test_an_invented_quotation_is_refused() -> None:
    evidence = [Segment("USER", "Let's keep the archive disk mounted read-only from now on, please.")]
    assert floor('The user said "never mount the archive disk writable".', evidence) == [
        'the quotation "never mount the archive disk writable" is not verbatim in the evidence'
    ]
    assert (
        floor("They wrote: \u201cLet's keep the archive disk mounted read-only from now on,\u201d", evidence)
        == []
    )
    assert floor('She said: "keep the archive disk \u2026 read-only"', evidence) == []  # an honest elision
    assert floor('She said: "read-only \u2026 keep the archive disk"', evidence) != []  # parts out of order
    assert floor('She said "no".', evidence) != []  # short, but presented as speech
    assert floor('a "hot" disk', evidence) == []  # a scare-quoted term is not speech


def test_a_dead_link_is_refused() -> None:
    assert floor("see [[archive-disk]] and [[gone|the old note]]", slugs=("archive-disk",)) == [
        "[[gone]] names no memory in the store"
    ]


# -- secrets --------------------------------------------------------------------------------


def test_a_secret_in_a_quote_is_redacted_from_everything() -> None:
    verdict = one([f"[TOOL] export GITHUB_TOKEN={GH_TOKEN} && git push origin main"])
    assert verdict.verdict == "kept"
    assert verdict.evidence == (
        Segment("TOOL", "export GITHUB_TOKEN=[redacted: GitHub token] && git push origin main"),
    )
    assert "redacted a secret (GitHub token)" in verdict.reason
    assert GH_TOKEN not in json.dumps(verdict.to_dict())


def test_a_secret_in_composed_text_is_a_violation_never_echoed() -> None:
    problems = floor(f"push with {GH_TOKEN} and see [[{GH_TOKEN}]]")
    assert problems[0] == "holds a secret (GitHub token); it was redacted and may not be written"
    assert GH_TOKEN not in json.dumps(problems)
    assert not any("8" in p for p in problems)  # not even a digit of it as a "number"


def test_a_private_key_is_cut_whole() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjE -----END OPENSSH PRIVATE KEY-----"
    verdict = judge(
        [{"kind": "reference", "quotes": [f"[TOOL] {key}"]}], [Segment("TOOL", f"cat id: {key}")]
    )[0]
    assert verdict.evidence == (Segment("TOOL", "[redacted: private key block]"),)


# -- the black-box door -----------------------------------------------------------------------


def write_raw(path: Path) -> Path:
    path.write_text("".join(json.dumps({"class": s.cls, "text": s.text}) + "\n" for s in RAW))
    return path


def test_distill_check_prints_one_verdict_per_candidate(cli: Cli, tmp_path: Path, store: Store) -> None:
    write_memory(store.root, "archive-disk", "project", "The archive disk")
    raw = write_raw(tmp_path / "raw.jsonl")
    candidates = [
        {
            "topic": "ro",
            "kind": "project",
            "why": "asked",
            "quotes": [USER_Q],
            "text": "The user decided it. See [[nope]].",
        },
        {"topic": "fast", "kind": "project", "why": "390x faster", "quotes": ["[SELF] invented words here"]},
        {"topic": "idea", "kind": "idea", "why": "debounce by size"},
    ]
    cands = tmp_path / "c.json"
    cands.write_text(json.dumps(candidates))
    text = tmp_path / "t.md"
    text.write_text("Linked from [[archive-disk]], 2.3 ms.\n")
    result = cli("-s", str(store.root), "distill", "check", "--raw", str(raw), "--candidates", str(cands),
                 "--text-file", str(text), "--json")  # fmt: skip
    assert result.code == 0, result
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert [r["verdict"] for r in rows] == ["kept", "dropped", "idea"]
    assert list(rows[0]) == [
        "verdict",
        "reason",
        "classes",
        "judgement",
        "unverified_numbers",
        "evidence",
        "violations",
    ]
    assert rows[0]["evidence"] == [{"class": "USER", "text": "keep the archive disk mounted read-only"}]
    assert rows[0]["violations"] == ['the number "2.3" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)',
                                     "[[nope]] names no memory in the store"]  # fmt: skip
    assert rows[1]["unverified_numbers"] is True
    assert rows[2]["violations"] == [
        'the number "2.3" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)'
    ]


def test_distill_check_flags_an_echo_from_the_named_store(cli: Cli, tmp_path: Path, store: Store) -> None:
    write_memory(store.root, "archive-ro", "project", "ro", body="Keep the archive disk mounted read-only.")
    raw = write_raw(tmp_path / "raw.jsonl")
    cands = tmp_path / "c.json"
    cands.write_text(json.dumps([{"kind": "project", "quotes": [USER_Q]}]))
    result = cli(
        "distill",
        "check",
        "--raw",
        str(raw),
        "--candidates",
        str(cands),
        "--store",
        str(store.root),
        "--json",
    )
    assert json.loads(result.out)["verdict"] == "dropped"


def test_distill_check_names_a_bad_candidates_file(cli: Cli, tmp_path: Path) -> None:
    raw = write_raw(tmp_path / "raw.jsonl")
    cands = tmp_path / "c.json"
    cands.write_text('[\n {"kind": "idea",}\n]')
    result = cli("distill", "check", "--raw", str(raw), "--candidates", str(cands), "--json")
    assert result.code == 1
    assert f"{cands}:2:" in result.err
    cands.write_text('{"kind": "idea"}')
    assert cli("distill", "check", "--raw", str(raw), "--candidates", str(cands)).code == 1


def test_distill_check_names_a_bad_raw_line(cli: Cli, tmp_path: Path) -> None:
    raw = tmp_path / "raw.jsonl"
    raw.write_text('{"class": "USER", "text": "fine words here"}\nnot json at all\n')
    cands = tmp_path / "c.json"
    cands.write_text("[]")
    result = cli("distill", "check", "--raw", str(raw), "--candidates", str(cands), "--json")
    assert result.code == 1
    assert f"{raw}:2:" in result.err


def test_distill_check_as_a_real_process(tmp_path: Path) -> None:
    raw = write_raw(tmp_path / "raw.jsonl")
    cands = tmp_path / "c.json"
    cands.write_text(
        json.dumps([{"kind": "reference", "quotes": [f"[TOOL] export GITHUB_TOKEN={GH_TOKEN}"]}])
    )
    command = [
        sys.executable,
        "-m",
        "kura",
        "distill",
        "check",
        "--raw",
        str(raw),
        "--candidates",
        str(cands),
        "--json",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert GH_TOKEN not in result.stdout + result.stderr
    assert json.loads(result.stdout)["evidence"] == [
        {"class": "TOOL", "text": "export GITHUB_TOKEN=[redacted: GitHub token]"}
    ]


def test_check_adds_the_candidates_own_text() -> None:
    rows = check(
        [{"kind": "project", "quotes": [TOOL_Q], "text": {"title": "Bench", "body": "2.3 ms, 390x"}}], RAW
    )
    assert rows[0]["violations"] == [
        'the number "390" is not in the TOOL/ACT evidence (no arithmetic, no borrowing)'
    ]


def test_distill_check_reads_the_last_line_of_a_finished_file(cli: Cli, tmp_path: Path) -> None:
    raw = tmp_path / "raw.jsonl"
    raw.write_text(
        '{"class": "USER", "text": "from now on always run the linter before pushing"}'
    )  # no newline
    cands = tmp_path / "cands.json"
    quote = "[USER] from now on always run the linter before pushing"
    cands.write_text(
        json.dumps([{"topic": "lint first", "kind": "feedback", "why": "asked", "quotes": [quote]}])
    )
    result = cli("distill", "check", "--raw", str(raw), "--candidates", str(cands), "--json")
    assert result.code == 0 and json.loads(result.out.splitlines()[0])["verdict"] == "kept"
