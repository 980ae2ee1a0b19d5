"""Model endpoints that behave like real ones: plain OpenAI chat completions by default, the
reasoning switches only when a model's config asks for them, and a refusal that names the
fields the server would not take — each against a real scripted server on loopback."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import PLAIN_CHAT, Cli, ModelServer, make_store, write_memory
from test_brain import BRAIN_SESSION, CHARTER, GOOD, Script
from test_distill_run import ECHOED, SESSION, SID, jsonl
from test_weave import LONG, OLD

from kura.config import ModelConfig, parse_config
from kura.store.store import init_store

SECRET = "sk-proj-Qx7vR2mK9pL4wZ8nT3yB6cF1hJ5dG0sA"


def config_file(tmp_path: Path, store: Path, model: str) -> Path:
    """A kura.toml with one store and a thinker table whose body is ``model``."""
    config = tmp_path / "kura.toml"
    config.write_text(f'[stores.test]\npath = "{store}"\ncharter = "{CHARTER}"\n\n[models.thinker]\n{model}')
    return config


def plain(server: ModelServer) -> str:
    return f'url = "{server.url}"\nmodel = "m"\ntimeout = 5\n'


def recall_json(config: Path, question: str) -> dict[str, Any]:
    result = Cli()("-c", str(config), "-s", "test", "recall", question, "--json", "--top", "1")
    assert result.code == 0, result
    return json.loads(result.out)  # type: ignore[no-any-return]


@pytest.fixture
def sample(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Path:
    return sample_copy(tmp_path / "store")


def test_recall_with_a_plain_thinker_works_against_a_strict_server(
    tmp_path: Path, sample: Path, model_server: ModelServer
) -> None:
    model_server.strict = True
    model_server.replies = ['["tomasz-backend-oncall"]']
    found = recall_json(config_file(tmp_path, sample, plain(model_server)), "who carries the pager")
    assert (found["how"], found["degraded"], found["reason"]) == ("meaning", False, "")
    assert [p["slug"] for p in found["picked"]] == ["tomasz-backend-oncall"]
    assert set(model_server.requests[0]) <= PLAIN_CHAT


def test_weave_asks_the_scribe_for_triggers_against_a_strict_server(
    tmp_path: Path, model_server: ModelServer
) -> None:
    store = make_store(tmp_path / "store", [("a", "project", LONG, OLD)])
    model_server.strict = True
    model_server.replies = ["archive on slow disk hdd0, 8 TB; NVMe stays scratch"]
    config = config_file(tmp_path, store.root, plain(model_server))
    result = Cli()("-c", str(config), "-s", "test", "weave", "--json")
    assert result.code == 0, result
    woven = json.loads(result.out)
    assert woven["model_calls"] == 1 and woven["written"]
    woven_map = Path(woven["path"]).read_text()
    assert "- [a](a.md) — archive on slow disk hdd0, 8 TB; NVMe stays scratch" in woven_map
    assert [set(body) <= PLAIN_CHAT for body in model_server.requests] == [True]


def test_a_distill_pass_hears_brain_and_scribe_against_a_strict_server(
    tmp_path: Path, model_server: ModelServer
) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    write_memory(store.root, "archive", "project", "The archive disk is mounted read-only", body=ECHOED)
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", BRAIN_SESSION)
    config = config_file(tmp_path, store.root, plain(model_server))
    config.write_text(config.read_text() + f'\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n')
    script = Script({"candidates": [GOOD]}, novelty={"verdict": "new"}, scribe="no idea")
    model_server.strict = True
    model_server.respond = script
    result = Cli()("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    assert len(script.asked["brain"]) == 1 and report["model_calls"] == len(model_server.requests)
    assert all(set(body) <= PLAIN_CHAT for body in model_server.requests)
    assert "no answer" not in result.out and "did not answer" not in result.out


def test_existing_configs_keep_sending_the_switches_they_asked_for(tmp_path: Path) -> None:
    models = {
        "effort": 'effort = "low"',  # distill-kura's key: the switches, as before
        "thinking": "thinking = false",
        "vllm": 'dialect = "vllm"',
        "generic": 'dialect = "generic"',
        "openai": 'dialect = "openai"\neffort = "low"',  # a strict service: none, as before
        "chosen": 'effort = "high"\neffort_fields = ["chat_template_kwargs"]',
        "none": "effort_fields = []",
        "plain": "",
    }
    text = "".join(
        f'[model_profiles.{name}.thinker]\nurl = "u"\nmodel = "m"\n{body}\n' for name, body in models.items()
    )
    profiles = parse_config(tomllib.loads(text) | {"stores": {"s": {"path": str(tmp_path)}}}).model_profiles
    fields = {name: getattr(profiles[name]["thinker"], "effort_fields", None) for name in models}
    every = ("reasoning_effort", "thinking_effort", "chat_template_kwargs")
    assert fields == {"effort": every, "thinking": every, "vllm": every, "generic": every, "openai": (),
                      "chosen": ("chat_template_kwargs",), "none": (), "plain": ()}  # fmt: skip


def test_the_switches_sent_carry_the_effort(model_server: ModelServer) -> None:
    from kura.llm import chat

    model = ModelConfig(role="thinker", url=model_server.url, model="m", effort="high", effort_fields=(
        "reasoning_effort", "thinking_effort", "chat_template_kwargs"))  # fmt: skip
    assert chat(model, "s", "u") == "ok"
    sent = model_server.requests[0]
    assert (sent["reasoning_effort"], sent["thinking_effort"], sent["chat_template_kwargs"]) == (
        "high",
        "high",
        {"enable_thinking": True},
    )


@pytest.mark.parametrize("refusal", ["openai", "detail", "message"])
def test_a_refusal_names_the_fields_and_what_to_change(
    tmp_path: Path, sample: Path, model_server: ModelServer, refusal: str
) -> None:
    model_server.strict, model_server.refusal = True, refusal
    config = config_file(tmp_path, sample, plain(model_server) + 'effort = "low"\n')
    found = recall_json(config, "who is on call this week")
    assert (found["how"], found["degraded"]) == ("embedded", True)
    assert [p["slug"] for p in found["picked"]] == ["tomasz-backend-oncall"]
    named = (
        "`chat_template_kwargs`"
        if refusal == "openai"
        else "`chat_template_kwargs`, `reasoning_effort`, `thinking_effort`"
    )
    assert f"the server refused {named}" in found["reason"], found["reason"]
    assert "effort_fields = [" in found["reason"] and "[models.thinker]" in found["reason"]
    assert len(model_server.requests) == 1  # the same request would be refused again: not retried


def test_a_refused_extra_is_named_and_its_value_never_echoed(
    tmp_path: Path, sample: Path, model_server: ModelServer
) -> None:
    model_server.strict, model_server.refusal = True, "detail"
    config = config_file(tmp_path, sample, plain(model_server) + f'extra = {{ api_token = "{SECRET}" }}\n')
    result = Cli()("-c", str(config), "-s", "test", "recall", "who is on call this week", "--json")
    assert result.code == 0 and SECRET not in result.out + result.err
    reason = json.loads(result.out)["reason"]
    assert (
        "the server refused `api_token`" in reason
        and "remove api_token from extra in [models.thinker]" in reason
    )


def test_a_refusal_that_names_nothing_quotes_the_server_redacted(model_server: ModelServer) -> None:
    from kura.llm import NoAnswer, chat

    model_server.status = 400
    model_server.respond = lambda body: f"bad key {SECRET}"
    answer = chat(ModelConfig(role="brain", url=model_server.url, model="m", where="models.brain"), "s", "u")
    assert isinstance(answer, NoAnswer) and SECRET not in answer.reason
    assert answer.reason.startswith("the server refused the request (HTTP 400: "), answer.reason


def test_a_distill_pass_says_which_fields_the_brain_refused(
    tmp_path: Path, model_server: ModelServer
) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    jsonl(journals / "ferry" / f"{SID}.jsonl", BRAIN_SESSION)
    config = config_file(tmp_path, store.root, plain(model_server) + 'dialect = "vllm"\n')
    config.write_text(config.read_text() + f'\n[stores.test.distill.journals]\nclaude = ["{journals}"]\n')
    model_server.strict = True
    result = Cli()("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert result.code == 0, result
    models = json.loads(result.out)["models"]
    assert models == (
        f"brain m, scribe m — the brain (m at {model_server.url}) gave no answer (the server refused "
        "`chat_template_kwargs` (HTTP 400: Unrecognized request argument supplied: chat_template_kwargs); "
        'set effort_fields = ["reasoning_effort", "thinking_effort"] in [models.thinker] (or [] if it '
        "refuses those too)); the rest of the pass used rules"
    )
    assert len(model_server.requests) == 1


def test_a_drain_says_which_fields_the_scribe_refused_then_works_plain(
    tmp_path: Path, model_server: ModelServer
) -> None:
    store, _ = init_store(tmp_path / "store", name="test")
    write_memory(store.root, "archive", "project", "The archive disk is mounted read-only", body=ECHOED)
    jsonl(tmp_path / "journals" / "ferry" / f"{SID}.jsonl", SESSION)
    config = config_file(tmp_path, store.root, plain(model_server) + 'dialect = "vllm"\n')
    config.write_text(  # distiller-only: the request stays a draft for the scribe to judge
        config.read_text().replace(
            f'path = "{store.root}"\n', f'path = "{store.root}"\nwrite_policy = "distiller-only"\n'
        )
        + f'\n[stores.test.distill.journals]\nclaude = ["{tmp_path / "journals"}"]\n'
    )
    cli = Cli()
    assert cli("-c", str(config), "-s", "test", "distill", "run", "--no-model").code == 0
    model_server.strict = True
    drained = cli("-c", str(config), "-s", "test", "distill", "drain", "--json")
    reasons = [o["reason"] for o in json.loads(drained.out)["outcomes"]]
    assert drained.code == 1 and len(reasons) == 3 and len(model_server.requests) == 1
    assert reasons[0] == (
        f"the scribe (m at {model_server.url}) did not answer; the draft stays staged (the server refused "
        "`chat_template_kwargs` (HTTP 400: Unrecognized request argument supplied: chat_template_kwargs); "
        'set effort_fields = ["reasoning_effort", "thinking_effort"] in [models.thinker] (or [] if it '
        "refuses those too))"
    )
    assert reasons[1:] == ["not judged: the scribe did not answer"] * 2
    config.write_text(config.read_text().replace('dialect = "vllm"\n', ""))
    model_server.replies = ['{"verdict": "TOSS", "reason": "already in the README"}']
    drained = cli("-c", str(config), "-s", "test", "distill", "drain", "--json")
    assert drained.code == 0 and json.loads(drained.out)["tossed"] == 3
    assert all(set(body) <= PLAIN_CHAT for body in model_server.requests[1:])
