"""Links by title (issue 30): ``[[Deploy Script]]`` and ``[[Deploy Script|the script]]``
resolve to the memory whose title (``name``) or ``aliases`` entry it is when no slug
matches — in doctor's link graph, ``kura graph`` and ``kura recall``'s walk — and doctor
names both files when two current memories answer to one title or alias. Before, every
such link was "dead". Real ``kura`` processes on real files."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli

from kura.files.link_names import aliases_of, fold, names
from kura.store import catalog
from kura.store.store import Store

DEPLOY = (
    "---\nname: Deploy Script\ndescription: scripts/deploy.sh ships the app to production\ntype: project\n"
    "aliases:\n  - the deployer\n  - ship script\n---\n\n`scripts/deploy.sh prod` ships the app.\n"
)
RELEASE = (
    "---\nname: Release steps\ndescription: how a release goes out on Tuesdays\ntype: project\n---\n\n"
    "Tag the release on Tuesday, then run [[Deploy Script|the script]].\n"
)
ROLLBACK = (
    "---\nname: Rollback\ndescription: a bad release is rolled back by redeploying the previous tag\n"
    "type: project\n---\n\nRedeploy the previous tag with [[the deployer]]; see [[release-steps]].\n"
)
SAME_TITLE = (
    "---\nname: deploy   script\ndescription: the old deploy script for the staging boxes\ntype: project\n"
    "---\n\nStaging used scripts/old-deploy.sh.\n"
)


def linked_store(tmp_path: Path) -> Path:
    root = tmp_path / "s"
    root.mkdir()
    for slug, text in (("deploy-sh", DEPLOY), ("release-steps", RELEASE), ("rollback", ROLLBACK)):
        (root / f"{slug}.md").write_text(text, encoding="utf-8")
    return root


def test_links_by_title_and_alias_resolve_in_doctor_and_the_graph(cli: Cli, tmp_path: Path) -> None:
    root = linked_store(tmp_path)
    doctor = cli("-s", str(root), "doctor", "--json")
    report = json.loads(doctor.out)
    said = [f["message"] for f in report["findings"]]
    assert not [m for m in said if "names no memory" in m], said
    assert report["graph"]["dead"] == [] and report["graph"]["resolved"] == 3
    graph = cli("-s", str(root), "graph", "--format", "json")
    assert graph.code == 0, graph
    edges = {(e["from"], e["to"]) for e in json.loads(graph.out)["edges"]}
    assert edges == {("release-steps", "deploy-sh"), ("rollback", "deploy-sh"), ("rollback", "release-steps")}


def test_recall_walks_a_link_by_title(cli: Cli, tmp_path: Path) -> None:
    root = linked_store(tmp_path)
    found = cli("-s", str(root), "recall", "when does a release go out on Tuesdays", "--top", "1",
                "--hops", "1", "--json")  # fmt: skip
    assert found.code == 0, found
    answer = json.loads(found.out)
    assert [p["slug"] for p in answer["picked"]] == ["release-steps"]
    assert answer["walked"] == ["deploy-sh"]


def test_doctor_names_both_files_of_an_ambiguous_title(cli: Cli, tmp_path: Path) -> None:
    root = linked_store(tmp_path)
    (root / "old-deploy.md").write_text(SAME_TITLE, encoding="utf-8")
    doctor = cli("-s", str(root), "doctor", "--json")
    findings = json.loads(doctor.out)["findings"]
    [title] = [f for f in findings if "answer to the title or alias" in f["message"]]
    assert title["severity"] == "warning"  # a link uses the name: it leads nowhere now
    assert "s/deploy-sh.md, s/old-deploy.md" in title["message"] and '"Deploy Script"' in title["message"]
    [dead] = [f for f in findings if "names no memory" in f["message"]]
    assert "[[Deploy Script]]" in dead["message"] and "deploy-sh.md, old-deploy.md" in dead["message"]
    assert "link by slug" in dead["message"]
    assert json.loads(doctor.out)["graph"]["resolved"] == 2  # the alias and the slug still resolve


def test_a_title_nobody_links_by_is_a_note_and_a_slug_always_wins(tmp_path: Path) -> None:
    root = linked_store(tmp_path)
    (root / "old-deploy.md").write_text(
        SAME_TITLE.replace("deploy   script", "Ship Script"), encoding="utf-8"
    )
    (root / "rollback.md").write_text(ROLLBACK.replace("[[the deployer]]", "[[release-steps]]"), "utf-8")
    (root / "release-steps.md").write_text(RELEASE.replace("Deploy Script|", "deploy-sh|"), "utf-8")
    entries = catalog.entries(Store(root))
    found = names(entries.values())
    assert found.ambiguous() == [("ship script", ("deploy-sh", "old-deploy"))]
    assert found.resolve("Ship  SCRIPT") is None and found.resolve("rollback") == "rollback"
    assert found.resolve("THE DEPLOYER") == "deploy-sh"


def test_aliases_are_read_as_obsidian_writes_them() -> None:
    assert aliases_of({"aliases": ["A  b", 3, "", "x\ny"], "alias": "c"}) == ("A b", "x y", "c")
    assert aliases_of({"aliases": {"not": "a list"}}) == ()
    assert fold("  Deploy \t Script ") == "deploy script"
