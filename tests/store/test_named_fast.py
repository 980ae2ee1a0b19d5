"""A read by a title or alias looks at the rows that can answer it, not the whole store.

``Resolver.by_name`` used to build ``Names`` from every catalog entry (0.31 s of CPU a read at
20,000 memories); when the catalog is current it now reads four columns and makes ``Names``
of the few rows whose slug, title or alias folds to the name asked. Equivalence: on every
title, alias, slug, their case and spacing variants, ambiguous and retired names, and names
no memory has, it answers what the full ``Names`` of the same store answers — with the
catalog current (the fast path, no scan) and with it out of date (a scan first, as before).
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from kura.files.link_names import names
from kura.store import catalog
from kura.store.named import Resolver
from kura.store.store import Store

BENCH = Path(__file__).resolve().parents[2] / "bench"


def memory(name: str, *, extra: str = "", body: str = "x") -> str:
    return f"---\nname: {name}\ndescription: d\ntype: project\n{extra}---\n\n{body}\n"


MEMORIES = {
    "deploy-sh": memory("Deploy Script", extra="aliases:\n  - the deployer\n  - DS\n"),
    "deploy-old": memory("Deploy Script", extra="superseded_by: deploy-sh\n"),  # a retired twin
    "release": memory("Release steps", extra="alias: the release\n"),
    "Rollback": memory("rollback plan"),  # a slug spelled with a capital
    "rollback": memory("Rollback Plan"),
    "twin-a": memory("Shared Title"),
    "twin-b": memory("shared   title"),  # the same title, folded
    "retired-only": memory("Old Way", extra="archived: 2026-01-02\n"),
    "strasse": memory("Straße Notes"),
    "strasse-2": memory("STRASSE notes", extra="aliases: [Straße]\n"),
    "ja": memory("本番環境 の メモ", extra="aliases: [本番]\n"),
    "long": memory("L" * 250),  # longer than a link may name
    "other-slug": memory("release", extra="aliases: [rollback]\n"),  # names that are others' slugs
    "numbers": memory("'42'", extra="aliases: [7, {a: b}, '  spaced   out  ']\n"),
}


def a_store(root: Path) -> Store:
    root.mkdir(parents=True)
    for slug, text in MEMORIES.items():
        (root / f"{slug}.md").write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("map_scale", BENCH / "map_scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.generate_distill(root.parent / "distill", 200)
    for path in (root.parent / "distill").glob("m*.md"):
        (root / path.name).write_bytes(path.read_bytes())
    return Store(root)


def asked(entries: dict[str, catalog.Entry]) -> list[str]:
    """Every slug, title and alias, each as written, upper-cased, with its spaces doubled,
    and a few names no memory has."""
    said = [n for e in entries.values() for n in (e.slug, e.name, *e.aliases)]
    said += [
        "nowhere",
        "",
        "   ",
        "Deploy",
        "Script Deploy",
        "STRASSE",
        "strasse notes",
        "L" * 250,
        "42",
        "7",
    ]
    variants = [v for n in said for v in (n, n.upper(), n.replace(" ", "  "), f" {n}\t")]
    return sorted(set(variants))


def test_every_name_resolves_as_the_whole_stores_names_resolve_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = a_store(tmp_path / "s")
    entries = catalog.entries(store)  # the catalog is current from here on
    whole = names(entries.values())
    questions = asked(entries)
    assert len(questions) > 1200
    monkeypatch.setattr(catalog, "entries", lambda store: pytest.fail("scanned a current catalog"))
    shared = Resolver(store)  # one resolver asked everything, as recall's walk uses it
    found = {q: shared.by_name(q) for q in questions}
    assert found == {q: whole.resolve(q) for q in questions}
    assert all(Resolver(store).by_name(q) == found[q] for q in questions[::7])  # a resolver each
    assert found["the deployer"] == found["Deploy Script"] == "deploy-sh"
    assert found["Shared Title"] is None and found["Old Way"] == "retired-only"
    assert (
        found["本番"] == "ja" and found["rollback plan"] is None and found["Straße"] == "strasse"
    )  # folded, a slug: it wins
    assert sum(slug is not None for slug in found.values()) > 1000


def test_an_out_of_date_catalog_is_brought_up_to_date_first(tmp_path: Path) -> None:
    store = a_store(tmp_path / "s")
    catalog.entries(store)
    rng = random.Random(4)
    (store.root / "twin-b.md").write_text(memory("Another Title"), encoding="utf-8")  # no longer a twin
    (store.root / "fresh.md").write_text(memory("Fresh One", extra="aliases: [DS]\n"), encoding="utf-8")
    (store.root / "release.md").unlink()
    assert catalog.naming_rows(store) is None  # the files changed since the rows were written
    stale = Resolver(store)
    for question in ("Shared Title", "Another Title", "Fresh One", "DS", "the release", "Deploy Script"):
        assert stale.by_name(question) == names(catalog.entries(store).values()).resolve(question), question
    assert stale.by_name("Shared Title") == "twin-a" and stale.by_name("DS") is None  # DS: two now
    entries = catalog.entries(store)
    whole = names(entries.values())
    for question in rng.sample(asked(entries), 300):
        assert Resolver(store).by_name(question) == whole.resolve(question), question
