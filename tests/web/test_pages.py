"""The web app in a real headless Chromium against a real ``kura serve`` on a loopback port
(``tests/web/browsing.py``): every page loads, pour and toss go through the buttons and land
on disk as ``kura distill pour`` and the distiller's toss leave them, a tampered draft is
never pourable, memory text is inert, the token works through a cookie, a read-only server
offers no buttons, and nothing scrolls sideways at a phone's width."""

from __future__ import annotations

import re
from typing import Any

import httpx
from browsing import PHONE
from staging import stage_examples

from kura.serve.web_access import page_pass

PAGES = ("/", "/ui/drafts", "/ui/memories", "/ui/memory/deploy-commands", "/ui/search?q=how+do+I+deploy",
         "/ui/context?task=deploy+the+release+to+prod", "/ui/health")  # fmt: skip


def test_every_page_loads_against_the_sample_store(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        stage_examples(root)
        headings = {}
        for path in PAGES:
            opened = pages(url + path)
            headings[path] = opened.page.inner_text("h1")
            assert opened.page.locator("header nav a").count() == 7
        assert headings == {
            "/": "The map", "/ui/drafts": "Drafts", "/ui/memories": "Memories",
            "/ui/memory/deploy-commands": "Prod deploy and rollback", "/ui/search?q=how+do+I+deploy": "Search",
            "/ui/context?task=deploy+the+release+to+prod": "Context", "/ui/health": "Health",
        }  # fmt: skip


def test_pour_one_draft_and_toss_another_through_the_buttons(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        ids = stage_examples(root)
        opened = pages(f"{url}/ui/drafts")
        page = opened.page
        card = page.locator(f"#draft-{ids['pour']}")
        assert card.locator(".q .cls").all_inner_texts() == ["USER", "TOOL", "ACT", "SELF"]
        assert card.locator(".q-user").count() == 1 and card.locator(".q-self").count() == 1
        assert card.locator(".floor").inner_text() == "The final-surface floor finds nothing."
        card.locator("button.pour").click()
        page.wait_for_selector(".status")
        assert page.inner_text(".status").startswith(f"Poured {ids['pour']} into smoke-tests-before-deploy")
        memory = root / "smoke-tests-before-deploy.md"
        assert "Run the smoke tests before every deploy." in memory.read_text(encoding="utf-8")
        assert "(smoke-tests-before-deploy.md)" in (root / "MEMORY.md").read_text(encoding="utf-8")
        assert (root / ".kura/drafts/poured" / f"{ids['pour']}.md").is_file()
        assert page.locator(f"#draft-{ids['pour']}").count() == 0

        tossing = page.locator(f"#draft-{ids['toss']}")
        tossing.locator("input[name=reason]").fill("already said in   the style guide")
        tossing.locator(".toss button").click()
        page.wait_for_selector(f".status >> text=Tossed {ids['toss']}")
        assert not (root / ".kura/drafts" / f"{ids['toss']}.md").exists()
        tossed = (root / ".kura/drafts/tossed" / f"{ids['toss']}.md").read_text(encoding="utf-8")
        assert re.search(
            r"^tossed: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ already said in the style guide$", tossed, re.M
        )
        assert page.locator(f"#draft-{ids['toss']}").count() == 0


def test_a_tampered_draft_is_shown_marked_and_never_pourable(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        ids = stage_examples(root)
        page = pages(f"{url}/ui/drafts").page
        card = page.locator(f"#draft-{ids['tampered']}")
        assert card.locator(".badge.bad").inner_text() == "tampered — never poured"
        assert "the mark does not match" in card.locator(".floor").inner_text()
        assert card.locator("button.pour").count() == 0
        floor = page.locator(f"#draft-{ids['floor']}")  # the floor refuses it: no pour button either
        assert (
            "9999" in floor.locator(".floor.bad").inner_text() and floor.locator("button.pour").count() == 0
        )
        # the POST is refused on the server too, and the draft stays staged as it is
        answer = page.request.post(f"{url}/ui/drafts/{ids['tampered']}/pour", headers={"Origin": url})
        assert answer.status == 403
        assert "is tampered and is never poured" in answer.text()
        assert (root / ".kura/drafts" / f"{ids['tampered']}.md").is_file()
        assert not (root / "staging-password-rotation.md").exists()


def test_search_and_open_a_memory(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, _):
        page = pages(f"{url}/ui/search").page
        page.fill("input[name=q]", "how do I deploy to prod")
        page.click(".ask button")
        page.wait_for_selector(".how")
        assert page.inner_text(".how").startswith("how: ")
        first = page.locator("ol.list li a").first
        assert first.inner_text() == "deploy-commands"
        first.click()
        page.wait_for_selector(".why")
        assert page.inner_text("h1") == "Prod deploy and rollback"
        assert page.inner_text(".verdict").startswith("asserted")
        assert "deploy-topology" in page.locator(".links section").first.inner_text()
        assert "staging-env" in page.locator(".links section").last.inner_text()  # links in


def test_a_context_preview_shows_each_section_and_what_was_left_out(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, _):
        page = pages(f"{url}/ui/context").page
        page.fill("textarea[name=task]", "deploy the release to prod")
        page.fill("input[name=budget]", "1500")
        page.click(".ask button")
        page.wait_for_selector(".ctx")
        headings = page.locator(".ctx h2").all_inner_texts()
        assert headings[:2] == [
            "Pinned — the person's rules, and who they are:",
            "Map of what this store knows:",
        ]
        assert page.locator(".ctx table.left td", has_text="left out for budget").count() > 0
        assert re.match(r"\d+ of 1500 tokens · recall: ", page.inner_text(".how"))


def test_a_memory_with_a_script_renders_as_text(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        hostile = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
        (root / "hostile.md").write_text(
            f"---\nname: '<b>bold</b> {hostile}'\ndescription: a hostile note\ntype: project\n---\n\n{hostile}\n"
        )
        page = pages(f"{url}/ui/memory/hostile").page
        assert hostile in page.inner_text("pre.body")
        assert page.inner_text("h1") == f"<b>bold</b> {hostile}"
        assert page.locator("main script, main img, main b").count() == 0
        assert page.evaluate("window.pwned === undefined")


def test_with_a_token_a_page_asks_for_it_then_keeps_it_in_a_cookie(pages: Any, serve_sample: Any) -> None:
    token = "web-page-token-0123456789abcdef"
    with serve_sample(token=token) as (url, _):
        opened = pages(f"{url}/ui/drafts")
        page = opened.page
        assert page.inner_text("h1") == "A token is needed"
        assert "?token=YOUR_TOKEN" in page.inner_text("main")
        answer = page.goto(f"{url}/ui/memories?token={token}")
        assert answer.status == 200 and page.url == f"{url}/ui/memories"
        assert page.inner_text("h1") == "Memories"
        (cookie,) = page.context.cookies()
        assert (cookie["name"], cookie["value"], cookie["httpOnly"], cookie["sameSite"]) == (
            "kura_token", page_pass(token), True, "Strict")  # fmt: skip
        assert token not in cookie["value"]  # another port on this host may read it: never the token
        page.click("nav a[href='/ui/health']")
        page.wait_for_selector("h1:text('Health')")
        assert page.goto(f"{url}/ui/drafts?token=wrong").status == 401


def test_a_read_only_server_offers_no_buttons_and_refuses_the_post(pages: Any, serve_sample: Any) -> None:
    with serve_sample(readonly=True) as (url, root):
        ids = stage_examples(root)
        page = pages(f"{url}/ui/drafts").page
        assert page.inner_text(".readonly").startswith("Read-only here: this server runs with --readonly")
        assert page.locator("article.draft").count() == 4
        assert page.locator("form, button").count() == 0
        answer = page.request.post(f"{url}/ui/drafts/{ids['pour']}/pour", headers={"Origin": url})
        assert answer.status == 403
        tossed = page.request.post(
            f"{url}/ui/drafts/{ids['toss']}/toss", headers={"Origin": url}, form={"reason": "no"}
        )
        assert tossed.status == 403
        assert sorted(p.stem for p in (root / ".kura/drafts").glob("*.md")) == sorted(ids.values())
        assert not (root / "smoke-tests-before-deploy.md").exists()


def test_a_frozen_store_shows_its_drafts_without_buttons_and_refuses_the_post(serve_sample: Any) -> None:
    with serve_sample(policy="frozen") as (url, root), httpx.Client(base_url=url) as client:
        ids = stage_examples(root)
        page = client.get("/ui/drafts").text
        assert "Read-only here: store &#x27;sample&#x27; is frozen: nothing is poured into it" in page
        assert page.count('<article class="draft') == 4 and "<form" not in page and "<button" not in page
        answer = client.post(f"/ui/drafts/{ids['pour']}/pour", headers={"Origin": url})
        assert answer.status_code == 403 and not (root / "smoke-tests-before-deploy.md").exists()
        assert (root / ".kura/drafts" / f"{ids['pour']}.md").is_file()


def test_no_page_scrolls_sideways_at_a_phones_width(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, root):
        stage_examples(root)
        widths = {}
        for path in PAGES:
            page = pages(url + path, viewport=PHONE).page
            assert page.locator("header nav a").count() == 7, path  # the page itself, not an error
            widths[path] = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
        assert {path: w <= inner for path, (w, inner) in widths.items()} == dict.fromkeys(PAGES, True), widths


# -- fast, over plain HTTP -----------------------------------------------------------------


def test_every_page_carries_the_strict_headers(serve_sample: Any) -> None:
    with serve_sample() as (url, _), httpx.Client(base_url=url) as client:
        for path in (*PAGES, "/ui/static/kura.css", "/ui/memory/no-such-memory"):
            answer = client.get(path)
            csp = answer.headers["content-security-policy"]
            assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
            assert "'unsafe-inline'" not in csp and answer.headers["x-content-type-options"] == "nosniff", (
                path
            )
        assert client.get("/ui/memory/no-such-memory").status_code == 404


def test_memory_text_is_escaped_in_the_html(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        (root / "hostile.md").write_text(
            '---\nname: hostile\ndescription: "<script>alert(1)</script>"\ntype: project\n---\n\n'
            "</pre><script>alert(2)</script> [[deploy-commands]]\n"
        )
        text = client.get("/ui/memory/hostile").text
        assert "<script" not in text
        assert "&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_a_form_from_another_page_or_with_no_origin_changes_nothing(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        ids = stage_examples(root)
        where = f"/ui/drafts/{ids['pour']}/pour"
        assert client.post(where).status_code == 403  # no Origin: not this server's form
        assert client.post(where, headers={"Origin": "http://evil.example"}).status_code == 403
        assert client.post(where, headers={"Origin": "http://localhost:1"}).status_code == 403  # another port
        assert (root / ".kura/drafts" / f"{ids['pour']}.md").is_file()
        assert client.post(where, headers={"Origin": url}).status_code == 200
        assert (root / "smoke-tests-before-deploy.md").is_file()


def test_the_cookie_opens_the_pages_and_not_the_api(serve_sample: Any) -> None:
    token = "web-page-token-0123456789abcdef"
    with serve_sample(token=token) as (url, _), httpx.Client(base_url=url) as client:
        assert client.get("/ui/memories").status_code == 401
        assert "text/html" in client.get("/ui/memories").headers["content-type"]
        taken = client.get("/ui/memories?store=sample&token=" + token)
        assert taken.status_code == 303 and taken.headers["location"] == "/ui/memories?store=sample"
        assert "HttpOnly" in taken.headers["set-cookie"] and "SameSite=Strict" in taken.headers["set-cookie"]
        cookie = {"cookie": f"kura_token={page_pass(token)}"}
        assert client.get("/ui/memories", headers=cookie).status_code == 200
        assert client.get("/ui/memories", headers={"cookie": f"kura_token={token}"}).status_code == 401
        assert client.get("/memories", headers=cookie).status_code == 401  # the JSON API wants the bearer
        assert client.get("/ui/memories", headers={"cookie": "kura_token=wrong"}).status_code == 401


def test_a_store_named_by_prefix_or_query_is_kept_on_links(serve_sample: Any) -> None:
    with serve_sample() as (url, _), httpx.Client(base_url=url) as client:
        prefixed = client.get("/s/sample/ui/memories").text
        assert 'href="/s/sample/ui/memory/deploy-commands"' in prefixed
        queried = client.get("/ui/memories?store=sample").text
        assert 'href="/ui/memory/deploy-commands?store=sample"' in queried
        assert client.get("/s/nope/ui/memories").status_code == 404


def test_health_links_each_finding_to_its_memory_by_file_and_line(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        (root / "deploy-commands.md").write_text(
            (root / "deploy-commands.md").read_text(encoding="utf-8") + "\nSee also [[no-such-runbook]].\n"
        )
        page = client.get("/ui/health").text
        found = re.search(r'<a href="/ui/memory/deploy-commands">sample/deploy-commands\.md:(\d+)</a>', page)
        assert found is not None, page
        line = int(found.group(1))
        text = (root / "deploy-commands.md").read_text(encoding="utf-8").splitlines()
        assert "[[no-such-runbook]]" in text[line - 1]


def test_with_a_token_the_pages_own_form_pours_under_its_own_host_name(serve_sample: Any) -> None:
    token = "web-page-token-0123456789abcdef"
    with serve_sample(token=token) as (url, root), httpx.Client(base_url=url) as client:
        ids = stage_examples(root)
        ours = {"host": "kura.example:8085", "cookie": f"kura_token={page_pass(token)}"}
        assert client.get("/ui/drafts", headers=ours).status_code == 200
        where = f"/ui/drafts/{ids['pour']}/pour"
        other = client.post(where, headers={**ours, "origin": "http://evil.example:8085"})
        assert other.status_code == 403 and (root / ".kura/drafts" / f"{ids['pour']}.md").is_file()
        assert client.post(where, headers={**ours, "origin": "http://kura.example:8085"}).status_code == 200
        assert (root / "smoke-tests-before-deploy.md").is_file()


def test_a_malformed_or_unknown_draft_id_is_a_client_error_not_a_crash(serve_sample: Any) -> None:
    with serve_sample() as (url, root), httpx.Client(base_url=url) as client:
        ids = stage_examples(root)
        before = sorted(p.name for p in root.rglob("*") if p.is_file())
        for draft, status in ((".hidden", 422), ("..x", 422), ("no-such-draft", 404)):
            for action, form in (("pour", None), ("toss", {"reason": "bad"})):
                answer = client.post(f"/ui/drafts/{draft}/{action}", headers={"Origin": url}, data=form)
                assert answer.status_code == status, (draft, action, answer.status_code)
                assert "text/html" in answer.headers["content-type"]
                assert "not a draft id" in answer.text or "no staged draft" in answer.text
        assert sorted(p.name for p in root.rglob("*") if p.is_file()) == before
        assert (root / ".kura/drafts" / f"{ids['pour']}.md").is_file()


def test_an_odd_budget_is_a_client_error_not_a_crash(serve_sample: Any) -> None:
    """Found in review: ``str.isdigit`` takes "²" and int() refuses it (and 5,000 digits): 500."""
    with serve_sample() as (url, _), httpx.Client(base_url=url) as client:
        for budget in ("²", "9" * 5000, "abc", "-5", "99999999"):
            answer = client.get("/ui/context", params={"task": "deploy", "budget": budget})
            assert answer.status_code == 422, (budget[:10], answer.status_code)
            assert "text/html" in answer.headers["content-type"] and "budget must be" in answer.text
