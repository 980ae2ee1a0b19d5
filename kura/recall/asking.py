"""Questions embedded on one thread.

A warm process (``kura serve``, an MCP server) embeds each question alone: a dozen tokens.
Its optimised session runs on every core this process may use, which is what a build's
batches of 32 memories want; for a dozen tokens the second thread is mostly woken and waited
for (onnxruntime's threads do not spin: ``kura.recall.embed.session_options``). Measured on
120 benchmark questions, the built-in integer model, load 5.7 on 2 cores: one thread 3.5–3.7
ms CPU and 4.0–4.2 ms wall a question, two threads 4.4–6.1 ms CPU and 4.7–7.8 ms wall.

So the built-in embedder's questions go through a session of the same model file with one
thread: the optimised session itself, which has had one thread since its builds run a batch
a core (``kura.recall.embed.session_options``). The products are integer and the rest is per
token, so the vectors are the same to float32 rounding. A quick embedder (one question, then
exit), a model folder or an endpoint is used as it is.
"""

from __future__ import annotations

import threading
from typing import Any

from kura.recall import embed

_making = threading.Lock()


def side(embedder: Any) -> Any:
    """What embeds questions for ``embedder``: its one-thread twin for the built-in optimised
    embedder (when it can be made), else ``embedder`` itself."""
    if type(embedder) is not embed.Embedder or embedder.quick:
        return embedder
    with _making:
        twin = _one_thread()
    return embedder if twin is None else twin


def _one_thread() -> embed.Embedder | None:
    twin = embed._load(False)  # the optimised session: one thread (made once, kept by its cache)
    return twin if isinstance(twin, embed.Embedder) else None
