"""distill-kura's keys kura does not do: refused at load, by a real `kura` process, in one
line that names the file, the line, the key and what to do; the value that says what kura
already does is accepted. Unknown keys in any table are named with the nearest known one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAD = '[stores.main]\npath = "main"\n\n'


def kura(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), *args], capture_output=True, text=True, check=False
    )


def config_with(tmp_path: Path, text: str) -> Path:
    (tmp_path / "main").mkdir(exist_ok=True)
    path = tmp_path / "kura.toml"
    path.write_text(HEAD + text)
    return path


# (the config after HEAD, the line that sets the key, what the refusal must say)
REFUSED = [
    (
        "[distill]\nscribe_slots = 4\n",
        5,
        "[distill] scribe_slots = 4: kura's distiller asks the scribe for one draft",
    ),
    (
        "[distill]\ncoverage_passes = 2\n",
        5,
        "[distill] coverage_passes = 2: kura's brain reads each stretch once",
    ),
    (
        "[distill]\nyield_on_return = true\n",
        5,
        "[distill] yield_on_return = true: `kura distill night` never stops",
    ),
    ("[prefill]\ntrail_tokens = 200\n", 5, "[prefill] trail_tokens = 200: kura wears no hot-trail block"),
    ("[prefill]\nadaptive_triggers = true\n", 5, "[prefill] adaptive_triggers = true: kura does not re-tune"),
    ("[prefill]\nadaptive_apply = true\n", 5, "[prefill] adaptive_apply = true: kura does not re-tune"),
    ("[prefill]\ntrigger_steps = [12, 24]\n", 5, "[prefill] trigger_steps = [12, 24]: kura does not re-tune"),
    (
        '[prefill]\nresident_mode = "trail"\n',
        5,
        '[prefill] resident_mode = "trail": kura\'s resident block is always',
    ),
    (
        "[fastpath]\nenabled = true\ngate = 1.0\n",
        5,
        "[fastpath] enabled = true: kura's recall has no tier-zero",
    ),
    ("[fastpath]\nenabled = false\ngate = 1.0\n", 6, "[fastpath] gate = 1.0: kura's recall has no tier-zero"),
    ("[fastpath]\ncues = true\n", 5, "[fastpath] cues = true: kura's recall has no tier-zero"),
    (
        '[[payforward.mouths]]\nname = "cpu"\nurl = "http://127.0.0.1:8014"\n',
        4,
        "[payforward]: kura does not bake",
    ),
    (
        '[server]\nauto_store_root = "~/kura"\n',
        5,
        '[server] auto_store_root = "~/kura": kura makes a store only',
    ),
    (
        "[stores.main.distill]\n# the store's own table\nscribe_slots = 2\n",
        6,
        "[stores.main.distill] scribe_slots = 2: kura's distiller",
    ),
    (
        "[stores.main.prefill]\ntrail_tokens = 80\n",
        5,
        "[stores.main.prefill] trail_tokens = 80: kura wears no",
    ),
    ("[stores.main.fastpath]\nenabled = true\n", 5, "[stores.main.fastpath] enabled = true: kura's recall"),
    (
        '[distill.journals]\ndsh = "~/dsh/sessions"\n',
        5,
        "[distill.journals] dsh: kura does not read DeepSeek",
    ),
    (
        '[stores.main.distill.journals]\nclaude = { root = "~/x", exclude_glob = ["**/scratch/**"] }\n',
        5,
        "[stores.main.distill.journals] claude is a table (distill-kura's root/exclude_glob form)",
    ),
]


@pytest.mark.parametrize(("text", "line", "said"), REFUSED, ids=[r[2].split(":")[0] for r in REFUSED])
def test_a_distill_kura_key_kura_does_not_do_is_refused_with_its_line(
    tmp_path: Path, text: str, line: int, said: str
) -> None:
    config = config_with(tmp_path, text)
    result = kura(config, "stores")
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"kura: error: {config}:{line}: {said}"), lines[0]
    assert "remove" in lines[0] or "set " in lines[0]


@pytest.mark.parametrize(
    "text",
    [
        "[distill]\nscribe_slots = 1\ncoverage_passes = 1\nyield_on_return = false\n",
        "[prefill]\nadaptive_triggers = false\nadaptive_apply = false\n",
        "[fastpath]\nenabled = false\n",
        "[stores.main.fastpath]\nenabled = false\n",
    ],
)
def test_a_value_that_says_what_kura_does_is_accepted(tmp_path: Path, text: str) -> None:
    result = kura(config_with(tmp_path, text), "stores")
    assert result.returncode == 0, result


@pytest.mark.parametrize(
    ("text", "line", "said"),
    [
        (
            "[prefill]\nfresh_dayz = 3\n",
            5,
            "[prefill] has unknown key 'fresh_dayz' — did you mean 'fresh_days'?",
        ),
        (
            "[distill]\nchunk_char = 9000\n",
            5,
            "[distill] has unknown key 'chunk_char' — did you mean 'chunk_chars'?",
        ),
        ("[server]\nprot = 8085\n", 5, "[server] has unknown key 'prot' — did you mean 'port'?"),
        (
            '[stores.main.distill]\nlanguge = "日本語"\n',
            5,
            "[stores.main.distill] has unknown key 'languge' — did you mean 'language'?",
        ),
        (
            '[models.thinker]\nurl = "u"\nmodle = "m"\n',
            6,
            "[models.thinker] has unknown key 'modle' — did you mean 'model'?",
        ),
        ('[model.thinker]\nurl = "u"\n', 4, "the top level has unknown key 'model' — did you mean 'models'?"),
        ("[fastpath]\nenable = false\n", 5, "[fastpath] has unknown key 'enable' — did you mean 'enabled'?"),
        (
            '[stores.main.distill.journals]\nclaud = "~/x"\n',
            5,
            "[stores.main.distill.journals] has unknown key 'claud' — did you mean 'claude'?",
        ),
        ("[modes]\nx = 3\n[server]\nzzz = 1\n", 7, "[server] has unknown key 'zzz' (known:"),
    ],
)
def test_an_unknown_key_in_any_table_is_named_with_did_you_mean(
    tmp_path: Path, text: str, line: int, said: str
) -> None:
    config = config_with(tmp_path, text)
    result = kura(config, "stores")
    assert result.returncode == 1, result
    assert result.stderr.startswith(f"kura: error: {config}:{line}: {said}"), result.stderr
