"""The compiled array split (`analysis.dumps._arraysplit`) held to msgspec, which it replaced.

What must hold: whenever it answers, msgspec's `list[Raw]` decode accepts the same text and
cuts the same elements, and the pages it names are the elements msgspec's probe finds a
top-level "resources" key in. Where it is not sure it answers None, and the dump reader
splits with msgspec as before (so every error stays msgspec's, then orjson's).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from analysis.dumps import _arraysplit as arraysplit
from analysis.dumps import _reader as dumps

RAW_ELEMENTS = msgspec.json.Decoder(list[msgspec.Raw])


class Probe(msgspec.Struct):
    resources: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


PROBE = msgspec.json.Decoder(Probe)


def cut(text: bytes) -> tuple[list[bytes], bytes] | None:
    """arraysplit's answer as element texts and kinds."""
    found = arraysplit.split(text)
    if found is None:
        return None
    offsets, kinds = found
    bounds = memoryview(offsets).cast("q")
    elements = [text[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2)]
    assert len(elements) == len(kinds)
    return elements, kinds


def msgspec_kind(element: bytes) -> int:
    try:
        return 0 if PROBE.decode(element).resources is msgspec.UNSET else 1
    except (msgspec.ValidationError, msgspec.DecodeError):
        return 0  # not an object: a record to reject later, never a page


def assert_as_msgspec(text: bytes) -> bool:
    """When arraysplit answers, msgspec accepts the text and agrees; True when it answered."""
    answer = cut(text)
    if answer is None:
        return False
    elements, kinds = answer
    theirs = RAW_ELEMENTS.decode(text)  # raises if arraysplit accepted what msgspec refuses
    assert elements == [bytes(element) for element in theirs]
    for element, kind in zip(elements, kinds, strict=True):
        if kind == 2:  # unsure: an escaped key at the top level; never where msgspec sees none
            assert element.lstrip().startswith(b"{") and b"\\" in element
        else:
            assert kind == msgspec_kind(element), element
    return True


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["resources", "id", "é", "a\nb", '"q"', ""]) | st.text(),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@st.composite
def arrays(draw: st.DrawFn) -> bytes:
    values = draw(st.lists(json_values, max_size=6))
    indent = draw(st.sampled_from([None, 0, 2, "\t"]))
    ascii_only = draw(st.booleans())
    separators = draw(st.sampled_from([None, (",", ":"), (" , ", " : ")]))
    text = json.dumps(values, indent=indent, ensure_ascii=ascii_only, separators=separators)
    around = draw(st.sampled_from(["", " ", "\n", "\r\n\t "]))
    return (around + text + around).encode()


@settings(max_examples=400, deadline=None)
@given(arrays())
def test_valid_arrays_split_as_msgspec_splits_them(text: bytes):
    assert assert_as_msgspec(text)


@settings(max_examples=600, deadline=None)
@given(arrays(), st.data())
def test_damaged_text_is_never_accepted_where_msgspec_refuses_it(text: bytes, data: st.DataObject):
    assume(len(text) > 2)
    at = data.draw(st.integers(0, len(text) - 1))
    how = data.draw(st.sampled_from(["drop", "insert", "replace"]))
    byte = bytes([data.draw(st.sampled_from(list(b'[]{}",:\\ \x00\x1f0-.eEnulltrfasu\xc3')))])
    damaged = {
        "drop": text[:at] + text[at + 1 :],
        "insert": text[:at] + byte + text[at:],
        "replace": text[:at] + byte + text[at + 1 :],
    }[how]
    try:
        RAW_ELEMENTS.decode(damaged)
    except (msgspec.DecodeError, msgspec.ValidationError):
        assert arraysplit.split(damaged) is None
    else:
        assert_as_msgspec(damaged)  # or unsure (None) of text msgspec accepts


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"   ",
        b"{}",
        b'"a"',
        b"[",
        b"[1,]",
        b"[,1]",
        b"[1 2]",
        b"[01]",
        b"[-]",
        b"[1.]",
        b"[.5]",
        b"[1e]",
        b"[1e+]",
        b"[tru]",
        b"[nul]",
        b"[True]",
        b'["a\x01"]',
        b'["\\x"]',
        b'["\\u12"]',
        b'["\\udc00"]',
        b'["\\ud800"]',
        b'["\\ud800\\u0041"]',
        b'["abc]',
        b'[{"a" 1}]',
        b'[{"a":1,}]',
        b"[{1:1}]",
        b'[{"a":1 "b":2}]',
        b"[1] x",
        b"[1]]",
        b"[[1]",
    ],
)
def test_what_msgspec_refuses_is_not_split(text: bytes):
    with pytest.raises((msgspec.DecodeError, msgspec.ValidationError)):
        RAW_ELEMENTS.decode(text)
    assert arraysplit.split(text) is None


def test_pages_are_told_from_records_by_a_top_level_resources_key():
    text = (
        b'[{"id": "a"}, {"resources": [], "offset": 0}, {"x": {"resources": 1}},'
        b' ["resources"], {"name": "resources"}, {"resourc\\u0065s": 1}, {"\\u00e9": 1,'
        b' "resources": 2}, 7]'
    )
    elements, kinds = cut(text) or ([], b"")
    assert list(kinds) == [0, 1, 0, 0, 0, 2, 1, 0]
    assert [bytes(e) for e in RAW_ELEMENTS.decode(text)] == elements
    # the unsure element is probed by msgspec, which decodes the escaped key: a page
    read = dumps._raw_elements(text)
    assert [type(e) for e in read] == [
        msgspec.Raw,
        dict,
        msgspec.Raw,
        msgspec.Raw,
        msgspec.Raw,
        dict,
        dict,
        msgspec.Raw,
    ]


def test_nesting_beyond_its_depth_is_left_to_msgspec():
    deep = b"[" + b"[" * 300 + b"]" * 300 + b"]"
    assert arraysplit.split(deep) is None
    shallow = b"[" + b"[" * 200 + b"]" * 200 + b"]"
    assert assert_as_msgspec(shallow)


def test_long_strings_and_escapes_across_the_wide_scan():
    """Quotes, backslashes and control characters at every position of a 16-byte block."""
    for n in range(40):
        for inside in (b'\\"', b"\\\\", b"\\u00e9", b"\\ud83d\\ude00", "é".encode()):
            text = b'["' + b"x" * n + inside + b"y" * n + b'"]'
            assert assert_as_msgspec(text), text
        bad = b'["' + b"x" * n + b'\n"]'
        assert arraysplit.split(bad) is None


def test_the_element_texts_are_msgspec_raws_of_the_same_buffer():
    text = b'[ {"id": 1} ,\n"two", [3] ]'
    read = dumps._raw_elements(text)
    assert type(read) is dumps._Run
    assert [bytes(e) for e in read] == [b'{"id": 1}', b'"two"', b"[3]"]


@settings(max_examples=200, deadline=None)
@given(arrays())
def test_the_dump_reader_gets_the_same_elements_with_or_without_it(text: bytes):
    def read(split: Any) -> Any:
        previous = dumps.arraysplit
        dumps.arraysplit = split
        try:
            elements = dumps._raw_elements(text)
        finally:
            dumps.arraysplit = previous
        if type(elements) is dumps._Run:  # records only, taken in bulk
            assert all(type(e) is msgspec.Raw for e in elements)
        return [bytes(e) if type(e) is msgspec.Raw else orjson.dumps(e) for e in elements]

    assert read(arraysplit) == read(None)


def in_blocks(text: bytes, sizes: list[int]) -> tuple[list[bytes], bytes] | None:
    """split_from fed block by block, as the dump reader feeds it: the elements and kinds
    when the array closes with only whitespace after it, None where the reader hands over."""
    opening = text.find(b"[") + 1
    if not opening or text[: opening - 1].strip():
        return None
    data, rest = text[: opening + sizes[0]], text[opening + sizes[0] :]
    start, first, elements, kinds = opening, True, [], b""
    for size in [*sizes[1:], *[48] * len(text)]:
        found = arraysplit.split_from(data, start, first)
        if found is None:
            return None
        offsets, more_kinds, start, first, closed = found
        bounds = memoryview(offsets).cast("q")
        elements += [data[bounds[i] : bounds[i + 1]] for i in range(0, len(bounds), 2)]
        kinds += more_kinds
        if closed >= 0:
            return (elements, kinds) if not (data[closed:] + rest).strip() else None
        if not rest:
            return None  # the text ends inside the array
        data, rest, start = data[start:] + rest[:size], rest[size:], 0
    raise AssertionError("never reached: every round reads more of the text")


sizes = st.lists(st.integers(1, 48), min_size=1, max_size=400)


@settings(max_examples=300, deadline=None)
@given(arrays(), sizes)
def test_blocks_cut_anywhere_give_the_elements_of_the_whole(text: bytes, cuts: list[int]):
    assert in_blocks(text, cuts) == cut(text)


@settings(max_examples=300, deadline=None)
@given(arrays(), sizes, st.data())
def test_damaged_text_in_blocks_is_never_taken_where_msgspec_refuses_it(
    text: bytes, cuts: list[int], data: st.DataObject
):
    at = data.draw(st.integers(0, len(text)))
    byte = data.draw(st.sampled_from([b"", b",", b"]", b"}", b'"', b"\\", b"\x01", b"-", b"e"]))
    damaged = text[:at] + byte + text[at + 1 :]
    found = in_blocks(damaged, cuts)
    if found is not None:
        assert found[0] == [bytes(e) for e in RAW_ELEMENTS.decode(damaged)]


def test_a_block_holds_back_an_element_until_what_follows_it_is_seen():
    # "3" may go on in the next block ("34"), so it waits for its comma or bracket
    assert arraysplit.split_from(b"[1,2,3", 1, True)[2:] == (5, False, -1)
    assert arraysplit.split_from(b"[1,2,3]", 1, True)[2:] == (7, False, 7)
    assert arraysplit.split_from(b"[ ]", 1, True)[2:] == (3, True, 3)
    assert arraysplit.split_from(b"  ", 0, False)[2:] == (2, False, -1)
    assert arraysplit.split_from(b"]", 0, False) is None  # a trailing comma before it
    assert arraysplit.split_from(b'{"a": "b\\', 0, False)[2:] == (0, False, -1)
    with pytest.raises(ValueError, match="start is outside"):
        arraysplit.split_from(b"[]", 3, True)
