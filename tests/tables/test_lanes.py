"""Dirty batches: records the careful reader reads between those the compiled lane reads.

Each lane keeps its rows until a batch is taken, and then one take per column puts them in
record order (`analysis/_tables/_lanes.py`; before, every switch between the lanes made
arrays of the rows so far: 3.4x the clean export with 10% bad records, issue 31). Here a
dirty export, bad records anywhere and batches cut anywhere, is held to the same records
exported one at a time (a Flattener each: one lane, nothing to put in order) and to the
careful reader alone, table by table, rejected_records included.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dims._pages import Page
from dims._tables import Flattener
from dims._tables import _gathered as gathered
from dims.sandbox import generate_fleet

AT = datetime(2025, 6, 1, 12, tzinfo=UTC)
Tables = dict[str, list[dict[str, Any]]]

#: How a record is damaged: the careful reader rejects it (a reason in rejected_records) or
#: reads it (rows in every table it has rows for), the compiled lane having given it back.
DAMAGE = ("none", "cpu is text", "name is a number", "a label beyond 64 bits", "an annotation too")
_BIG = "@@big@@"
#: Child tables every busy record has rows in.
CHILD_TABLES = (
    "deployment_secrets",
    "deployment_volumes",
    "deployment_volume_mounts",
    "deployment_containers",
    "deployment_container_env",
    "deployment_labels",
)


@functools.cache
def _busy_records() -> list[dict[str, Any]]:
    """Records with rows in every child table (containers, env, volumes, labels, secrets)."""

    def spec(record: dict[str, Any]) -> dict[str, Any]:
        return (record.get("source_config") or {}).get("resource_spec") or {}

    return [
        r
        for r in generate_fleet(400, seed=7).deployments
        if r.get("secrets") and spec(r).get("sidecars") and spec(r).get("labels")
    ]


def _damaged(record: dict[str, Any], damage: str) -> bytes:
    """The record's JSON text, damaged."""
    record = orjson.loads(orjson.dumps(record))
    spec = record["source_config"]["resource_spec"]
    if damage == "cpu is text":
        spec["cpu"] = "2 cores"
    elif damage == "name is a number":
        record["name"] = 5
    elif damage == "a label beyond 64 bits":  # the compiled lane gives it back (orjson reads
        spec["labels"] = {**spec["labels"], "budget": _BIG}  # it as a float): read carefully
    elif damage == "an annotation too":
        spec["annotations"] = {**(spec.get("annotations") or {}), "budget": _BIG}
    return orjson.dumps(record).replace(f'"{_BIG}"'.encode(), b"123456789012345678901234567890")


def _texts(damages: list[str]) -> list[bytes]:
    busy = _busy_records()
    return [_damaged(busy[n % len(busy)], damage) for n, damage in enumerate(damages)]


def _add(tables: Tables, taken: dict[str, Any]) -> None:
    for name, table in taken.items():
        tables.setdefault(name, []).extend(table.to_pylist())


def _interleaved(texts: list[bytes], page_size: int, takes: set[int]) -> Tables:
    """The records as raw text in pages of `page_size`, a batch taken after each page in
    `takes` and at the end."""
    flattener, tables = Flattener(snapshot_at=AT), {}
    for n, start in enumerate(range(0, len(texts), page_size)):
        records = [msgspec.Raw(t) for t in texts[start : start + page_size]]
        flattener.add_page(Page(records, source="t", first_index=start))
        if n in takes:
            _add(tables, flattener.take())
    _add(tables, flattener.take())
    return tables


def _one_by_one(texts: list[bytes], raw: bool = True) -> Tables:
    """Each record in a Flattener of its own (raw: one lane; parsed: the careful reader)."""
    tables: Tables = {}
    for n, text in enumerate(texts):
        flattener = Flattener(snapshot_at=AT)
        record = msgspec.Raw(text) if raw else orjson.loads(text)
        flattener.add_page(Page([record], source="t", first_index=n))
        _add(tables, flattener.take())
    return tables


def _assert_same(got: Tables, expected: Tables) -> None:
    assert got.keys() == expected.keys()
    for name, rows in expected.items():
        if name == "deployment_components":  # one batch's rows by component, then deployment
            key = orjson.dumps
            assert sorted(got[name], key=key) == sorted(rows, key=key), name
        else:
            assert got[name] == rows, name


def test_every_tenth_record_bad_gives_the_tables_of_one_record_at_a_time():
    damages = [DAMAGE[1 + (n // 10) % 4] if n % 10 == 5 else "none" for n in range(60)]
    texts = _texts(damages)
    expected = _one_by_one(texts)
    assert [r["record_index"] for r in expected["rejected_records"]] == [5, 15, 45, 55]
    careful = {orjson.loads(texts[n])["id"] for n in (25, 35)}  # read by the careful reader
    for name in CHILD_TABLES:  # each has rows of both lanes
        assert careful < {r["deployment_id"] for r in expected[name]}, name
    got = _interleaved(texts, page_size=25, takes={0})
    _assert_same(got, expected)
    _assert_same(_one_by_one(texts, raw=False), expected)  # the careful reader alone


@given(
    damages=st.lists(st.sampled_from(DAMAGE), min_size=1, max_size=14),
    page_size=st.integers(1, 6),
    takes=st.sets(st.integers(0, 13), max_size=4),
)
def test_bad_records_anywhere_and_batches_cut_anywhere(damages, page_size, takes):
    texts = _texts(damages)
    _assert_same(_interleaved(texts, page_size, takes), _one_by_one(texts))


def test_a_dirty_batch_keeps_every_row_of_both_lanes_in_order():
    """Row by row, in the wide table and a child table: the careful reader's records (bad
    ones rejected, the others read) sit between the compiled lane's."""
    damages = ["none", "a label beyond 64 bits", "none", "none", "cpu is text", "an annotation too"]
    texts = _texts(damages)
    got = _interleaved(texts, page_size=len(texts), takes=set())
    ids = [orjson.loads(t)["id"] for t in texts]
    assert [r["id"] for r in got["deployments"]] == [i for n, i in enumerate(ids) if n != 4]
    secrets = [r["deployment_id"] for r in got["deployment_secrets"]]
    assert list(dict.fromkeys(secrets)) == [i for n, i in enumerate(ids) if n != 4]
    assert [r["record_index"] for r in got["rejected_records"]] == [4]


@pytest.fixture(autouse=True)
def _compiled_lane_built():
    assert gathered.available(), "the compiled lane is what these tests hold to order"


def test_a_dirty_export_lays_out_the_careful_readers_rows_without_pandas(tmp_path):
    """The careful reader stores a number sent as an integer (as the real service sends
    them) as a float, which the row layout in C takes; an int there sent the whole table to
    pyarrow's conversion, which imports pandas (about 0.3 s) and converts row by row."""
    fleet = generate_fleet(30, seed=1, real_shaped=True, names="original").deployments
    assert any(type(r["source_config"]["resource_spec"]["cpu"]) is int for r in fleet)
    texts = [_damaged(r, "a label beyond 64 bits" if n % 5 == 2 else "none")
             for n, r in enumerate(fleet)]  # fmt: skip
    dump = tmp_path / "dirty.json"
    dump.write_bytes(b"[" + b",".join(texts) + b"]")
    argv = ["export", "--from-json", str(dump), "--out", str(tmp_path / "out")]
    code = (
        "import sys; from dims._cli import main; "
        f"code = main({argv!r}); print(code, 'pandas' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 False"
