"""MEMORY.md merged line by memory: the driver as a function, as git's merge driver, and
``kura git install`` in real repositories merged by real git."""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import stat
import subprocess
from pathlib import Path

import pytest

from kura.files.memory_index import parse_index
from kura.git.index_merge import Side, merge
from kura.git.run import MISSING
from kura.store.catalog import written_date
from kura.store.store import Store
from tests.conftest import write_memory

H = "# Memory index\n\n"


def e(slug: str, trigger: str = "") -> str:
    return f"- [{slug.title()}]({slug}.md) — {trigger or slug + ' fact'}"


def doc(*lines: str) -> str:
    return H + "".join(line + "\n" for line in lines)


# -- the merge as a function ---------------------------------------------------------------


def test_lines_added_on_both_sides_are_all_kept_ours_first() -> None:
    base = doc(e("a"), e("b"))
    merged = merge(base, doc(e("a"), e("b"), e("x")), doc(e("a"), e("b"), e("y")))
    assert (merged.text, merged.clean, merged.notes) == (doc(e("a"), e("b"), e("x"), e("y")), True, ())


def test_theirs_new_line_goes_after_its_predecessor() -> None:
    base = doc(e("a"), e("b"), e("c"))
    ours = doc(e("a"), e("b"), e("c"), e("x"))
    theirs = doc(e("a"), e("y"), e("b"), e("c"))
    assert merge(base, ours, theirs).text == doc(e("a"), e("y"), e("b"), e("c"), e("x"))


def test_the_same_memory_added_on_both_sides_is_there_once() -> None:
    base = doc(e("a"))
    merged = merge(base, doc(e("a"), e("x")), doc(e("x"), e("a")))
    assert (merged.text, merged.notes) == (doc(e("a"), e("x")), ())


def test_a_line_removed_on_one_side_and_untouched_on_the_other_is_removed() -> None:
    base = doc(e("a"), e("b"), e("c"))
    assert merge(base, doc(e("a"), e("c")), doc(e("a"), e("b"), e("c"), e("y"))).text == doc(
        e("a"), e("c"), e("y")
    )
    assert merge(base, doc(e("a"), e("b"), e("c"), e("x")), doc(e("b"), e("c"))).text == doc(
        e("b"), e("c"), e("x")
    )


def test_a_line_changed_on_one_side_and_removed_on_the_other_is_kept_and_said() -> None:
    base = doc(e("a"), e("b"))
    merged = merge(base, doc(e("a"), e("b", "b changed")), doc(e("a")))
    assert merged.text == doc(e("a"), e("b", "b changed"))
    assert merged.notes == ("b: its line was changed in ours and removed in theirs; kept the changed line — "
                            "remove it if the memory is gone",)  # fmt: skip
    merged = merge(base, doc(e("b")), doc(e("a", "a changed"), e("b")))
    assert merged.text == doc(e("a", "a changed"), e("b"))


def _dated_by(folders: dict[Side, Path]):  # type: ignore[no-untyped-def]
    """Dates as the driver reads them: from real memory files, one folder per side."""
    return lambda side, slug: written_date(Store(folders[side]).show(slug).note)


@pytest.mark.parametrize(
    ("ours_date", "theirs_date", "kept", "note"),
    [
        (
            "2026-03-01",
            "2026-03-05",
            "theirs",
            "kept the line from theirs, whose memory is dated later (2026-03-05 over 2026-03-01)",
        ),
        (
            "2026-03-09",
            "2026-03-05",
            "ours",
            "kept the line from ours, whose memory is dated later (2026-03-09 over 2026-03-05)",
        ),
        (
            "2026-03-05",
            "2026-03-05",
            "ours",
            "both memories are dated 2026-03-05; kept the line from ours — check it",
        ),
        (
            None,
            "2026-03-05",
            "ours",
            "no date decides (ours: none, theirs: 2026-03-05); kept the line from ours — check it",
        ),
    ],
)
def test_the_same_memory_changed_on_both_sides_keeps_the_later_dated_line(
    tmp_path: Path, ours_date: str | None, theirs_date: str, kept: str, note: str
) -> None:
    folders: dict[Side, Path] = {"ours": tmp_path / "ours", "theirs": tmp_path / "theirs"}
    write_memory(folders["ours"], "b", "project", "b as ours says", date=ours_date)
    write_memory(folders["theirs"], "b", "project", "b as theirs says", date=theirs_date)
    base = doc(e("a"), e("b"), e("c"))
    ours, theirs = (
        doc(e("a"), e("b", "b as ours says"), e("c")),
        doc(e("a"), e("b", "b as theirs says"), e("c")),
    )
    merged = merge(base, ours, theirs, dated=_dated_by(folders))
    assert merged.text == doc(e("a"), e("b", f"b as {kept} says"), e("c"))
    assert merged.clean
    sep = "; " if "later" in note else " and "
    assert merged.notes == (f"b: its line was changed on both sides{sep}{note}",)


def test_reordered_lines_keep_ours_order_and_each_side_changes() -> None:
    base = doc(e("a"), e("b"), e("c"), e("d"))
    ours = doc(e("d"), e("c"), e("b", "b by ours"), e("a"))
    theirs = doc(e("a"), e("b"), e("c", "c by theirs"), e("d"), e("y"))
    assert merge(base, ours, theirs).text == doc(
        e("d"), e("y"), e("c", "c by theirs"), e("b", "b by ours"), e("a")
    )


def test_a_line_moved_by_theirs_only_is_placed_by_ours() -> None:
    base = doc(e("a"), e("b"), e("c"))
    ours = doc(e("a"), e("b"), e("c"), e("x"))
    theirs = doc(e("c"), e("a"), e("b", "b by theirs"))
    assert merge(base, ours, theirs).text == doc(e("a"), e("b", "b by theirs"), e("c"), e("x"))


def test_prose_changed_on_one_side_merges_as_text() -> None:
    base = H + "Deploy notes.\n\n## Tools\n" + e("a") + "\n" + e("b") + "\n"
    ours = H + "Deploy notes, kept by ops.\n\n## Tools\n" + e("a") + "\n" + e("b") + "\n" + e("x") + "\n"
    theirs = H + "Deploy notes.\n\n## Tools and scripts\n" + e("a") + "\n" + e("y") + "\n" + e("b") + "\n"
    merged = merge(base, ours, theirs)
    assert (merged.text, merged.clean) == (
        H
        + "Deploy notes, kept by ops.\n\n## Tools and scripts\n"
        + doc(e("a"), e("y"), e("b"), e("x"))[len(H) :],
        True,
    )


def test_prose_changed_on_both_sides_conflicts_there_and_nowhere_else() -> None:
    base = doc("## Tools", e("a"), e("b"), "", "## People", e("p"))
    ours = doc("## Tools we run", e("a"), e("x"), e("b"), "", "## People", e("p"), e("q"))
    theirs = doc("## Tools in use", e("y"), e("a"), e("b"), "", "## People here", e("p"))
    merged = merge(base, ours, theirs, labels=("HEAD", "feature"))
    assert merged.text == doc(
        "<<<<<<< HEAD", "## Tools we run", "=======", "## Tools in use", ">>>>>>> feature",
        e("y"), e("a"), e("x"), e("b"), "", "## People here", e("p"), e("q"),
    )  # fmt: skip
    assert (merged.clean, merged.conflicts) == (False, (3,))


def test_entries_never_go_inside_a_conflict() -> None:
    base = doc("intro", e("a"), "outro")
    ours = doc("intro by ours", e("x"), e("a"), "outro")
    theirs = doc("intro by theirs", e("y"), e("a"), "outro by theirs")
    merged = merge(base, ours, theirs, marker_size=4)
    assert merged.text == doc("<<<< ours", "intro by ours", "====", "intro by theirs", ">>>> theirs",
                              e("x"), e("y"), e("a"), "outro by theirs")  # fmt: skip


def test_comments_and_fences_are_the_persons_lines() -> None:
    comment = ["<!-- retired:", e("old", "kept for the record"), "-->"]
    fence = ["```", e("code", "an example, not a memory"), "```"]
    base = doc(*comment, e("a"), *fence)
    ours = doc(comment[0], e("old", "kept for the record, said ours"), comment[2], e("a"), e("x"), *fence)
    theirs = doc(*comment, e("a"), e("y"), fence[0], e("code", "a better example"), fence[2])
    merged = merge(base, ours, theirs)
    assert (merged.text, merged.clean) == (
        doc(comment[0], e("old", "kept for the record, said ours"), comment[2], e("a"), e("x"), e("y"),
            fence[0], e("code", "a better example"), fence[2]),
        True,
    )  # fmt: skip
    both = merge(base, doc(*comment, e("a"), fence[0], "ours' code", fence[2]),
                 doc(*comment, e("a"), e("y"), fence[0], "theirs' code", fence[2]))  # fmt: skip
    assert both.text == doc(*comment, e("a"), e("y"), fence[0], "<<<<<<< ours", "ours' code", "=======",
                            "theirs' code", ">>>>>>> theirs", fence[2])  # fmt: skip


def test_crlf_bom_and_final_newline_are_kept() -> None:
    def crlf(text: str) -> str:
        return "\ufeff" + text.replace("\n", "\r\n")

    base, ours, theirs = doc(e("a")), doc(e("a"), e("x")), doc(e("a"), e("y"))
    assert merge(crlf(base), crlf(ours), crlf(theirs)).text == crlf(doc(e("a"), e("x"), e("y")))
    assert merge(base, ours, crlf(theirs)).text == crlf(
        doc(e("a"), e("x"), e("y"))
    )  # theirs changed the style
    assert merge(base.rstrip("\n"), ours.rstrip("\n"), theirs.rstrip("\n")).text == doc(
        e("a"), e("x"), e("y")
    ).rstrip("\n")


def test_an_index_added_on_both_sides_merges_from_an_empty_base() -> None:
    merged = merge("", doc(e("a"), e("x")), doc(e("a"), e("y")))
    assert (merged.text, merged.clean) == (doc(e("a"), e("x"), e("y")), True)


# -- property: random edits on both sides never lose or duplicate an entry --------------------


class _Editor:
    """Random small edits of an index made of units (an entry, a prose line, a blank, a
    comment or a fence block), the way people and kura change one."""

    def __init__(self, rng: random.Random, side: str) -> None:
        self.rng, self.side, self.n = rng, side, 0

    def fresh(self) -> str:
        self.n += 1
        return f"{self.side}{self.n}"

    def edit(self, units: list[tuple[str, ...]], shared: list[str]) -> tuple[list[tuple[str, ...]], bool]:
        units, rng, prose_changed = list(units), self.rng, False
        for _ in range(rng.randrange(5)):
            entries = [i for i, u in enumerate(units) if _is_entry(u)]
            plain = [i for i, u in enumerate(units) if not _is_entry(u)]
            what = rng.choice(
                ["add", "add", "remove", "change", "move", "prose", "add-prose", "drop-prose", "shared"]
            )
            if what == "add":
                units.insert(rng.randrange(len(units) + 1), (e(self.fresh()),))
            elif what == "shared" and shared:
                slug = shared.pop()
                units.insert(rng.randrange(len(units) + 1), (e(slug, rng.choice(["same", self.side])),))
            elif what in ("remove", "change", "move") and entries:
                i = rng.choice(entries)
                unit = units.pop(i)
                slug = re.search(r"\(([^)]+)\.md\)", unit[0]).group(1)  # type: ignore[union-attr]
                if what == "change":
                    units.insert(i, (e(slug, f"{slug} by {self.side} {self.fresh()}"),))
                elif what == "move":
                    units.insert(rng.randrange(len(units) + 1), unit)
            elif what == "prose" and plain:
                i = rng.choice(plain)
                unit = units[i]  # a block's own line, never its fence or comment delimiters
                units[i] = tuple(
                    f"{ln} ~{self.side}" if ln and k == len(unit) // 2 else ln for k, ln in enumerate(unit)
                )
                prose_changed = True
            elif what == "add-prose":
                units.insert(rng.randrange(len(units) + 1), (f"prose {self.fresh()}",))
                prose_changed = True
            elif what == "drop-prose" and plain:
                units.pop(rng.choice(plain))
                prose_changed = True
        return units, prose_changed


def _is_entry(unit: tuple[str, ...]) -> bool:
    return len(unit) == 1 and unit[0].startswith("- [")


def _base_units(rng: random.Random) -> list[tuple[str, ...]]:
    units: list[tuple[str, ...]] = [("# Memory index",), ("",)]
    for n in range(rng.randrange(1, 9)):
        roll = rng.random()
        if roll < 0.15:
            units.append(("<!-- hidden:", e(f"hidden{n}"), "-->"))
        elif roll < 0.25:
            units.append(("```", e(f"fenced{n}"), "```"))
        elif roll < 0.4:
            units += [("",), (f"## Section {n}",)]
        elif roll < 0.5:
            units.append((f"Prose line {n}.",))
        units.append((e(f"m{n}"),))
    return units


def _text(units: list[tuple[str, ...]]) -> str:
    return "".join(line + "\n" for unit in units for line in unit)


def _entries(text: str) -> dict[str, str]:
    return {line.slugs[0]: line.text for line in reversed(parse_index(text).entries())}


def test_random_edits_on_both_sides_never_lose_duplicate_or_wrap_an_entry() -> None:
    rng = random.Random(20260516)
    for case in range(400):
        base_units = _base_units(rng)
        shared = [f"both{case}"]
        ours_units, ours_prose = _Editor(rng, "o").edit(base_units, list(shared))
        theirs_units, theirs_prose = _Editor(rng, "t").edit(base_units, list(shared))
        base, ours, theirs = _text(base_units), _text(ours_units), _text(theirs_units)
        merged = merge(base, ours, theirs)
        where = f"case {case}:\n--- base\n{base}--- ours\n{ours}--- theirs\n{theirs}--- merged\n{merged.text}"
        b, o, t = _entries(base), _entries(ours), _entries(theirs)
        result = merged.text.split("\n")
        for slug in {*o, *t}:
            live = (slug in o and slug in t) or (slug in o and o[slug] != b.get(slug)) or (
                slug in t and t[slug] != b.get(slug))  # fmt: skip
            found = [line for line in result if f"]({slug}.md)" in line]
            assert len(found) == (1 if live else 0), where
            if live and slug in o and slug in t:
                assert found[0] == (t[slug] if o[slug] == b.get(slug) else o[slug]), where
            elif live:
                assert found[0] == o.get(slug, t.get(slug)), where
        for slug in set(b) - set(o) - set(t):
            assert not [line for line in result if f"]({slug}.md)" in line], where
        inside = False
        for line in result:
            inside = line.startswith("<<<<<<<") or (inside and not line.startswith(">>>>>>>"))
            assert not (inside and re.match(r"- \[[^\]]*\]\((m|o|t|both)\d+\.md\)", line)), where
        for side_text in (ours, theirs):
            for line in set(side_text.split("\n")) - set(base.split("\n")):
                if not re.match(r"- \[[^\]]*\]\((m|o|t|both)\d+\.md\)", line):
                    assert line in result, where
        if not (ours_prose and theirs_prose):
            assert merged.clean, where
        for untouched, other in ((ours_prose, theirs), (theirs_prose, ours)):
            if not untouched:  # the person's lines come out as the side that changed them has them
                assert _persons(merged.text) == _persons(other), where


def _persons(text: str) -> list[str]:
    return [line for line in text.split("\n") if not re.match(r"- \[[^\]]*\]\((m|o|t|both)\d+\.md\)", line)]


# -- git's merge driver: kura git merge-index ---------------------------------------------


def test_merge_index_writes_the_merge_into_ours_and_says_what_it_decided(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base, ours, theirs = tmp_path / "O", tmp_path / "A", tmp_path / "B"
    base.write_text(doc(e("a"), e("b")))
    ours.write_text(doc(e("a"), e("b", "b by ours"), e("x")))
    theirs.write_text(doc(e("a", "a by theirs"), e("y")))
    result = cli("git", "merge-index", str(base), str(ours), str(theirs))
    assert (result.code, result.out) == (0, "")
    assert ours.read_text() == doc(e("a", "a by theirs"), e("b", "b by ours"), e("x"), e("y"))
    assert result.err == ("kura: MEMORY.md: b: its line was changed in ours and removed in theirs; kept the "
                          "changed line — remove it if the memory is gone\n")  # fmt: skip


def test_merge_index_exits_1_on_a_prose_conflict(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base, ours, theirs = tmp_path / "O", tmp_path / "A", tmp_path / "B"
    base.write_text(doc("Intro.", e("a")))
    ours.write_text(doc("Intro by ours.", e("a"), e("x")))
    theirs.write_text(doc("Intro by theirs.", e("a"), e("y")))
    result = cli(
        "git", "merge-index", "--marker-size", "9", str(base), str(ours), str(theirs), "memory/MEMORY.md"
    )
    assert result.code == 1
    assert ours.read_text() == doc("<<<<<<<<< ours", "Intro by ours.", "=========", "Intro by theirs.",
                                   ">>>>>>>>> theirs", e("a"), e("x"), e("y"))  # fmt: skip
    assert result.err == ("kura: memory/MEMORY.md:3: both sides changed the same lines here; left as a conflict "
                          "— edit them, then `git add memory/MEMORY.md`\n")  # fmt: skip


# -- real git: kura git install, then git merge ---------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository (its own identity; no system or user git config)."""
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    return root


def git(cwd: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert not ok or done.returncode == 0, done
    return done


def _driver() -> str:
    import sys

    return f"{sys.executable} -P -m kura git merge-index --marker-size %L %O %A %B %P"


def test_install_in_a_repository_whose_root_is_the_store(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("-s", str(repo), "remember", "alpha", "alpha fact").code == 0
    result = cli("-s", str(repo), "git", "install")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        f"added `/MEMORY.md merge=kura-index` to {repo / '.gitattributes'}\n"
        "set git config merge.kura-index.name = kura: merge MEMORY.md line by memory (kura git merge-index)\n"
        f"set git config merge.kura-index.driver = {_driver()}\n"
    )
    assert (repo / ".gitattributes").read_text() == "/MEMORY.md merge=kura-index\n"
    assert git(repo, "check-attr", "merge", "--", "MEMORY.md").stdout == "MEMORY.md: merge: kura-index\n"
    again = cli("-s", str(repo), "git", "install")
    assert again.code == 2
    assert again.out == (
        "already: MEMORY.md merges with kura-index (git check-attr says so)\n"
        "already: git config merge.kura-index.name is set\n"
        "already: git config merge.kura-index.driver is set\n"
    )


def test_install_in_a_subfolder_store_keeps_the_attributes_file(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    (repo / ".gitattributes").write_bytes(b"*.png binary\r\n*.md text")
    store = repo / "team memory"
    assert cli("-s", str(store), "remember", "alpha", "alpha fact").code == 0
    result = cli("-s", str(store), "git", "install")
    assert result.code == 0
    assert result.out.startswith(
        f'added `"team memory/MEMORY.md" merge=kura-index` to {repo / ".gitattributes"}\n'
    )
    assert (
        repo / ".gitattributes"
    ).read_bytes() == b'*.png binary\r\n*.md text\r\n"team memory/MEMORY.md" merge=kura-index\r\n'
    assert git(repo, "check-attr", "merge", "--", "team memory/MEMORY.md").stdout.endswith(
        ": merge: kura-index\n"
    )
    assert git(repo, "check-attr", "merge", "--", "MEMORY.md").stdout == "MEMORY.md: merge: unspecified\n"
    assert cli("-s", str(store), "git", "install").code == 2


def test_install_refuses_outside_a_repository_and_without_git(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "loose"
    assert cli("-s", str(store), "remember", "alpha", "alpha fact").code == 0
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    result = cli("-s", str(store), "git", "install")
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(
        f"kura: error: {store} is not inside a git work tree (fatal: not a git repository"
    )
    assert result.err.endswith("run `git init` there (or in a folder above it), then run this again\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = cli("-s", str(store), "git", "install")
    assert (result.code, result.err) == (
        1,
        f"kura: error: {MISSING}\n",
    )
    assert not (store / ".gitattributes").exists()


def test_install_hooks_sets_them_up_once_and_leaves_a_foreign_hook_alone(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    store = repo / "memory"
    assert cli("-s", str(store), "remember", "alpha", "alpha fact").code == 0
    hooks = repo / ".git" / "hooks"
    (hooks / "post-checkout").write_text("#!/bin/sh\necho mine\n")
    result = cli("-s", str(store), "git", "install", "--hooks")
    assert result.code == 1
    assert f"installed {hooks / 'pre-commit'} (kura's pre-commit hook)\n" in result.out
    assert f"installed {hooks / 'post-merge'} (kura's post-merge hook)\n" in result.out
    assert result.err == (f"kura: error: {hooks / 'post-checkout'}: a post-checkout hook that is not kura's is "
                          f"there; left as it is — make it run `{Path(os.sys.executable).parent / 'kura'} -s {store} "
                          'hook post-checkout "$@"` too, or move it aside and run this again\n')  # fmt: skip
    assert (hooks / "post-checkout").read_text() == "#!/bin/sh\necho mine\n"
    pre_commit = (hooks / "pre-commit").read_text()
    assert pre_commit.split("\n")[:4] == [
        "#!/bin/sh",
        "# Installed by `kura git install --hooks`: kura's pre-commit hook, for the store in this repository.",
        f': "${{KURA_BIN:={Path(os.sys.executable).parent / "kura"}}}"',
        ': "${KURA_STORE:=$(git rev-parse --show-toplevel)/memory}"',
    ]
    assert (hooks / "pre-commit").stat().st_mode & stat.S_IXUSR
    (hooks / "post-checkout").unlink()
    assert cli("-s", str(store), "git", "install", "--hooks").code == 0
    assert cli("-s", str(store), "git", "install", "--hooks").code == 2
    git(repo, "add", "-A")
    committed = git(repo, "commit", "-qm", "memory")  # the hook checks the subfolder store
    assert committed.returncode == 0


def _live(store: Path) -> set[str]:
    return {s for s in Store(store).slugs() if not Store(store).show(s).note.meta.get("archived")}


def test_two_branches_of_remember_and_forget_merge_clean(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    store = repo / "memory"
    for slug in ("deploy", "oncall", "staging", "budget"):
        assert cli("-s", str(store), "remember", slug, f"{slug} as first written").code == 0
    assert cli("-s", str(store), "git", "install").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "laptop")
    for args in (("remember", "laptop-a", "from the laptop"), ("remember", "laptop-b", "also from the laptop"),
                 ("remember", "deploy", "deploys go out Tuesday"), ("forget", "staging")):  # fmt: skip
        assert cli("-s", str(store), *args).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "laptop")
    git(repo, "checkout", "-q", "main")
    for args in (("remember", "server-a", "from the server"), ("remember", "oncall", "oncall rota is weekly"),
                 ("forget", "budget")):  # fmt: skip
        assert cli("-s", str(store), *args).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "server")
    merged = git(repo, "merge", "-q", "--no-edit", "laptop", ok=False)
    assert merged.returncode == 0, merged
    index = (store / "MEMORY.md").read_text()
    assert "<<<<<<<" not in index and ">>>>>>>" not in index
    named = [line.slugs[0] for line in parse_index(index).entries()]
    assert named == ["deploy", "oncall", "server-a", "laptop-a", "laptop-b"]
    assert sorted(named) == sorted(_live(store))
    # a title kura made from the description follows a correction (issue 17): no line keeps the old words
    assert "- [deploys go out Tuesday](deploy.md) — deploys go out Tuesday" in index.split("\n")
    assert "- [oncall rota is weekly](oncall.md) — oncall rota is weekly" in index.split("\n")
    assert cli("-s", str(store), "doctor", "--strict").code == 0
    assert git(repo, "status", "--porcelain").stdout == ""


def _deploy_changed_on_both(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    """deploy, committed on main; then changed on branch laptop (dated 2030-02-02) and on
    main (dated 2030-02-01), each committed; main checked out."""
    assert cli("-s", str(repo), "remember", "deploy", "deploys on Tuesday").code == 0
    assert cli("-s", str(repo), "git", "install").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for branch, said, day in (
        ("laptop", "deploys on Wednesday", "2030-02-02"),
        ("main", "deploys on Thursday", "2030-02-01"),
    ):
        git(repo, "checkout", "-q", *(["-b", branch] if branch != "main" else [branch]))
        assert cli("-s", str(repo), "remember", "deploy", said).code == 0
        memory = repo / "deploy.md"  # a person sets the date, as the two clones' days differ
        memory.write_text(re.sub(r"(?m)^updated: .*$", f"updated: {day}", memory.read_text()))
        git(repo, "commit", "-qam", branch)


def test_both_branches_changing_one_memory_keep_the_later_dated_line(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    _deploy_changed_on_both(cli, repo)
    merged = git(repo, "merge", "--no-edit", "laptop", ok=False)
    assert merged.returncode == 1  # deploy.md itself conflicts: the user's words, git's business
    assert "CONFLICT (content): Merge conflict in deploy.md" in merged.stdout
    assert (
        "kura: MEMORY.md: deploy: its line was changed on both sides; kept the line from theirs, whose memory is dated later (2030-02-02 over 2030-02-01)"
        in merged.stderr
    )
    index = (repo / "MEMORY.md").read_text()
    assert [line.text for line in parse_index(index).entries()] == [
        "- [deploys on Wednesday](deploy.md) — deploys on Wednesday"  # its title follows (issue 17)
    ]
    assert "MEMORY.md" not in git(repo, "diff", "--name-only", "--diff-filter=U").stdout


def test_a_true_prose_conflict_leaves_markers_only_in_prose_and_fails_the_merge(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("-s", str(repo), "remember", "alpha", "alpha fact").code == 0
    assert cli("-s", str(repo), "git", "install").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    header = (
        "<!-- One line per memory: - [Title](slug.md) — a recognition trigger. Kept by kura; edit freely. -->"
    )
    for branch, title in (("laptop", "# What the laptop remembers"), ("main", "# What the server remembers")):
        git(repo, "checkout", "-q", *(["-b", branch] if branch != "main" else [branch]))
        index = repo / "MEMORY.md"
        index.write_text(index.read_text().replace("# Memory index", title))
        assert cli("-s", str(repo), "remember", f"{branch}-note", f"written on {branch}").code == 0
        git(repo, "commit", "-qam", branch)
    merged = git(repo, "merge", "--no-edit", "laptop", ok=False)
    assert merged.returncode == 1
    assert "CONFLICT (content): Merge conflict in MEMORY.md" in merged.stdout
    assert "kura: MEMORY.md:1: both sides changed the same lines here" in merged.stderr
    assert (repo / "MEMORY.md").read_text() == (
        "<<<<<<< HEAD\n# What the server remembers\n=======\n# What the laptop remembers\n>>>>>>> laptop\n\n"
        f"{header}\n\n- [alpha fact](alpha.md) — alpha fact\n- [written on main](main-note.md) — written on main\n"
        "- [written on laptop](laptop-note.md) — written on laptop\n"
    )
    assert git(repo, "diff", "--name-only", "--diff-filter=U").stdout == "MEMORY.md\n"


def test_a_rebase_dates_theirs_from_the_commit_being_replayed(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    _deploy_changed_on_both(cli, repo)
    git(repo, "checkout", "-q", "laptop")
    rebased = git(repo, "rebase", "main", ok=False)  # ours: main (2030-02-01); theirs: laptop's commit
    assert rebased.returncode == 1
    assert (
        "kept the line from theirs, whose memory is dated later (2030-02-02 over 2030-02-01)"
        in rebased.stderr
    )
    assert "deploys on Wednesday" in (repo / "MEMORY.md").read_text()
    git(repo, "rebase", "--abort")
    assert dt.date(2030, 2, 2) == written_date(Store(repo).show("deploy").note)


HOOKS_DIR = Path(__file__).resolve().parents[2] / "hooks" / "git"


def test_hooks_an_older_kura_installed_or_a_person_copied_are_upgraded(cli, repo: Path) -> None:  # type: ignore[no-untyped-def]
    """The hooks kura 0.1 wrote (its hooks/git/ scripts, copied with the two lines added, or
    copied as they were) are kura's: --hooks replaces them with today's, which run `kura hook`."""
    old_pre_commit = (  # what `kura git install --hooks` wrote before the hooks were in the package
        "#!/bin/sh\n# Installed by `kura git install --hooks`: kura's pre-commit hook, for the store in this "
        'repository.\n: "${KURA_BIN:=kura}"\n: "${KURA_STORE:=$(git rev-parse --show-toplevel)}"\n'
        '"$KURA_BIN" -s "$KURA_STORE" doctor --strict --staged || exit 1\n'
    )
    old_post_merge = (  # hooks/git/post-merge as kura 0.1 shipped it, copied by hand
        "#!/bin/sh\n# Git post-merge (and post-checkout) hook: re-weave the map after files changed under it.\n"
        "# Never fails the git command: a stale map is re-woven by the next kura prefill anyway.\n"
        'kura="${KURA_BIN:-kura}"\nstore="${KURA_STORE:-$(git rev-parse --show-toplevel)}"\n'
        'command -v "$kura" >/dev/null 2>&1 && "$kura" -s "$store" weave >/dev/null 2>&1\nexit 0\n'
    )
    assert cli("-s", str(repo), "remember", "alpha", "alpha fact").code == 0
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(old_pre_commit)
    (hooks / "post-merge").write_text(old_post_merge)
    (hooks / "post-checkout").symlink_to(HOOKS_DIR / "post-checkout")  # linked by hand, as docs said
    result = cli("-s", str(repo), "git", "install", "--hooks")
    assert result.code == 0, result.err
    for name in ("pre-commit", "post-merge", "post-checkout"):
        assert f"updated {hooks / name} (kura's {name} hook)\n" in result.out
        text = (hooks / name).read_text()
        assert text.endswith(f'exec "$KURA_BIN" -s "$KURA_STORE" hook {name} "$@"\n'), text
        assert not (hooks / name).is_symlink()
    assert (HOOKS_DIR / "post-checkout").read_text().endswith('exec "$kura" hook post-checkout "$@"\n')


def test_each_hook_script_kura_ships_is_known_as_kuras() -> None:
    """A copy of any of hooks/git/* counts as kura's (and is upgraded, never refused)."""
    import hashlib

    from kura.git.repository import HOOKS, SHIPPED

    for name in HOOKS:
        assert hashlib.sha256((HOOKS_DIR / name).read_bytes()).hexdigest() in SHIPPED, name
