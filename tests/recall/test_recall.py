"""Recall on a real store: picks by meaning, walks links, fits the budget, says how."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli, write_memory

from kura.recall.embed import Unavailable
from kura.recall.recall import FRAME, recall, shorten
from kura.recall.search import SearchIndex
from kura.store.store import Store


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Store:
    root = sample_copy(tmp_path_factory.mktemp("recall") / "store")
    return Store(root)


def test_picks_walks_and_fits(sample: Store) -> None:
    found = recall(sample, "who is on call this week", top=1, hops=1, chars=3000)
    assert found.how == "embedded" and [h.slug for h in found.picked] == ["tomasz-backend-oncall"]
    links = sample.show("tomasz-backend-oncall").note.links
    assert list(found.walked) == [slug for slug in links if slug != "tomasz-backend-oncall"]
    assert found.context.startswith(FRAME + "\n\n=== tomasz-backend-oncall ===\n---\nname:")
    assert len(found.context) <= 3000 + 200


def test_an_unknown_subject_is_refused(sample: Store) -> None:
    found = recall(sample, "what is our cryptocurrency policy", hops=1)
    assert (found.picked, found.walked, found.context) == ((), (), "")


def test_without_the_embedder_recall_is_lexical_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    write_memory(root, "a", "project", "releases are tagged pre-release first", body="Tag pre-release. [[b]]")
    write_memory(root, "b", "user", "Mika reviews everything before it ships")
    store = Store(root)
    index = SearchIndex(store, embedder=Unavailable("onnxruntime is not installed"))
    index.update()
    found = recall(store, "pre-release tagging", index=index)
    assert (found.how, found.reason) == ("lexical", "onnxruntime is not installed")
    assert [h.slug for h in found.picked] == ["a"] and found.walked == ("b",)


def test_long_memories_keep_their_head_and_the_closest_paragraphs() -> None:
    text = "---\nname: x\ndescription: d\n---\n\n" + "\n\n".join(
        [
            "The backup runs nightly at 02:30.",
            "Unrelated " * 40,
            "Restore by copying the dump back.",
            "More filler " * 40,
        ]
    )
    short = shorten(text, "when does the backup run and how do I restore", 200)
    assert short.startswith("---\nname: x\ndescription: d\n---")
    assert "The backup runs nightly at 02:30." in short and "Restore by copying the dump back." in short
    assert "[…]" in short and "Unrelated" not in short


def test_recall_cli_json_and_exit_codes(cli: Cli, sample: Store) -> None:
    result = cli("-s", str(sample.root), "recall", "can I ship on Friday evening", "--json", "--top", "1")
    data = json.loads(result.out)
    assert result.code == 0 and data["how"] == "embedded"
    assert data["picked"][0]["slug"] == "no-friday-afternoon-deploys"
    assert set(data) >= {"store", "question", "how", "picked", "walked", "context", "chars", "elapsed"}
    none = cli("-s", str(sample.root), "recall", "what is our cryptocurrency policy")
    assert none.code == 2 and none.out.startswith("recall (embedded): nothing bears on this")


@pytest.mark.parametrize("question", ["", "   "])
def test_an_empty_question_is_refused_as_an_empty_task_is(tmp_path: Path, question: str) -> None:
    """``kura recall ""`` is a mistake, not a question nothing bears on: exit 1 saying so, as
    ``kura context ""`` and HTTP ``/recall`` refuse one (not exit 2, "nothing bears on this")."""
    import subprocess
    import sys

    write_memory(tmp_path / "s", "deploy", "project", "deploys go out on Tuesday")
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(tmp_path / "s"), "recall", question, "--no-model"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, ""), done
    assert done.stderr == "kura: error: the question is empty; ask about something\n"
