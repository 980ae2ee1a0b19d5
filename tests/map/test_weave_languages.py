"""The woven map trims the person's language to its budget (issue 31). A Japanese line with
no punctuation to cut at stayed a whole sentence, over its trigger budget, and a Russian
line cost a token a letter, so it was cut to a word and a few function words. A real
``kura weave`` process weaves a store whose index is in Japanese and Russian."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kura.text.tokens import estimate_tokens

LINES = {
    "backup": "本番データベースのバックアップは毎晩二時に取り三十日分を保存して週末は別のサーバーに複製する",
    "staging": "ステージング環境はkobo-8で動いていて本番とは別のサーバーなので設定を直接変えないこと",
    "ru-backup": "Производственная база данных резервируется каждую ночь в два часа и хранится тридцать дней",
}  # fmt: skip
TRIGGER_TOKENS = 24  # the default


def test_a_japanese_and_russian_index_is_trimmed_to_its_trigger_budget(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    index = ["# Memory index", ""]
    for slug, text in LINES.items():
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug}\ndescription: {text}\ntype: project\n---\n\n{text}\n"
        )
        index.append(f"- [{slug}]({slug}.md) — {text}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")
    config = tmp_path / "kura.toml"
    config.write_text(f'[stores.test]\npath = "{root}"\n\n[prefill]\nfresh_days = 0\n')
    done = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "-s", "test", "weave"],
        capture_output=True, text=True, env=dict(os.environ), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    woven = (root / ".kura" / "map.md").read_text(encoding="utf-8")
    triggers = {
        line.split("](")[0][3:]: line.split(" — ", 1)[1] for line in woven.splitlines() if " — " in line
    }
    assert set(triggers) == set(LINES)
    for slug, trigger in triggers.items():
        assert estimate_tokens(trigger) <= TRIGGER_TOKENS, (slug, trigger)
    # Japanese: whole phrases from the start, no spaces put in; Russian: its words, not its glue
    assert triggers["backup"] == "本番データベースのバックアップは毎晩二時に取り"
    assert triggers["staging"].startswith("ステージング環境はkobo-8で")
    assert triggers["ru-backup"].startswith("Производственная база данных")
