"""A sentence-embedding model from a local folder: ``[embedder] path = DIR``.

The built-in MiniLM reads English; a person who has a bigger or multilingual model on disk
should be able to use it without a server. Any sentence-transformers folder exported to
ONNX will do: an ``.onnx`` file (``model.onnx`` or ``onnx/model.onnx``) and its
``tokenizer.json``, read by Hugging Face ``tokenizers``. What the folder's own config says is
what runs: the pooling (``1_Pooling/config.json``: mean, CLS, max or last token), the
prompts put before a question and before a memory (``config_sentence_transformers.json``,
e.g. e5's ``query: ``/``passage: ``), the token cap (``sentence_bert_config.json``). Vectors
are always L2-normalised, because search compares them by dot product (the folder's
``Normalize`` module, when listed, is the same step).

The vectors are keyed by a model id made from the folder's content (the ONNX file's and
tokenizer's sha256, the configs' bytes, the cap), so a changed or swapped model never mixes
its vectors with another's: every memory is embedded again. Hashing a large model file
costs a second, so the digest is kept in the user's cache keyed by the file's identity
(device, inode, size, mtime).

The folder is the user's, but it is read as untrusted input all the same: each file is
size-capped before it is read, each JSON must have the expected shape, and anything wrong
is an ``Unavailable`` naming the file, what is wrong and what to do — recall then answers
from words and says so. The ONNX session is made at the first embedding.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import EmbedFailed, KuraError
from kura.recall import int8
from kura.recall.embed import Unavailable, batches, session_options
from kura.recall.remote_embed import TEXT, RemoteEmbedder
from kura.store.atomic import write_atomic

if TYPE_CHECKING:
    import numpy as np

    from kura.config import ModelConfig

ONNX_NAMES = ("model.onnx", "onnx/model.onnx")
JSON_CAP = 1 << 20  # a config file larger than this is not a config file
TOKENIZER_CAP = 64 << 20  # the largest real tokenizer.json files are ~20 MB
MODEL_CAP = 4 << 30  # bytes of ONNX file: past that it is not a sentence embedder
MAX_TOKENS = 512  # when the folder does not say; the position table of BERT-like models
_POOLING_KEYS = {
    "mean": "pooling_mode_mean_tokens",
    "cls": "pooling_mode_cls_token",
    "max": "pooling_mode_max_tokens",
    "lasttoken": "pooling_mode_lasttoken",
}
POOLINGS = tuple(_POOLING_KEYS)
QUERY_KEYS = ("query", "search_query")
PASSAGE_KEYS = ("passage", "document", "search_document", "corpus")


@dataclass(frozen=True, slots=True)
class Folder:
    """What a model folder says, checked: enough to make its embedder."""

    root: Path
    onnx: Path
    tokenizer: Path
    pooling: str
    query_prefix: str
    passage_prefix: str
    max_tokens: int
    model_id: str


def read_folder(root: Path, *, max_tokens: int = 0) -> Folder | Unavailable:
    """The model folder at ``root`` checked, or what is wrong with it and what to do."""
    try:
        return _read(root.expanduser(), max_tokens)
    except _Bad as err:
        return Unavailable(f"[embedder] path = {root}: {err}")
    except (OSError, ValueError) as err:  # a name the folder's JSON gives: too long, a NUL in it, …
        return Unavailable(
            f"[embedder] path = {root}: a file it names cannot be read ({err}) — fix the folder"
        )


class _Bad(Exception):
    """What is wrong with a model folder (said in the Unavailable reason)."""


def _read(root: Path, cap: int) -> Folder:
    if not root.is_dir():
        raise _Bad("no such folder — set path to a sentence-transformers folder exported to ONNX")
    onnx = next((root / name for name in ONNX_NAMES if (root / name).is_file()), None)
    if onnx is None:
        raise _Bad(
            f"no {' or '.join(ONNX_NAMES)} — export the model to ONNX (optimum-cli export onnx) into it"
        )
    tokenizer = root / "tokenizer.json"
    if not tokenizer.is_file():
        raise _Bad("no tokenizer.json — save the model's fast tokenizer into the folder")
    _size(onnx, MODEL_CAP)
    _size(tokenizer, TOKENIZER_CAP)
    said = {name: _json(root / name) for name in _CONFIGS}
    pooling = _pooling(root, said["modules.json"])
    query, passage = _prompts(said["config_sentence_transformers.json"])
    limit = _max_tokens(said["sentence_bert_config.json"])
    limit = min(limit, cap) if cap > 0 else limit
    digest = hashlib.sha256()
    for part in (_digest(onnx), _digest(tokenizer), json.dumps(said, sort_keys=True), pooling, str(limit)):
        digest.update(part.encode() + b"\0")
    model_id = f"folder:{_plain(root.name)}-{digest.hexdigest()[:16]}/{TEXT}"
    return Folder(root, onnx, tokenizer, pooling, query, passage, limit, model_id)


_CONFIGS = ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json")


def _size(path: Path, cap: int) -> int:
    size = path.stat().st_size
    if size > cap:
        raise _Bad(f"{path.name} is {size:,} bytes, more than the {cap:,} kura reads — is it the right file?")
    return size


def _json(path: Path) -> Any:
    """A config file's JSON (None when the folder has none)."""
    if not path.is_file():
        return None
    _size(path, JSON_CAP)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        raise _Bad(f"{path.name} is not valid JSON ({err}) — fix or remove it") from None


def _pooling(root: Path, modules: Any) -> str:
    """The pooling the folder's Pooling module names (mean when it lists none)."""
    if modules is None:
        folder = root / "1_Pooling"
    else:
        if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
            raise _Bad("modules.json is not a list of modules — fix or remove it")
        pools = [m for m in modules if str(m.get("type", "")).endswith(".Pooling")]
        if not pools:
            return "mean"
        folder = root / str(pools[0].get("path", ""))
        if not folder.resolve().is_relative_to(root.resolve()):
            raise _Bad("modules.json names a Pooling folder outside the model folder")
    config = _json(folder / "config.json")
    if config is None:
        return "mean"
    if not isinstance(config, dict):
        raise _Bad(f"{folder.name}/config.json is not an object — fix or remove it")
    modes = [mode for mode, key in _POOLING_KEYS.items() if config.get(key) is True]
    if len(modes) != 1:
        raise _Bad(
            f"{folder.name}/config.json asks for {len(modes)} pooling modes; kura reads exactly one "
            f"of {', '.join(POOLINGS)}"
        )
    return modes[0]


def _prompts(config: Any) -> tuple[str, str]:
    """The prefixes put before a question and before a memory."""
    if config is None:
        return "", ""
    prompts = config.get("prompts") if isinstance(config, dict) else None
    if prompts is None:
        return "", ""
    if not isinstance(prompts, dict) or not all(isinstance(v, str) for v in prompts.values()):
        raise _Bad("config_sentence_transformers.json: prompts is not a map of names to strings")
    query = next((prompts[key] for key in QUERY_KEYS if key in prompts), "")
    return query, next((prompts[key] for key in PASSAGE_KEYS if key in prompts), "")


def _max_tokens(config: Any) -> int:
    if config is None:
        return MAX_TOKENS
    value = config.get("max_seq_length", MAX_TOKENS) if isinstance(config, dict) else None
    if type(value) is not int or not 2 < value <= 8192:
        raise _Bad(f"sentence_bert_config.json: max_seq_length must be a number of tokens, got {value!r}")
    return value


def _plain(name: str) -> str:
    kept = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:40]
    return kept or "model"


_DIGESTS = "folder-digests.json"


def _digest(path: Path) -> str:
    """``path``'s sha256, from the user's cache when the file is the one hashed before."""
    stat = path.stat()
    key, ident = str(path.resolve()), [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns]
    cache = int8.cache_dir() / _DIGESTS
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    entry = known.get(key)
    if isinstance(entry, dict) and entry.get("ident") == ident and isinstance(entry.get("sha"), str):
        return str(entry["sha"])
    sha = int8.digest(path)
    if sha is None:
        raise _Bad(f"cannot read {path.name}")
    known[key] = {"ident": ident, "sha": sha}
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache, json.dumps(known).encode())
    except (OSError, KuraError):  # a cache that cannot be written only costs a hash next time
        pass
    return sha


class FolderEmbedder:
    """Sentence vectors from a model folder's ONNX file and tokenizer."""

    quick = False

    def __init__(self, folder: Folder, *, multilingual: bool = False) -> None:
        self.folder = folder
        self.model_id = folder.model_id
        # the same folder read as an earlier text version (index_build.text_of): its rows are dropped
        self.superseded: tuple[str, ...] = (folder.model_id.rsplit("/", 1)[0] + "/t2",)
        self.multilingual = multilingual
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def full(self) -> FolderEmbedder:
        return self

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Memories' vectors: each text after the folder's passage prompt."""
        prefix = self.folder.passage_prefix
        return self._embed([prefix + text for text in texts], progress)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions' vectors: each text after the folder's query prompt."""
        return self._embed([self.folder.query_prefix + text for text in texts], None)

    def _embed(self, texts: list[str], progress: Callable[[int, int], None] | None) -> np.ndarray:
        import numpy as np

        session, tokenizer = self._loaded()
        encoded = [list(e.ids) for e in tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        parts: dict[int, np.ndarray] = {}
        done = 0
        for rows in batches([len(encoded[i]) for i in order]):
            chosen = order[done : done + rows]
            for i, vector in zip(chosen, self._batch(session, [encoded[i] for i in chosen]), strict=True):
                parts[i] = vector
            done += rows
            if progress is not None:
                progress(done, len(order))
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([parts[i] for i in range(len(texts))]).astype(np.float32)

    def _batch(self, session: Any, encoded: Sequence[Sequence[int]]) -> np.ndarray:
        import numpy as np

        width = max(1, max(len(ids) for ids in encoded))
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, sequence in enumerate(encoded):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        given = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        wanted = {i.name for i in session.get_inputs()}
        try:
            out = session.run(None, {name: value for name, value in given.items() if name in wanted})[0]
        except Exception as err:  # noqa: BLE001 - onnxruntime raises its own untyped errors
            raise EmbedFailed(f"the model in {self.folder.root} failed to run ({err})") from None
        return _unit(pooled(np.asarray(out, dtype=np.float32), mask, self.folder.pooling))

    def _loaded(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                self._session, self._tokenizer = _open(self.folder)
            return self._session, self._tokenizer


def _open(folder: Folder) -> tuple[Any, Any]:
    """The ONNX session and tokenizer; EmbedFailed naming the file that would not load."""
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as err:
        raise EmbedFailed(f"{err.name} is not installed (pip install kura installs it)") from None
    try:
        tokenizer = Tokenizer.from_file(str(folder.tokenizer))
    except Exception as err:  # noqa: BLE001 - tokenizers raises its own untyped errors
        raise EmbedFailed(f"{folder.tokenizer} is not a tokenizer kura can read ({err})") from None
    tokenizer.no_padding()
    tokenizer.enable_truncation(folder.max_tokens)
    try:
        session = onnxruntime.InferenceSession(
            str(folder.onnx), session_options(False), providers=["CPUExecutionProvider"]
        )
    except Exception as err:  # noqa: BLE001 - onnxruntime raises its own untyped errors
        raise EmbedFailed(f"{folder.onnx} is not an ONNX model onnxruntime can load ({err})") from None
    names = {i.name for i in session.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise EmbedFailed(f"{folder.onnx} takes {sorted(names)}, not input_ids and attention_mask")
    return session, tokenizer


def pooled(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """One vector per row of a (rows, tokens, dim) output; a (rows, dim) one is already pooled."""
    import numpy as np

    if hidden.ndim == 2:
        return hidden
    if hidden.ndim != 3 or hidden.shape[:2] != mask.shape:
        raise EmbedFailed(f"the model answered a tensor of shape {hidden.shape}, not (rows, tokens, dim)")
    weights = mask[:, :, None].astype(np.float32)
    out: np.ndarray
    if pooling == "cls":
        out = hidden[:, 0]
    elif pooling == "lasttoken":
        out = hidden[np.arange(len(mask)), np.clip(mask.sum(axis=1) - 1, 0, None)]
    elif pooling == "max":
        out = np.where(weights > 0, hidden, -np.inf).max(axis=1)
    else:
        out = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    return out


def _unit(rows: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: np.ndarray = (rows / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit


def folder_embedder(
    path: str, *, multilingual: bool = False, max_tokens: int = 0
) -> FolderEmbedder | Unavailable:
    """The embedder of the model folder at ``path``, or why it cannot be used."""
    folder = read_folder(Path(os.path.expanduser(path)), max_tokens=max_tokens)
    return folder if isinstance(folder, Unavailable) else FolderEmbedder(folder, multilingual=multilingual)


def configured(model: ModelConfig | None) -> RemoteEmbedder | FolderEmbedder | Unavailable | None:
    """The embedder a config names: a model folder (``path``), an endpoint, or None (built-in)."""
    if model is None:
        return None
    if model.path:
        return folder_embedder(model.path, multilingual=model.multilingual, max_tokens=model.max_tokens)
    return RemoteEmbedder(model)


def questions(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """Questions' vectors: through the embedder's query side when it has one (a prompt)."""
    ask = getattr(embedder, "queries", None)
    vectors: np.ndarray = ask(texts) if ask is not None else embedder.embed(texts)
    return vectors
