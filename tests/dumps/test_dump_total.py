"""A dump read whole says how many records it holds before its first page (a progress
bar's total); a dump read as a stream says nothing rather than guess."""

from __future__ import annotations

import json

import pytest

from dims._dumps import read_dump
from dims.sandbox import fleet_dump_bytes, generate_fleet


def total_of(path, **options) -> tuple[list[int], int]:
    """(what on_total was told, the records the pages then held)."""
    told: list[int] = []
    pages = read_dump(path, raw=True, on_total=told.append, **options)
    before = list(told)  # told before the first page is asked for
    return before, sum(len(page.records) for page in pages)


def test_an_array_of_records_is_counted_before_the_first_page(tmp_path):
    dump = tmp_path / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(120, seed=3)))
    assert total_of(dump, page_size=50) == ([120], 120)


def test_pages_inside_an_array_count_their_resources(tmp_path):
    dump = tmp_path / "mixed.json"
    page = {"resources": [{"id": "p1"}, {"id": "p2"}, {"id": "p3"}], "offset": 3}
    dump.write_text(json.dumps([{"id": "a"}, page, {"id": "b"}]))
    assert total_of(dump) == ([5], 5)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("fleet.ndjson", '{"id": "a"}\n{"id": "b"}\n'),
        ("page.json", '{"resources": [], "offset": 0}'),
    ],
)
def test_a_dump_not_split_whole_tells_no_total(tmp_path, name, text):
    dump = tmp_path / name
    dump.write_text(text)
    told, _ = total_of(dump)
    assert told == []
