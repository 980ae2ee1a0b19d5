"""The browser harness itself: Chromium starts, loads a route of a real kura server on a
loopback port, and a request to another origin is caught."""

from __future__ import annotations

import json
from typing import Any


def test_chromium_loads_a_route_of_a_real_server(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, _):
        opened = pages(f"{url}/health")
        assert json.loads(opened.page.inner_text("body"))["ok"] is True
        assert opened.foreign() == []


def test_a_request_to_another_origin_is_recorded(pages: Any, serve_sample: Any) -> None:
    with serve_sample() as (url, _):
        opened = pages(f"{url}/health")
        other = url.replace("127.0.0.1", "localhost")
        with opened.page.expect_request(lambda request: request.url.startswith(other)):
            opened.page.evaluate(f"fetch({json.dumps(other + '/health')}).catch(() => null)")
        assert opened.foreign() == [f"{other}/health"]
        opened.requests.clear()  # the check itself was the point; teardown would fail on it
