"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint, when one is configured.

Some people already run an embedding server (or pay for one) that is better than the small
model kura carries. ``[models.embedder]`` names it; vectors are keyed by its model name, so
they never mix with the built-in model's. The endpoint is asked in batches, the rows are put
back in input order by their ``index`` (servers may answer out of order), and every vector
is L2-normalised so a dot product is still the cosine. A server that is down, answers an
error, or answers the wrong number or shape of vectors raises ``EmbedFailed`` with the
reason; the search index then answers lexically and says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kura.errors import EmbedFailed as EmbedFailed  # its home was here; callers still import it from here

if TYPE_CHECKING:
    import numpy as np

    from kura.config import ModelConfig

BATCH = 64
TEXT = "t3"  # the version of ``index_build.text_of`` (``embed.MODEL_ID`` carries it too)


class RemoteEmbedder:
    quick = False

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self.model_id = f"api:{model.model}/{TEXT}"  # what is embedded changed: vectors made again
        self.superseded = (f"api:{model.model}", f"api:{model.model}/t2")
        self.multilingual = model.multilingual  # kura.recall.script: it reads more than English

    def full(self) -> RemoteEmbedder:
        return self

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """(len(texts), dim) float32 unit vectors."""
        import numpy as np

        rows: list[np.ndarray] = []
        for start in range(0, len(texts), BATCH):
            rows.extend(self._batch(list(texts[start : start + BATCH])))
            if progress is not None:
                progress(min(start + BATCH, len(texts)), len(texts))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.vstack(rows).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit: np.ndarray = matrix / np.clip(norms, 1e-12, None)
        return unit

    def _batch(self, texts: list[str]) -> list[np.ndarray]:
        import httpx
        import numpy as np

        headers = {"content-type": "application/json"}
        key = os.environ.get(self.model.api_key_env) if self.model.api_key_env else None
        if key:
            headers["authorization"] = f"Bearer {key}"
        url = self.model.url.rstrip("/") + "/embeddings"
        try:
            response = httpx.post(
                url,
                json={"model": self.model.model, "input": texts},
                headers=headers,
                timeout=self.model.timeout,
            )
            response.raise_for_status()
            data: Any = response.json()["data"]
            ordered = sorted(data, key=lambda row: row["index"])
            vectors = [np.asarray(row["embedding"], dtype=np.float32) for row in ordered]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as err:
            raise EmbedFailed(f"the embedder at {url} did not answer ({type(err).__name__}: {err})") from None
        widths = {vector.shape for vector in vectors}
        if len(vectors) != len(texts) or len(widths) != 1 or next(iter(widths))[0] == 0:
            raise EmbedFailed(f"the embedder at {url} answered {len(vectors)} vectors of shapes {widths} "
                              f"for {len(texts)} texts")  # fmt: skip
        return vectors
