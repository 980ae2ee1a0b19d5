"""Host settings edited as text: what kura inserts it can take out to the byte, and text it
cannot read is an error with its line and column, never a crash."""

from __future__ import annotations

import pytest

from kura.hosts import jsonc


def test_insert_then_delete_gives_back_the_bytes() -> None:
    for text in ['{}', '{\n}\n', '{"a": 1}', '{\n\t"a": [1, 2]\n}', '{\r\n    "a": {"b": 1}\r\n}\r\n',
                 '{\n  // note\n  "a": 1,\n}\n']:  # fmt: skip
        root = jsonc.parse(text)
        added = jsonc.insert_member(text, root, "kura", {"x": [1, "y"]}, jsonc.style_of(text, root))
        grown = jsonc.parse(added)
        assert grown.value == {**root.value, "kura": {"x": [1, "y"]}}
        back = jsonc.delete_member(added, grown, "kura")
        assert back == ("{}\n" if text == "{\n}\n" else text)  # an empty object's inside is not kept


def test_items_added_and_removed_around_the_persons_own() -> None:
    text = '{\n  "list": [\n    "mine", // keep\n    "also"\n  ]\n}\n'
    root = jsonc.parse(text)
    array = root.member("list").node  # type: ignore[union-attr]
    added = jsonc.append_item(text, array, "kura", jsonc.style_of(text, root))
    assert jsonc.parse(added).value == {"list": ["mine", "also", "kura"]}
    grown = jsonc.parse(added).member("list").node  # type: ignore[union-attr]
    assert jsonc.delete_item(added, grown, 2) == text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": 1 "b": 2}', "1:9"),
        ('{\n  "a": tru\n}', "2:8"),
        ("[" * 5000, "1:202"),
        ('{"a": 1}\n{"b": 2}', "2:1"),
        ('{"a": "\\x"}', "1:8"),
        ("", "1:1"),
        ('{"n": ' + "9" * 5000 + "}", "1:7"),
        ('{"n": NaN}', "1:7"),
    ],
)
def test_unreadable_text_is_an_error_with_its_place(text: str, where: str) -> None:
    with pytest.raises(jsonc.JsonTextError) as caught:
        jsonc.parse(text)
    assert str(caught.value).startswith(where + ":")
