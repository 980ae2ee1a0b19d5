"""What a person asked for becomes a memory; what they did not ask for, or what is no fact at
all, does not. Through ``kura distill run`` on real-shaped Claude Code transcripts:

- a request to remember in a ``direct-allowed`` store is a memory at once (no scribe), with
  the quote and the session ``kura why`` shows; in a ``distiller-only`` store it is a draft;
- "never remember that …", "don't remember …" are no requests: nothing is drafted, written
  or held in scratch;
- a tool's acknowledgement of its own work and the task a person set never enter scratch,
  while a fact said in passing in the same session still does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli

from kura.distill import drafts as dr
from kura.distill.rules import negated_request
from kura.life import scratch as sc
from kura.store.store import Store, init_store

SID = "7d2e9a14-5b3c-4f61-8e0a-2c9d1b7f4e58"
CWD = "/home/ana/ferry"


def cc(kind: str, content: Any, uuid: str, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", "model": "claude-sonnet-4-5", **message}
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": CWD, "sessionId": SID,
            "version": "2.1.3", "gitBranch": "main", "type": kind, "message": message, "uuid": uuid,
            "timestamp": "2026-12-01T10:02:11.480Z", **extra}  # fmt: skip


def tool(name: str, given: dict[str, Any], output: str, uuid: str) -> list[dict[str, Any]]:
    """An assistant's tool_use and the user-role tool_result that answers it, as Claude Code
    writes them (the result also carries ``toolUseResult``)."""
    call = {"type": "tool_use", "id": f"toolu_{uuid}", "name": name, "input": given}
    back = {"tool_use_id": f"toolu_{uuid}", "type": "tool_result", "content": output}
    return [
        cc("assistant", [call], f"a{uuid}"),
        cc("user", [back], f"r{uuid}", toolUseResult={"type": "text"}),
    ]


BOILERPLATE = [
    tool("Write", {"file_path": "/home/ana/ferry/src/main.rs", "content": "fn main() {}\n"},
         "File created successfully at: /home/ana/ferry/src/main.rs", "01"),
    tool("Edit", {"file_path": "/home/ana/ferry/Cargo.toml", "old_string": "a", "new_string": "b"},
         "The file /home/ana/ferry/Cargo.toml has been updated successfully.", "02"),
    tool("Edit", {"file_path": "/home/ana/ferry/src/lib.rs", "old_string": "x", "new_string": "y"},
         "The file /home/ana/ferry/src/lib.rs has been updated. Here's the result of running `cat -n` on a "
         "snippet of the edited file:", "03"),
    tool("TodoWrite", {"todos": [{"content": "Port the parser", "status": "in_progress"}]},
         "Todos have been modified successfully. Ensure that you continue to use the todo list to track "
         "your progress. Please proceed with the current tasks if applicable", "04"),
    tool("MultiEdit", {"file_path": "/home/ana/ferry/src/parse.rs", "edits": []},
         "Applied 3 edits to /home/ana/ferry/src/parse.rs:", "05"),
    tool("Write", {"file_path": "/home/ana/ferry/build.rs", "content": "//"},
         "File created successfully at: /home/ana/ferry/build.rs", "06"),
]  # fmt: skip
TASKS = ["Port this project to Rust.", "Add a retry to the uploader in src/upload.rs.",
         "Migrate the CI config to GitHub Actions v4."]  # fmt: skip
PASSING = "The staging database runs on db-staging.internal port 5433."
NEGATED = ["Never remember that the backup runs at 03:00 on db-main.",
           "Don't remember that the old VPN gateway is vpn-old.example.net."]  # fmt: skip
ASKED = "Remember that the staging cluster lives in eu-west-3."


def transcript(path: Path, *users: str) -> Path:
    rows: list[dict[str, Any]] = []
    for n, said in enumerate(users):
        rows.append(cc("user", said, f"u{n}"))
        rows.append(cc("assistant", [{"type": "text", "text": "On it."}], f"s{n}"))
    for pair in BOILERPLATE:
        rows += pair
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def configured(tmp_path: Path, policy: str) -> tuple[Store, Path, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    config = tmp_path / "kura.toml"
    config.write_text(f'[stores.test]\npath = "{store.root}"\nwrite_policy = "{policy}"\n\n'
                      f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n')  # fmt: skip
    return store, journals, config


def distil(config: Path) -> dict[str, Any]:
    done = Cli()("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert done.code == 0, done
    return json.loads(done.out)  # type: ignore[no-any-return]


def memories(store: Store) -> list[str]:
    return sorted(p.stem for p in store.root.glob("*.md") if p.name != "MEMORY.md")


def test_a_request_in_a_direct_allowed_store_is_a_memory_without_a_scribe(tmp_path: Path) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / f"{SID}.jsonl", ASKED)
    report = distil(config)
    assert (report["kept"], report["poured"]) == (1, 1)
    [slug] = memories(store)
    assert dr.drafts(store) == []  # poured, not waiting for anyone
    assert f"]({slug}.md)" in (store.root / "MEMORY.md").read_text(encoding="utf-8")
    why = Cli()("-c", str(config), "-s", "test", "why", slug)
    assert why.code == 0 and ASKED in why.out and SID in why.out and "SAID" in why.out


def test_a_request_in_a_distiller_only_store_waits_as_a_draft(tmp_path: Path) -> None:
    store, journals, config = configured(tmp_path, "distiller-only")
    transcript(journals / f"{SID}.jsonl", ASKED)
    report = distil(config)
    assert (report["kept"], report["poured"], len(report["drafts"])) == (1, 0, 1)
    assert memories(store) == []


@pytest.mark.parametrize("said", NEGATED)
def test_a_negated_request_is_no_request(tmp_path: Path, said: str) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / f"{SID}.jsonl", said)
    report = distil(config)
    assert (report["candidates"], report["drafts"]) == (0, [])
    assert memories(store) == [] and sc.load(store).items == {}


def test_tool_acknowledgements_and_tasks_never_enter_scratch(tmp_path: Path) -> None:
    store, journals, config = configured(tmp_path, "direct-allowed")
    transcript(journals / f"{SID}.jsonl", *TASKS, PASSING)
    distil(config)
    held = sorted(item.claim for item in sc.load(store).items.values())
    assert held == [PASSING]  # the one fact said in passing waits; nothing else was held


@pytest.mark.parametrize(
    ("text", "expected"),
    [*((n, True) for n in NEGATED), ("do not remember this: the VPN is vpn-2", True), (ASKED, False),
     ("Never push to main on a Friday.", False), ("Never forget that prod is eu-west-3.", False),
     ("Never store passwords in the repo.", False)],
)  # fmt: skip
def test_negated_requests_are_told_apart_from_rules(text: str, expected: bool) -> None:
    assert negated_request(text) is expected
