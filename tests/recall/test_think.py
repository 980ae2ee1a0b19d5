"""The thinker path of recall, against a scripted model server on loopback."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli, ModelServer

from kura.config import ModelConfig
from kura.recall.recall import FRAME, recall
from kura.recall.thinker import SHORTLIST, Picked, Unheard, read_reply
from kura.store.store import Store
from kura.text.tokens import estimate_tokens


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Store:
    root = sample_copy(tmp_path_factory.mktemp("think") / "store")
    return Store(root, charter="You serve the kura team. Be brief.")


def thinker(server: ModelServer, **options: object) -> ModelConfig:
    return ModelConfig(role="thinker", url=server.url, model="scripted", **options)  # type: ignore[arg-type]


def menu_of(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(messages[0]["content"])


def test_the_whole_index_goes_in_one_prompt_and_the_thinker_picks(
    sample: Store, model_server: ModelServer
) -> None:
    model_server.replies = ['["tomasz-backend-oncall"]']
    found = recall(sample, "who carries the pager", hops=0, thinker=thinker(model_server))
    assert (found.how, found.degraded) == ("meaning", False)
    assert [p.slug for p in found.picked] == ["tomasz-backend-oncall"] and found.picked[0].score is None
    assert found.context.startswith(FRAME + "\n\n=== tomasz-backend-oncall ===")
    system = menu_of(model_server.requests[0])
    assert system.startswith("You serve the kura team. Be brief.\n\n")  # the charter leads: one cached prefix
    for slug in sample.slugs():
        assert f"\n{slug} — " in system
    user = model_server.requests[0]["messages"][1]["content"]  # type: ignore[index]
    assert "who carries the pager" in user and "who carries the pager" not in system


def test_the_menu_is_byte_identical_between_questions(sample: Store, model_server: ModelServer) -> None:
    model_server.replies = ["[]"]
    recall(sample, "first question", thinker=thinker(model_server))
    recall(sample, "a different one", thinker=thinker(model_server))
    assert menu_of(model_server.requests[0]) == menu_of(model_server.requests[1])


def test_an_empty_array_means_nothing_bears_on_it(sample: Store, model_server: ModelServer) -> None:
    model_server.replies = ["Nothing here is about that.\n```json\n[]\n```"]
    found = recall(sample, "what is our cryptocurrency policy", thinker=thinker(model_server))
    assert (found.how, found.picked, found.context, found.degraded) == ("meaning", (), "", False)


def test_slugs_in_prose_are_salvaged_and_strangers_dropped(sample: Store, model_server: ModelServer) -> None:
    model_server.replies = [
        "The relevant ones are no-friday-afternoon-deploys.md and perhaps friday-freeze, "
        "also [[tomasz-backend-oncall]]."
    ]
    found = recall(sample, "can I ship late in the week", hops=0, thinker=thinker(model_server))
    assert found.how == "meaning"
    assert [p.slug for p in found.picked] == ["no-friday-afternoon-deploys", "tomasz-backend-oncall"]


def test_names_outside_the_store_are_never_opened(sample: Store, model_server: ModelServer) -> None:
    model_server.replies = ['["../../etc/passwd", "/etc/hosts", "MEMORY", "no-friday-afternoon-deploys"]']
    found = recall(sample, "deploys", hops=0, thinker=thinker(model_server))
    assert [p.slug for p in found.picked] == ["no-friday-afternoon-deploys"]
    assert "root:" not in found.context and "../../etc/passwd" in found.reason


@pytest.mark.parametrize("reply", ["I am not sure what you mean.", '{"slugs": 3}', "[1, 2]", "  "])
def test_a_malformed_reply_falls_back_to_embedded_and_says_so(
    sample: Store, model_server: ModelServer, reply: str
) -> None:
    model_server.replies = [reply]
    found = recall(sample, "who is on call this week", top=1, thinker=thinker(model_server))
    assert (found.how, found.degraded) == ("embedded", True)
    assert [p.slug for p in found.picked] == ["tomasz-backend-oncall"]
    assert "thinker" in found.reason


def test_a_slow_thinker_times_out_once_and_recall_still_answers(
    sample: Store, model_server: ModelServer
) -> None:
    model_server.delay = 3.0
    started = time.perf_counter()
    found = recall(sample, "who is on call this week", top=1, thinker=thinker(model_server, timeout=0.3))
    assert time.perf_counter() - started < 2.5  # one timeout, no retry of a timed-out call
    assert (found.how, found.degraded) == ("embedded", True) and "did not answer" in found.reason
    assert [p.slug for p in found.picked] == ["tomasz-backend-oncall"]


def test_an_unreachable_thinker_degrades(sample: Store) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ModelConfig(role="thinker", url=f"http://127.0.0.1:{port}/v1", model="gone", timeout=2)
    found = recall(sample, "can I ship on Friday evening", top=1, thinker=model)
    assert (found.how, found.degraded) == ("embedded", True) and f":{port}" in found.reason
    assert [p.slug for p in found.picked] == ["no-friday-afternoon-deploys"]


def test_a_server_error_is_retried_once_then_degrades(sample: Store, model_server: ModelServer) -> None:
    model_server.status = 503
    found = recall(sample, "deploy day", thinker=thinker(model_server))
    assert found.degraded and len(model_server.requests) == 2


def test_past_the_budget_the_thinker_sees_a_shortlist(sample: Store, model_server: ModelServer) -> None:
    model_server.replies = ['["no-friday-afternoon-deploys"]']
    found = recall(sample, "can I ship on Friday evening", hops=0, thinker=thinker(model_server, budget=200))
    assert found.how == "meaning" and [p.slug for p in found.picked] == ["no-friday-afternoon-deploys"]
    system = menu_of(model_server.requests[0])
    lines = system.split("Memory index:\n", 1)[1].strip().splitlines()
    assert "only the closest candidates" in system
    assert 3 <= len(lines) < min(SHORTLIST, len(sample.slugs()))
    assert estimate_tokens("\n".join(lines)) <= 200
    assert lines[0].startswith("no-friday-afternoon-deploys — ")  # the search's best comes first


def test_read_reply_takes_the_last_array_and_keeps_order() -> None:
    known = ["a-one", "b-two", "c-three"]
    picked = read_reply(
        'Thinking: maybe ["a-one"]... final answer: ["c-three", "a-one", "c-three"]', known, 5
    )
    assert picked == Picked(("c-three", "a-one"), (), False)
    assert read_reply("b-two, then a-one.", known, 1) == Picked(("b-two",), (), True)
    assert isinstance(read_reply("none of them", known, 3), Unheard)


def test_cli_uses_the_configured_thinker_and_no_model_skips_it(
    cli: Cli, sample: Store, model_server: ModelServer, tmp_path: Path
) -> None:
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.team]\npath = "{sample.root}"\n\n[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\n'
    )
    model_server.replies = ['["tomasz-backend-oncall"]']
    result = cli("-c", str(config), "recall", "pager duty", "--json", "--hops", "0")
    data = json.loads(result.out)
    assert (
        result.code == 0
        and data["how"] == "meaning"
        and data["picked"]
        == [{"slug": "tomasz-backend-oncall", "score": None, "asserted": True, "status": "asserted"}]
    )
    offline = cli("-c", str(config), "recall", "who is on call this week", "--no-model", "--top", "1")
    assert offline.code == 0 and offline.out.startswith("recall (embedded): tomasz-backend-oncall")
    assert len(model_server.requests) == 1
    model_server.replies = ["gibberish"]
    degraded = cli("-c", str(config), "recall", "who is on call this week", "--top", "1")
    assert degraded.out.startswith("recall (embedded — ⚠ degraded: the thinker's reply was not")


def test_a_hung_thinker_costs_a_recall_only_its_recall_timeout(
    tmp_path: Path, sample_copy: Callable[[Path], Path], model_server: ModelServer
) -> None:
    root = sample_copy(tmp_path / "store")
    model_server.hang = True  # accepts the request and never answers
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{root}"\n\n'
        f'[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\nrecall_timeout = 0.3\n'
    )
    result = Cli()(
        "-c", str(config), "-s", "test", "recall", "who is on call this week", "--json", "--top", "1"
    )
    assert result.code == 0, result
    found = json.loads(result.out)
    assert (found["how"], found["degraded"]) == ("embedded", True)
    assert [p["slug"] for p in found["picked"]] == ["tomasz-backend-oncall"]
    assert found["reason"] == (
        f"the thinker (m at {model_server.url}) did not answer within 0.3 s; recall answered without "
        "it (raise recall_timeout in [models.thinker] if it needs longer)"
    )
    deadline = time.monotonic() + 5  # the handler may record the request after the client gave up
    while not model_server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(model_server.requests) == 1  # a timeout is not retried


def test_a_thinker_waits_at_most_fifteen_seconds_on_the_recall_path_by_default() -> None:
    model = ModelConfig(role="thinker", url="http://h/v1", model="m")
    assert (model.timeout, model.recall_timeout) == (120.0, 10.0)
