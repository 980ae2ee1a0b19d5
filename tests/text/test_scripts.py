"""``kura.text.scripts.has_cjk``: the Han, kana and hangul ranges, compiled only when a text
holds something outside ASCII (the class took ~7 ms to compile in every process that imported
the module). The same answer as the one character class, at each range's edges."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kura.text import scripts

BENCH = Path(__file__).resolve().parents[2] / "bench"
EDGES = [(0x3005, 0x3005), (0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
         (0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F), (0xFF66, 0xFF9F)]  # fmt: skip


def test_has_cjk_is_the_character_class_at_every_edge() -> None:
    whole = re.compile(scripts._CJK_CLASS)
    probes = {c for lo, hi in EDGES for c in (lo - 1, lo, hi, hi + 1)} | {0x41, 0xE9, 0x416, 0x1F600}
    for code in sorted(probes):
        text = f"abc {chr(code)} def"
        assert scripts.has_cjk(text) == (whole.search(text) is not None), hex(code)
    assert scripts.has_cjk("デプロイ") and scripts.has_cjk("배포") and scripts.has_cjk("部署")
    assert not scripts.has_cjk("deploy on Fridays") and not scripts.has_cjk("développer, деплой")


def test_importing_the_module_compiles_no_cjk_class() -> None:
    probe = "import re, kura.text.scripts as s; print(s._cjk.cache_info().currsize)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"


def _pieces_one_by_one(run: str) -> list[str]:
    """``scripts.pieces`` as it was written first: one ``script`` call a character."""
    out: list[str] = []
    start, before = 0, "hira"
    for end in range(1, len(run) + 1):
        if end < len(run) and scripts.script(run[end]) == scripts.script(run[start]):
            continue
        chunk, kind = run[start:end], scripts.script(run[start])
        if kind == "hangul" and before == "" and len(chunk) <= 2:
            pass
        elif kind in ("han", "kana", "hangul"):
            out += [chunk] if len(chunk) == 1 else [chunk[i : i + 2] for i in range(len(chunk) - 1)]
        elif kind == "":
            out.append(chunk)
        start, before = end, kind
    return out


def test_pieces_cut_by_script_as_one_character_at_a_time_does() -> None:
    """The cut into scripts is one regex pass (a 20,000-memory store of mixed Japanese and
    English spent seconds in ``script``, a Python call a character); the pieces are those
    the character-by-character rule gives, on every code point around each range's edges
    and on random runs mixing the scripts."""
    import random

    edges = [0x3005, 0x3040, 0x309F, 0x30A0, 0x30FF, 0xFF66, 0xFF9F, 0xAC00, 0xD7AF, 0x1100, 0x11FF,
             0x3130, 0x318F, 0x4E00, 0x9FFF, 0x3400, 0x4DBF, 0xF900, 0xFAFF]  # fmt: skip
    near = sorted({c + d for c in edges for d in (-1, 0, 1)})
    alphabet = [chr(c) for c in near] + list("ab8_é本番環境ステージングはがかを동작는에서")
    for code in near:
        for run in (chr(code), "x" + chr(code), chr(code) * 3 + "本", "한" + chr(code) + "k"):
            assert scripts.pieces(run) == _pieces_one_by_one(run), (hex(code), run)
    rng = random.Random(7)
    for _ in range(3000):
        run = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        assert scripts.pieces(run) == _pieces_one_by_one(run), run
    assert scripts.pieces("") == _pieces_one_by_one("") == []


def _grams_run_by_run(text: str) -> str:
    """``scripts.grams`` as it was written first: ``cjk_words``, a Python call a run."""
    return " ".join(scripts.cjk_words(text)) if scripts.has_cjk(text) else ""


def test_grams_are_the_words_cjk_words_gives(tmp_path: Path) -> None:
    """The search index's ``grams`` column is made by two regex passes (a first recall of
    20,000 mixed Japanese and English memories spent a second in ``cjk_words``' Python
    loop); it holds the same words in the same order: around every range's edge, next to
    characters of those ranges that are no letters (``・``, ``゛``), on random text mixing
    the scripts, and on every file of the distill-kura-shaped generator."""
    import importlib.util
    import random

    edges = [0x3005, 0x3040, 0x309F, 0x30A0, 0x30FB, 0x30FF, 0xFF66, 0xFF9F, 0xAC00, 0xD7AF, 0x1100,
             0x11FF, 0x3130, 0x318F, 0x4E00, 0x9FFF, 0x3400, 0x4DBF, 0xF900, 0xFAFF]  # fmt: skip
    near = [chr(c + d) for c in edges for d in (-1, 0, 1)]
    alphabet = near + list("日本語々アーｱｲ한국어는에서ㄱひらはをabcXYZ09_-. ,\n・゛éÉ中")
    rng = random.Random(11)
    texts = [c + tail for c in near for tail in ("", "本", "x", "한국", "ab한")]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16))) for _ in range(20_000)]
    texts += [
        "ステージングはkobo-8で動いている",
        "rhino-2는 배포, kobo-8에서 동작",
        "ＫＯＢＯ本番環境 deploy",
    ]
    spec = importlib.util.spec_from_file_location("map_scale", BENCH / "map_scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_distill(tmp_path / "s", 300)
    texts += [path.read_text(encoding="utf-8") for path in sorted((tmp_path / "s").glob("m*.md"))]
    for text in texts:
        assert scripts.grams(text) == _grams_run_by_run(text), repr(text)
    assert sum(bool(scripts.grams(text)) for text in texts) > 10_000
