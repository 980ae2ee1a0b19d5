"""The service both servers call: store selection, warm recall, writes and their limits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import write_memory

from kura.config import parse_config
from kura.errors import KuraError, NotFound, PolicyRefused, UnknownStore
from kura.serve.pool import InvalidRequest, StorePool


@pytest.fixture
def service(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Iterator[StorePool]:
    sample_copy(tmp_path / "team")
    (tmp_path / "vault").mkdir()
    write_memory(tmp_path / "vault", "archive-disk", "project", "the archive lives on the slow disk")
    (tmp_path / "vault" / "MEMORY.md").write_text("# I\n\n- [Archive](archive-disk.md) — slow disk\n")
    config = parse_config(
        {
            "stores": {
                "team": {"path": str(tmp_path / "team"), "label": "the team"},
                "vault": {"path": str(tmp_path / "vault"), "write_policy": "frozen", "charter": "Be terse."},
            },
            "modes": {"build": "team", "archive": "vault"},
        }
    )
    served = StorePool(config)
    yield served
    served.close()


def test_selectors_name_a_store_or_a_mode_never_a_path(service: StorePool, tmp_path: Path) -> None:
    assert service.name() == "team" and service.name("build") == "team" and service.name("archive") == "vault"
    with pytest.raises(UnknownStore, match=r"stores: team, vault; modes: archive, build"):
        service.name("nope")
    with pytest.raises(UnknownStore):
        service.name(str(tmp_path / "team"))  # the CLI takes folders; a server never does


def test_a_bound_service_serves_its_store_only(service: StorePool) -> None:
    bound = StorePool(service.config, bound="archive")
    assert bound.name() == "vault" and [s["name"] for s in bound.stores()] == ["vault"]
    with pytest.raises(UnknownStore, match="bound to store 'vault'"):
        bound.name("team")
    assert bound.name("vault") == "vault"


def test_warm_recall_sees_its_own_writes_and_hand_edits(service: StorePool, tmp_path: Path) -> None:
    first = service.recall("who is on call this week", top=1, hops=0)
    assert first["how"] == "embedded" and first["picked"]
    service.remember("ping-pong", "Sam and Aiko play table tennis at lunch", "Fridays.", type="user")
    assert service.recall("lunchtime ping pong matches", top=1, hops=0)["picked"][0]["slug"] == "ping-pong"
    write_memory(tmp_path / "team", "espresso", "user", "the espresso machine is descaled every Monday")
    service.changed({"espresso.md"})  # what the edge's watcher reports
    assert service.recall("coffee maker maintenance", top=1, hops=0)["picked"][0]["slug"] == "espresso"


def test_writes_respect_policy_and_readonly(service: StorePool) -> None:
    with pytest.raises(PolicyRefused, match="frozen"):
        service.remember("x", "anything", selector="vault")
    readonly = StorePool(service.config, readonly=True)
    assert [s["writable"] for s in readonly.stores()] == [False, False]
    with pytest.raises(PolicyRefused, match="read-only"):
        readonly.remember("x", "anything")
    assert not (Path(service.config.stores["team"].path) / "x.md").exists()


def test_bad_values_are_refused_before_work(service: StorePool) -> None:
    for kwargs in ({"top": 0}, {"top": 10_000}, {"hops": -1}, {"chars": 10}):
        with pytest.raises(InvalidRequest):
            service.recall("deploys", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest):
        service.recall("   ")
    with pytest.raises(InvalidRequest):
        service.memories(type="secrets")
    with pytest.raises(NotFound):
        service.memory("../team/MEMORY")


def test_reading_routes(service: StorePool) -> None:
    assert service.profile("archive") == {
        "store": "vault",
        "label": "",
        "charter": "Be terse.",
        "persona": "",
    }
    assert service.index_text("vault").startswith("# I")
    assert [m["slug"] for m in service.memories(selector="vault")] == ["archive-disk"]
    memory = service.memory("archive-disk", "vault")
    assert memory["path"] == "archive-disk.md" and memory["text"].startswith("---\n")
    block = service.prefill("team")
    assert block.state in ("current", "rewoven") and "<<<KURA-MAP" in block.text
    assert service.doctor("team")["healthy"] is True


def test_errors_name_stores_not_folders_and_bound_services_name_no_others(
    service: StorePool, tmp_path: Path
) -> None:
    with pytest.raises(NotFound) as missing:
        service.memory("nothing-here", "team")
    assert str(tmp_path) not in str(missing.value) and "<store team>" in str(missing.value)
    with pytest.raises(PolicyRefused) as frozen:
        service.remember("x", "anything", selector="vault")
    assert str(tmp_path) not in str(frozen.value)
    bound = StorePool(service.config, bound="vault")
    with pytest.raises(UnknownStore) as other:
        bound.name("nope")
    assert "team" not in str(other.value) and bound.health()["stores"] == 1


def test_the_index_route_never_follows_a_symlink_out_of_the_store(service: StorePool, tmp_path: Path) -> None:
    (tmp_path / "outside.md").write_text("secret plans\n")
    index = Path(service.config.stores["vault"].path) / "MEMORY.md"
    index.unlink()
    index.symlink_to(tmp_path / "outside.md")
    with pytest.raises(KuraError) as refused:
        service.index_text("vault")
    assert "secret plans" not in str(refused.value)


def test_paths_are_store_relative(service: StorePool) -> None:
    made = service.remember("deep/down/note", "a memory in a folder")
    assert made["path"] == "deep/down/note.md"
    assert service.memory("deep/down/note")["path"] == "deep/down/note.md"


def test_doctor_reports_a_store_too_broken_to_examine(service: StorePool, tmp_path: Path) -> None:
    index = Path(service.config.stores["vault"].path) / "MEMORY.md"
    index.unlink()
    index.symlink_to(tmp_path / "elsewhere.md")
    report = service.doctor("vault")
    assert report["healthy"] is False
    assert report["findings"][0] == {
        "check": "files", "severity": "error", "path": "MEMORY.md", "line": 1,
        "message": "a symlink to somewhere outside the store; the index was not read — replace it with the file itself",
    }  # fmt: skip
    assert str(tmp_path) not in str(report)
