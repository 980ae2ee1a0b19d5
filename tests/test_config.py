"""kura.toml: found in the documented order, loaded whole, refused with the key named."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kura.cli.registration import register_store
from kura.config import find_config, load_config, parse_config, user_config_path
from kura.errors import ConfigError, UnknownStore

# A config in distill-kura's shape, using every table it documents that kura does too (the
# keys kura refuses, and the values it accepts of them, are in tests/files/test_kura_compat.py).
DISTILL_KURA_STYLE = """
[server]
host = "127.0.0.1"
port = 8085
default = "main"

[models.thinker]
url = "http://127.0.0.1:8000/v1"
model = "small-local"
effort = "low"

[models.scribe]
url = "https://gateway.example.test/v1"
model = "writer"
api_key_env = "WRITER_KEY"
dialect = "openai"
temperature = 0.4

[stores.main]
path = "kura/main"
label = "main memory"
write_policy = "distiller-only"
persona = "~/persona.json"

[stores.maker]
path = "kura/maker"
label = "maker mode"
model_profile = "private"

[stores.maker.prefill]
fresh_days = 30

[stores.maker.distill]
language = "English"
inherit_global_journals = false

[stores.maker.distill.journals]
text = "notes/maker"

[modes]
default = "main"
build = "maker"

[model_profiles.private.thinker]
url = "http://127.0.0.1:8100/v1"
model = "private-thinker"

[prefill]
window_tokens = 131072
budget_fraction = 0.05
hard_fraction = 0.20
fresh_days = 14
pinned_types = ["feedback", "user"]
trigger_tokens = 24

[fastpath]
enabled = false

[distill]
language = "English"
scribe_slots = 1
chunk_chars = 200_000
max_items = 6
idle_min = 10
backoff_min = 20
yield_on_return = false

[distill.journals]
claude = "~/.claude/projects/demo"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kura.toml"
    path.write_text(text)
    return path


def test_a_distill_kura_config_loads_unchanged(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, DISTILL_KURA_STYLE)))
    assert list(config.stores) == ["main", "maker"]
    assert config.stores["main"].path == tmp_path / "kura" / "main"
    assert config.stores["main"].write_policy == "distiller-only"
    assert config.stores["maker"].prefill == {"fresh_days": 30}
    assert config.named("build").name == "maker"
    assert config.default_store == "main"


def test_roles_inherit_whole_never_key_by_key(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, DISTILL_KURA_STYLE)))
    models = config.models_for("main")
    assert models["thinker"] is not None and models["brain"] == models["thinker"]
    scribe = models["scribe"]
    assert scribe is not None and (scribe.model, scribe.api_key_env, scribe.effort) == (
        "writer",
        "WRITER_KEY",
        "",
    )
    private = config.models_for("maker")
    assert private["thinker"] is not None and private["thinker"].model == "private-thinker"
    assert private["scribe"] == private["thinker"]


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ('[stores.a]\npath = "a"\nwrite_polcy = "frozen"', r"\[stores.a\] has unknown key 'write_polcy'"),
        ('[stores.a]\npath = "a"\nwrite_policy = "open"', r"\[stores.a\] write_policy must be one of"),
        ("[stores.a]\npath = 3", r"\[stores.a\] path must be str, got int"),
        ('[stores.a]\nlabel = "x"', r"\[stores.a\] has no path"),
        (
            '[stores.a]\npath = "a"\n[stores.b]\npath = "a/"',
            r"\[stores.a\] and \[stores.b\] are the same folder",
        ),
        (
            '[stores.a]\npath = "a"\n[stores.b]\npath = "a/inner"',
            r"\[stores.a\] .* and \[stores.b\] .* are nested",
        ),
        ('[stores.a]\npath = "a"\n[modes]\nchat = "b"', r"\[modes\] chat = 'b' names no store"),
        (
            '[stores.a]\npath = "a"\nmodel_profile = "ghost"',
            r"\[stores.a\] model_profile = 'ghost' is not defined",
        ),
        ('[stores.a]\npath = "a"\n[models.thinker]\nurl = "http://x"', r"\[models.thinker\] needs model"),
        ('[stores.a]\npath = "a"\n[models.critic]\nurl = "u"', r"\[models\] has unknown key 'critic'"),
        (
            '[stores.a]\npath = "a"\n[models.thinker]\nurl="u"\nmodel="m"\ntimeout="120"',
            r"timeout must be int or float",
        ),
        (
            '[stores.a]\npath = "a"\n[prefill]\nfresh_days = true',
            r"\[prefill\] fresh_days must be int or float, got bool",
        ),
        (
            '[stores.a]\npath = "a"\n[stores.a.prefill]\nfreshdays = 3',
            r"\[stores.a.prefill\] has unknown key 'freshdays'",
        ),
        ('[stores.a]\npath = "a"\n[server]\ndefault = "zz"', r"\[server\] default = 'zz' names no store"),
        ('[storez.a]\npath = "a"', r"the top level has unknown key 'storez'"),
        ("[server]\nport = 1", r"no \[stores.NAME\] table"),
        ("[stores.a\npath = 1", r"not valid TOML .*line 1"),
    ],
)
def test_invalid_config_is_refused_with_the_key_named(tmp_path: Path, snippet: str, message: str) -> None:
    path = write(tmp_path, snippet)
    with pytest.raises(ConfigError, match=message) as caught:
        load_config(str(path))
    assert str(caught.value).startswith(str(path))


def test_extensions_with_x_prefix_are_allowed(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, '[stores.a]\npath = "a"\nx_color = "blue"\n[x_mine]\nk = 1')))
    assert list(config.stores) == ["a"]


def test_overlap_can_be_allowed_explicitly() -> None:
    raw = {"server": {"allow_path_overlap": True}, "stores": {"a": {"path": "/x"}, "b": {"path": "/x/y"}}}
    assert sorted(parse_config(raw).stores) == ["a", "b"]


def test_readonly_means_distiller_only() -> None:
    config = parse_config({"stores": {"a": {"path": "/x", "readonly": True}}})
    assert config.stores["a"].write_policy == "distiller-only"


def test_search_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = Path.cwd()
    assert find_config() is None
    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[stores.u]\npath = "u"')
    assert find_config() == user
    (work / "kura.toml").write_text('[stores.l]\npath = "l"')
    assert find_config() == work / "kura.toml"
    env = tmp_path / "env.toml"
    env.write_text('[stores.e]\npath = "e"')
    monkeypatch.setenv("KURA_CONFIG", str(env))
    assert find_config() == env
    assert list(load_config().stores) == ["e"]
    explicit = tmp_path / "explicit.toml"
    explicit.write_text('[stores.x]\npath = "x"')
    assert list(load_config(str(explicit)).stores) == ["x"]
    with pytest.raises(ConfigError, match=r"no such config file \(from --config\)"):
        load_config(str(tmp_path / "absent.toml"))


def test_no_config_means_one_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = load_config()
    assert config.named().path == Path.cwd() / "memory"
    monkeypatch.setenv("KURA_DIR", str(tmp_path / "elsewhere"))
    assert load_config().named().path == tmp_path / "elsewhere"
    (tmp_path / "elsewhere").mkdir()
    assert load_config().open().root == tmp_path / "elsewhere"


def test_unknown_store_lists_what_exists(tmp_path: Path) -> None:
    config = load_config(str(write(tmp_path, DISTILL_KURA_STYLE)))
    with pytest.raises(
        UnknownStore, match=r"no store or mode named 'eq' \(stores: main, maker; modes: build, default\)"
    ):
        config.store_config("eq")


def test_a_folder_path_works_as_a_store(tmp_path: Path) -> None:
    (tmp_path / "adhoc").mkdir()
    (tmp_path / "adhoc" / "MEMORY.md").write_text("# Memory index\n")
    assert load_config().open(str(tmp_path / "adhoc")).root == tmp_path / "adhoc"


def test_register_store_appends_and_keeps_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, '# mine\n[stores.a]\npath = "a"  # keep this comment\n')
    assert register_store(path, "b", tmp_path / "b", label='say "hi"')
    assert path.read_text() == (
        '# mine\n[stores.a]\npath = "a"  # keep this comment\n\n[stores.b]\npath = "'
        + str(tmp_path / "b")
        + '"\nlabel = "say \\"hi\\""\n'
    )
    assert not register_store(path, "b", tmp_path / "b")
    with pytest.raises(ConfigError, match=r"\[stores.b\] already points at"):
        register_store(path, "b", tmp_path / "c")


def test_register_store_rolls_back_an_invalid_result(tmp_path: Path) -> None:
    path = write(tmp_path, '[stores.a]\npath = "a"\n')
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="nested"):
        register_store(path, "b", tmp_path / "a" / "inner")
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        (
            '[stores.a]\npath = "a"\nreadonly = true\nwrite_policy = "direct-allowed"',
            "sets both readonly and write_policy",
        ),
        ('[stores.a]\npath = ""', r"\[stores.a\] has no path"),
        ('[stores.a]\npath = "a"\nwrite_policy = ""', "write_policy must be one of"),
        (
            '[stores.a]\npath = "a"\n[stores.b]\npath = "b"\n[modes]\na = "b"',
            r"reuses the name of \[stores.a\]",
        ),
        (
            '[stores.a]\npath = "a"\n[model_profiles.p.brain]\nurl = "u"\nmodel = "m"',
            r"\[model_profiles.p\] declares brain but no thinker",
        ),
        (
            '[stores.a]\npath = "a"\n[models.scribe]\nurl = "u"\nmodel = "m"',
            r"\[models\] declares scribe but no thinker",
        ),
        (
            '[stores.a]\npath = "a"\n[models.thinker]\nurl = "u"\nmodel = "m"\neffort_fields = ["top_k"]',
            r"\[models.thinker\] effort_fields may name reasoning_effort, thinking_effort, "
            r"chat_template_kwargs, got 'top_k'; put any other request field in extra",
        ),
        (
            '[stores.a]\npath = "a"\n[models.thinker]\nurl = "u"\nmodel = "m"\neffort_fields = "reasoning_effort"',
            r"\[models.thinker\] effort_fields must be list, got str",
        ),
        (
            '[stores.a]\npath = "a"\n[model_profiles.p.thinker]\nurl = "u"\nmodel = "m"\nrecall_timeout = 0',
            r"\[model_profiles.p.thinker\] recall_timeout must be a positive number of seconds, got 0",
        ),
    ],
)
def test_more_configs_that_cannot_mean_what_they_say(tmp_path: Path, snippet: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(str(write(tmp_path, snippet)))


def test_a_folder_path_selects_the_configured_store_and_its_policy(tmp_path: Path) -> None:
    (tmp_path / "arch").mkdir()
    config = load_config(str(write(tmp_path, '[stores.arch]\npath = "arch"\nwrite_policy = "frozen"\n')))
    for selector in (
        str(tmp_path / "arch"),
        str(tmp_path / "arch") + "/",
        str(tmp_path / "arch" / ".." / "arch"),
    ):
        chosen = config.store_config(selector)
        assert (chosen.name, chosen.write_policy) == ("arch", "frozen")


def test_register_into_an_empty_or_comment_only_config(tmp_path: Path) -> None:
    path = write(tmp_path, "# my kura config\n")
    assert register_store(path, "main", tmp_path / "m")
    assert list(load_config(str(path)).stores) == ["main"]


def test_a_thinker_waits_on_recall_for_its_recall_timeout_never_past_its_timeout() -> None:
    def thinker(body: str) -> tuple[float, float]:
        raw = tomllib.loads(f'[stores.a]\npath = "a"\n[models.thinker]\nurl = "u"\nmodel = "m"\n{body}')
        model = parse_config(raw).models["thinker"]
        assert model is not None
        return model.timeout, model.recall_timeout

    assert thinker("") == (120.0, 10.0)
    assert thinker("recall_timeout = 2.5") == (120.0, 2.5)
    assert thinker("timeout = 4") == (4.0, 4.0)
    assert thinker("timeout = 300\nrecall_timeout = 30") == (300.0, 30.0)


# -- the project's store and the person's ----------------------------------------------


def _project(tmp_path: Path, name: str = "acme") -> Path:
    import subprocess

    root = tmp_path / name
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "MEMORY.md").write_text("# Memory index\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src").mkdir()
    return root


def _personal(tmp_path: Path, body: str) -> dict[str, str]:
    home = tmp_path / "personal"
    home.mkdir(exist_ok=True)
    (home / "kura.toml").write_text(body)
    return {"KURA_HOME": str(home)}


def test_the_project_store_is_the_default_over_a_personal_default(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "me").mkdir()
    env = _personal(tmp_path, f'[stores.me]\npath = "{tmp_path / "me"}"\n')
    config = load_config(env=env, cwd=root / "src")
    assert (config.default_store, config.project, config.person) == ("acme", "acme", "me")
    chosen = config.store_config()
    assert (chosen.path, chosen.write_policy) == (root / "memory", "direct-allowed")
    assert config.beside(chosen) == config.stores["me"]
    assert config.beside(config.stores["me"]) is None  # -s me: the person's store alone
    assert config.why.startswith(f"project store: {root / 'memory'} (found from {root / 'src'}")


def test_a_configured_store_in_the_project_s_folder_keeps_its_name_and_policy(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "me").mkdir()
    body = (
        f'[server]\ndefault = "me"\n[stores.me]\npath = "{tmp_path / "me"}"\n'
        f'[stores.work]\npath = "{root / "memory"}"\nwrite_policy = "distiller-only"\n'
    )
    config = load_config(env=_personal(tmp_path, body), cwd=root)
    assert (config.default_store, config.store_config().write_policy) == ("work", "distiller-only")
    assert set(config.stores) == {"me", "work"}


def test_the_project_s_name_never_takes_a_configured_one(tmp_path: Path) -> None:
    root = _project(tmp_path, "me")
    (tmp_path / "mine").mkdir()
    config = load_config(env=_personal(tmp_path, f'[stores.me]\npath = "{tmp_path / "mine"}"\n'), cwd=root)
    assert (config.project, config.person) == ("project", "me")


def test_a_config_chosen_for_this_place_keeps_its_default(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "other").mkdir()
    (root / "kura.toml").write_text(f'[stores.other]\npath = "{tmp_path / "other"}"\n')
    local = load_config(env={}, cwd=root)
    assert (local.default_store, local.project, local.why) == (
        "other",
        "",
        f"the default in {root / 'kura.toml'}",
    )
    explicit = load_config(str(root / "kura.toml"), env={}, cwd=root / "src")
    assert (explicit.default_store, explicit.project) == ("other", "")


def test_with_no_kura_toml_the_one_store_main_is_the_project_s(tmp_path: Path) -> None:
    root = _project(tmp_path)
    config = load_config(env={"KURA_HOME": str(tmp_path / "nobody")}, cwd=root / "src")
    assert (list(config.stores), config.store_config().path, config.person) == (["main"], root / "memory", "")


def test_outside_a_project_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "me").mkdir()
    (tmp_path / "away").mkdir()
    config = load_config(
        env=_personal(tmp_path, f'[stores.me]\npath = "{tmp_path / "me"}"\n'), cwd=tmp_path / "away"
    )
    assert (config.default_store, config.project, config.person, list(config.stores)) == (
        "me",
        "",
        "",
        ["me"],
    )


def test_a_project_nested_in_a_configured_store_is_left_alone(tmp_path: Path) -> None:
    root = _project(tmp_path / "me" / "inside")
    config = load_config(env=_personal(tmp_path, f'[stores.me]\npath = "{tmp_path / "me"}"\n'), cwd=root)
    assert (config.default_store, config.project) == ("me", "")


def test_the_project_s_store_named_by_its_folder_still_has_the_person_s_beside(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "me").mkdir()
    config = load_config(env=_personal(tmp_path, f'[stores.me]\npath = "{tmp_path / "me"}"\n'), cwd=root)
    by_path = config.store_config(str(root / "memory"))
    assert by_path.name == "acme" and config.beside(by_path) == config.stores["me"]
    assert config.beside(config.store_config("acme")) == config.stores["me"]
