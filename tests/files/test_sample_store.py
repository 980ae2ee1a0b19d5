"""sample-store/ is the quick start's material: it must be clean and realistic."""

from __future__ import annotations

from collections import Counter

from conftest import SAMPLE

from kura.files.memory_file import TYPES
from kura.store.store import Store


def test_sample_store_reads_clean() -> None:
    store = Store(SAMPLE)
    memories = store.list()
    assert 30 <= len(memories) <= 50
    assert store.findings() == ()
    assert set(Counter(m.type for m in memories)) == set(TYPES)


def test_sample_store_links_resolve_with_no_islands_or_dead_ends() -> None:
    store = Store(SAMPLE)
    slugs = set(store.slugs())
    outgoing = {m.slug: set(m.note.links) for m in store.list()}
    assert {s: links - slugs for s, links in outgoing.items() if links - slugs} == {}
    incoming = {target for links in outgoing.values() for target in links}
    assert slugs - incoming == set()
    assert [s for s, links in outgoing.items() if not links] == []


def test_sample_index_has_one_line_per_memory() -> None:
    store = Store(SAMPLE)
    index = store.index()
    entries = [line.slugs[0] for line in index.entries()]
    assert sorted(entries) == sorted(store.slugs())
    for memory in store.list():
        assert index.line_for(memory.slug).trigger == memory.description
