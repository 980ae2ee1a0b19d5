"""Editing from the web pages, in a real headless Chromium against a real ``kura serve``
(``tests/web/browsing.py``): a memory's description and body with the index line shown
before saving, forgetting one, fixing index drift and resolving a dead link from the health
page — each landing on disk as ``kura remember``, ``kura forget`` and ``kura doctor --fix``
leave it — and, over plain HTTP, every refusal: a read-only server, a store that takes no
direct writes, a form from another origin, a file changed since the form was opened, a secret.
Then the pages of a store too big to show at once, a page at a time."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import write_memory

DEPLOY_LINE = (
    "- [Prod deploy and rollback](deploy-commands.md) — prod deploy is `make deploy-prod TAG=vX.Y.Z` "
    "(Ansible, rolling fd-web-2 then fd-web-1); roll back with `make rollback TAG=<previous>`"
)


def _base(client: httpx.Client, slug: str) -> str:
    found = re.search(r'name="base" value="([0-9a-f]{64})"', client.get(f"/ui/edit/{slug}").text)
    assert found is not None
    return found.group(1)


# -- in Chromium -----------------------------------------------------------------------------


def test_edit_a_memory_with_the_index_line_shown_before_saving(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        before = (root / "deploy-commands.md").read_text(encoding="utf-8")
        page = pages(f"{url}/ui/memory/deploy-commands").page
        page.click("text=Edit")
        page.wait_for_selector("form.edit")
        assert page.input_value("input[name=description]").startswith("prod deploy is `make deploy-prod")
        page.fill(
            "input[name=description]", "prod deploy is `make ship TAG=vX.Y.Z` on fd-web-2 then fd-web-1"
        )
        body = page.input_value("textarea[name=body]").replace("make deploy-prod", "make ship")
        page.fill("textarea[name=body]", body)
        page.click("button[value=preview]")
        page.wait_for_selector("text=Index line after saving")
        previewed = page.inner_text("p:has-text('Index line after saving') code")
        assert previewed == (
            "- [Prod deploy and rollback](deploy-commands.md) — prod deploy is `make ship TAG=vX.Y.Z` "
            "on fd-web-2 then fd-web-1"
        )
        assert (root / "deploy-commands.md").read_text(encoding="utf-8") == before  # a preview writes nothing
        page.click("button[value=save]")
        page.wait_for_selector(".status")
        assert page.inner_text(".status") == "Saved, through the same door as kura remember."
        assert page.url.endswith("/ui/memory/deploy-commands?done=saved")
        after = (root / "deploy-commands.md").read_text(encoding="utf-8")
        assert "description: prod deploy is `make ship TAG=vX.Y.Z` on fd-web-2 then fd-web-1\n" in after
        assert "`make ship TAG=v1.9.3` runs" in after and "\r" not in after
        assert after.startswith("---\nname: Prod deploy and rollback\n")  # the rest kept
        index = (root / "MEMORY.md").read_text(encoding="utf-8")
        assert previewed in index.splitlines() and DEPLOY_LINE not in index


def test_forget_a_memory_with_a_reason(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        page = pages(f"{url}/ui/memory/deploy-commands").page
        page.fill("input[name=reason]", "we  moved to   the new pipeline")
        page.click("button:has-text('Forget')")
        page.wait_for_selector(".status")
        assert page.inner_text(".status").startswith("Forgotten: archived with your reason")
        text = (root / "deploy-commands.md").read_text(encoding="utf-8")
        assert re.search(r"^archived: '?\d{4}-\d\d-\d\d'?$", text, re.M)  # as kura forget writes it
        assert "archived_reason: we moved to the new pipeline" in text
        assert "deploy-commands.md" not in (root / "MEMORY.md").read_text(encoding="utf-8")
        assert page.locator("button:has-text('Forget')").count() == 0  # forgotten already


def test_fix_index_drift_and_resolve_a_dead_link_from_the_health_page(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        index = (root / "MEMORY.md").read_text(encoding="utf-8")
        (root / "MEMORY.md").write_text(index.replace(DEPLOY_LINE + "\n", ""), encoding="utf-8")
        topology = root / "deploy-topology.md"
        topology.write_text(
            topology.read_text(encoding="utf-8") + "\nSee [[no-such-runbook]].\n", encoding="utf-8"
        )
        page = pages(f"{url}/ui/health").page
        page.click("button:has-text('Fix index drift')")
        page.wait_for_selector(".status")
        assert page.inner_text(".status") == "Index drift fixed, as kura doctor --fix does."
        assert "(deploy-commands.md)" in (root / "MEMORY.md").read_text(encoding="utf-8")

        finding = page.locator("li:has-text('no-such-runbook')")
        finding.locator("a:has-text('edit')").click()
        page.wait_for_selector("form.edit")
        page.fill(
            "textarea[name=body]",
            page.input_value("textarea[name=body]").replace("[[no-such-runbook]]", "the runbook"),
        )
        page.click("button[value=save]")
        page.wait_for_selector(".status")
        assert "[[no-such-runbook]]" not in topology.read_text(encoding="utf-8")
        page.goto(f"{url}/ui/health")
        assert page.locator("li:has-text('no-such-runbook')").count() == 0


# -- refusals, over plain HTTP -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "said"),
    [({"readonly": True}, "--readonly"), ({"policy": "distiller-only"}, "distiller-only")],
)
def test_a_read_only_server_or_a_distiller_only_store_offers_no_edit_and_refuses_every_post(
    serve_sample: Any, options: dict[str, Any], said: str
) -> None:
    with serve_sample(**options) as (url, root), httpx.Client(base_url=url) as client:
        before = {p.name: p.read_bytes() for p in root.glob("*.md")}
        shown = client.get("/ui/memory/deploy-commands").text
        assert "/ui/edit/" not in shown and "/ui/forget/" not in shown
        assert said in client.get("/ui/edit/deploy-commands").text
        origin = {"Origin": url}
        posts = [
            ("/ui/edit/deploy-commands", {"do": "save", "description": "x", "body": "y", "base": ""}),
            ("/ui/forget/deploy-commands", {"reason": "no"}),
            ("/ui/health/fix", {"what": "index"}),
        ]
        for path, form in posts:
            answer = client.post(path, data=form, headers=origin)
            assert answer.status_code == 403, (options, path)
            assert said in answer.text
        assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before


def test_a_form_from_another_origin_changes_nothing(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        before = (root / "deploy-commands.md").read_bytes()
        form = {"do": "save", "description": "hijacked", "body": "", "base": _base(client, "deploy-commands")}
        for headers in ({}, {"Origin": "http://evil.example"}, {"Origin": "http://localhost:1"}):
            assert client.post("/ui/edit/deploy-commands", data=form, headers=headers).status_code == 403
            assert (
                client.post("/ui/forget/deploy-commands", data={"reason": "x"}, headers=headers).status_code
                == 403
            )
        assert (root / "deploy-commands.md").read_bytes() == before


def test_a_file_changed_since_the_form_was_opened_is_not_overwritten(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        base = _base(client, "deploy-commands")
        theirs = (root / "deploy-commands.md").read_text(encoding="utf-8").replace("v1.9.3", "v2.0.0")
        (root / "deploy-commands.md").write_text(theirs, encoding="utf-8")  # an editor saved meanwhile
        form = {"do": "save", "description": "mine", "body": "my body", "base": base}
        answer = client.post("/ui/edit/deploy-commands", data=form, headers={"Origin": url})
        assert answer.status_code == 409 and "changed since this form was opened" in answer.text
        assert ">my body</textarea>" in answer.text  # the person's text is kept in the form
        assert (root / "deploy-commands.md").read_text(encoding="utf-8") == theirs


def test_a_secret_or_an_empty_description_is_refused_with_the_text_kept(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        before = (root / "deploy-commands.md").read_bytes()
        for description, body, said in (
            ("deploy key", "token ghp_" + "a1B2" * 9, "secret"),
            ("   ", "a body", "description is empty"),
        ):
            form = {
                "do": "save",
                "description": description,
                "body": body,
                "base": _base(client, "deploy-commands"),
            }
            answer = client.post("/ui/edit/deploy-commands", data=form, headers={"Origin": url})
            assert answer.status_code == 422 and "Not saved:" in answer.text and said in answer.text
            assert (root / "deploy-commands.md").read_bytes() == before
        assert (
            client.post(
                "/ui/forget/deploy-commands", data={"reason": " "}, headers={"Origin": url}
            ).status_code
            == 422
        )
        assert client.post("/ui/health/fix", data={"what": "all"}, headers={"Origin": url}).status_code == 422


# -- big stores, a page at a time ---------------------------------------------------------------


def test_the_memories_and_the_findings_come_a_page_at_a_time(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url, timeout=120) as client:
        for n in range(410):
            write_memory(root, f"bulk-{n:03d}", "project", f"bulk fact {n}", body=f"see [[gone-{n:03d}]]")
        first = client.get("/ui/memories").text
        assert first.count('<li class="t-') == 200 and "page 1 of 3" in first
        assert "Showing 1–200 of 450 memories." in first
        last = client.get("/ui/memories?page=3").text
        assert last.count('<li class="t-') == 50 and "bulk-409" in last
        assert client.get("/ui/memories?page=99").text.count('<li class="t-') == 50  # the last page
        assert client.get("/ui/memories?page=0").status_code == 422
        users = client.get("/ui/memories?type=user").text
        assert "page 1 of" not in users and users.count('<li class="t-user"') == users.count('<li class="t-')
        health = client.get("/ui/health").text
        shown = re.search(r"Showing 1–200 of (\d+) findings\.", health)
        assert shown is not None and health.count('<li class="sev-') == 200
        assert int(shown.group(1)) >= 820  # 410 dead links, 410 memories not on the index
        pages = -(-int(shown.group(1)) // 200)
        assert client.get(f"/ui/health?page={pages}").text.count('<li class="sev-') == int(
            shown.group(1)
        ) - 200 * (pages - 1)
        assert len(client.get("/ui/memories").content) < 100_000
        write_memory(root, "zz-late", "user", "written after the page was shown")  # the kept listing goes
        assert "Showing 1–200 of 451 memories." in client.get("/ui/memories").text


def test_a_page_reads_no_more_than_it_shows(serve_sample: Any, monkeypatch: Any) -> None:
    """The memory page and search read the few files they name, never every memory (the
    links into a memory come from the catalog); before, each read all of them."""
    import kura.store.store as store_module

    with serve_sample() as (url, root), httpx.Client(base_url=url, timeout=120) as client:
        for n in range(300):
            write_memory(root, f"bulk-{n:03d}", "project", f"bulk fact {n} about the greenhouse")
        client.get("/ui/memory/deploy-commands")  # the catalog and the word index are current
        client.get("/ui/search?q=how+do+I+deploy")
        reads: list[str] = []
        real = store_module.Store.read

        def counted(self: Any, slug: str, path: Path | None = None) -> Any:
            reads.append(slug)
            return real(self, slug, path)

        monkeypatch.setattr(store_module.Store, "read", counted)
        page = client.get("/ui/memory/deploy-commands").text
        assert "no-friday-afternoon-deploys" in page and len(reads) <= 5, reads
        reads.clear()
        assert "deploy-commands" in client.get("/ui/search?q=how+do+I+deploy").text
        assert len(reads) < 100, len(reads)  # what recall reads, and the picks' descriptions


def test_the_health_page_asks_doctor_again_only_when_something_it_reads_changed(
    serve_sample: Any, monkeypatch: Any
) -> None:
    import kura.serve.pool as pool_module

    calls: list[str] = []
    real = pool_module.diagnose

    def counted(store: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(store.name)
        return real(store, *args, **kwargs)

    monkeypatch.setattr(pool_module, "diagnose", counted)
    with serve_sample() as (url, root), httpx.Client(base_url=url, timeout=120) as client:
        assert "no-such-runbook" not in client.get("/ui/health").text
        client.get("/ui/health?page=1")
        assert len(calls) == 1  # the second view is the first's report
        topology = root / "deploy-topology.md"
        topology.write_text(
            topology.read_text(encoding="utf-8") + "\nSee [[no-such-runbook]].\n", encoding="utf-8"
        )
        assert "no-such-runbook" in client.get("/ui/health").text and len(calls) == 2
        index = (root / "MEMORY.md").read_text(encoding="utf-8")
        (root / "MEMORY.md").write_text(index.replace(DEPLOY_LINE + "\n", ""), encoding="utf-8")
        assert "Fix index drift" in client.get("/ui/health").text and len(calls) == 3


def test_the_flat_frontmatter_is_quoted_from_the_health_page(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url, timeout=120) as client:
        flat = root / "flat-note.md"
        flat.write_text(
            "---\nname: flat note\ndescription: deploys: on fridays only\ntype: project\n---\n\nbody\n"
        )
        page = client.get("/ui/health").text
        assert "Quote the flat frontmatter" in page
        answer = client.post("/ui/health/fix", data={"what": "flat"}, headers={"Origin": url})
        assert answer.status_code == 303 and answer.headers["location"] == "/ui/health?done=flat"
        assert flat.read_text() == (
            "---\nname: flat note\ndescription: 'deploys: on fridays only'\ntype: project\n---\n\nbody\n"
        )
        again = client.post("/ui/health/fix", data={"what": "flat"}, headers={"Origin": url})
        assert again.headers["location"] == "/ui/health?done=nothing"
        assert "Nothing needed fixing." in client.get(again.headers["location"]).text


def test_the_kept_pages_follow_a_file_written_meanwhile(serve_sample: Any) -> None:
    """The graph, the memories and the links into a memory are kept between views, and
    drawn again as soon as a file changes."""
    with serve_sample() as (url, root), httpx.Client(base_url=url, timeout=120) as client:
        for path in ("/ui/graph", "/ui/memories", "/ui/memory/deploy-commands"):
            assert "freshly-written" not in client.get(path).text
        write_memory(root, "freshly-written", "project", "a new fact", body="see [[deploy-commands]]")
        assert '"slug": "freshly-written"' in client.get("/ui/graph").text
        assert "freshly-written" in client.get("/ui/memories").text
        assert "freshly-written" in client.get("/ui/memory/deploy-commands").text  # a link in
