"""A memory read by the name its links use (issue 30's links by title, followed by an agent):
``kura show "Deploy Script"`` reads the memory titled so when no slug matches, and
``--json`` says which memory each ``[[link]]`` reaches. Before, a link doctor and recall
resolved could not be followed: ``show`` said "no memory 'Deploy Script'"."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli

from kura.errors import NotFound
from kura.store.named import linked, read_named
from kura.store.store import Store

DEPLOY = (
    "---\nname: Deploy Script\ndescription: scripts/deploy.sh ships the app\ntype: project\n"
    "aliases:\n  - the deployer\n---\n\n`scripts/deploy.sh prod` ships the app.\n"
)
RELEASE = (
    "---\nname: Release steps\ndescription: a release goes out on Tuesdays\ntype: project\n---\n\n"
    "Run [[Deploy Script|the script]], then tell [[the deployer]]; see [[rollback]] and [[Nowhere]].\n"
)
ROLLBACK = "---\nname: Rollback\ndescription: redeploy the previous tag\ntype: project\n---\n\nRedeploy.\n"


def store_of(tmp_path: Path, **extra: str) -> Path:
    root = tmp_path / "s"
    root.mkdir(parents=True)
    files = {"deploy-sh": DEPLOY, "release-steps": RELEASE, "rollback": ROLLBACK, **extra}
    for slug, text in files.items():
        (root / f"{slug}.md").write_text(text, encoding="utf-8")
    return root


def test_show_reads_a_memory_by_its_title_or_alias_and_says_where_each_link_goes(
    cli: Cli, tmp_path: Path
) -> None:
    root = store_of(tmp_path)
    for name in ("Deploy Script", "deploy  script", "the deployer"):
        shown = cli("-s", str(root), "show", name)
        assert shown.code == 0, shown.err
        assert shown.out == DEPLOY
    data = json.loads(cli("-s", str(root), "show", "release-steps", "--json").out)
    assert data["links"] == ["Deploy Script", "the deployer", "rollback", "Nowhere"]
    assert data["linked"] == ["deploy-sh", "rollback", "Nowhere"]


def test_a_slug_wins_over_a_title_and_a_shared_title_reaches_neither(cli: Cli, tmp_path: Path) -> None:
    rollback_titled = (
        "---\nname: release-steps\ndescription: a title that is another's slug\ntype: project\n---\n\nx\n"
    )
    root = store_of(tmp_path, other=rollback_titled)
    assert read_named(Store(root), "release-steps")[1].slug == "release-steps"
    twin = "---\nname: Deploy Script\ndescription: the old one\ntype: project\n---\n\nold\n"
    root2 = store_of(tmp_path / "two", twin=twin)
    missing = cli("-s", str(root2), "show", "Deploy Script")
    assert missing.code == 2 and "no memory 'Deploy Script'" in missing.err
    try:
        read_named(Store(root2), "Deploy Script")
        raise AssertionError("a title two memories share was resolved")
    except NotFound:
        pass
    assert linked(Store(root2), ["Deploy Script", "rollback"]) == ["Deploy Script", "rollback"]
