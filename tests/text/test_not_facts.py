"""What is no fact, told by its shape: a tool's acknowledgement of its own work (the lines
Claude Code's Write, Edit, MultiEdit and TodoWrite tools answer with) and the task a person
set; and the sentences that look like them and are facts."""

from __future__ import annotations

import pytest

from kura.text.not_facts import acknowledgement, not_a_fact, task

ACKNOWLEDGEMENTS = [
    "File created successfully at: /home/ana/ferry/src/main.rs",
    "The file /home/ana/ferry/Cargo.toml has been updated successfully.",
    "The file /home/ana/ferry/src/lib.rs has been updated. Here's the result of running `cat -n` on a "
    "snippet of the edited file:",
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
    "progress. Please proceed with the current tasks if applicable",
    "Applied 3 edits to /home/ana/ferry/src/parse.rs:",
]
TASKS = ["Port this project to Rust.", "Add a retry to the uploader in src/upload.rs.",
         "Migrate the CI config to GitHub Actions v4.", "Now rewrite the parser in Go."]  # fmt: skip
FACTS = ["The file server lives on nas-2.internal.", "ferry.toml has been the config since v2.",
         "Port 5433 is the staging database.", "Deploys go through the blue-green pipeline.",
         "make test runs the whole suite.", "The uploader retries 3 times before it gives up."]  # fmt: skip


@pytest.mark.parametrize("text", ACKNOWLEDGEMENTS)
def test_a_tools_acknowledgement_is_no_fact(text: str) -> None:
    assert acknowledgement(text) and not_a_fact(text)


@pytest.mark.parametrize("text", TASKS)
def test_a_task_set_is_no_fact(text: str) -> None:
    assert task(text) and not_a_fact(text)


@pytest.mark.parametrize("text", FACTS)
def test_facts_that_look_like_them_stay_facts(text: str) -> None:
    assert not not_a_fact(text)
