"""``kura.text.scripts.has_cjk``: the Han, kana and hangul ranges, compiled only when a text
holds something outside ASCII (the class took ~7 ms to compile in every process that imported
the module). The same answer as the one character class, at each range's edges."""

from __future__ import annotations

import re
import subprocess
import sys

from kura.text import scripts

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
