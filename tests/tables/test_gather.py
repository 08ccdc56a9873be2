"""The compiled lane (gather.c): what it keeps of a record it gives back, and what it refuses.

That it writes the careful reader's tables is tested in test_typed_reader.py (every test
there runs with it); here: rollback, a value of the wrong type, programs it must refuse.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import orjson
import pytest

from analysis.pages import Page
from analysis.sandbox.fleet import generate_fleet
from analysis.tables import Flattener, gathered
from analysis.tables.gathered import GATHERED, GatheredReader
from analysis.tables.layout import Layout
from analysis.tables.typed import Fallback

gather = gathered.gather
AT = datetime(2025, 6, 1, 12, tzinfo=UTC)
RAW_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])


def _busy_records(n: int) -> list[dict[str, Any]]:
    """Records with rows in every child table (containers, env, volumes, labels, secrets)."""
    fleet = generate_fleet(400, seed=7).deployments

    def spec(record: dict[str, Any]) -> dict[str, Any]:
        return (record.get("source_config") or {}).get("resource_spec") or {}

    busy = [
        r for r in fleet if r.get("secrets") and spec(r).get("sidecars") and spec(r).get("labels")
    ]
    assert len(busy) >= n
    return busy[:n]


def _tables(records: list[Any], raw: bool) -> dict[str, list[dict[str, Any]]]:
    flattener = Flattener(snapshot_at=AT)
    data = orjson.dumps(records)
    flattener.add_page(Page(RAW_ARRAY.decode(data) if raw else orjson.loads(data), source="t"))
    return {name: table.to_pylist() for name, table in flattener.take().items()}


def test_a_record_given_back_midway_leaves_no_row_in_any_table():
    """created_at is read after source_config and secrets: by then the record has rows in
    every child table, and all of them must go when its date-time is given back."""
    first, broken, last = _busy_records(3)
    broken = {**broken, "created_at": "not a date"}
    layout = Layout(False)
    reader = GatheredReader(layout, layout.schemas())
    raws = RAW_ARRAY.decode(orjson.dumps([first, broken, last]))
    reader.read(raws[0], lambda _id: None)
    held = reader.rows()
    with pytest.raises(Fallback):
        reader.read(raws[1], lambda _id: None)
    assert reader.rows() == held
    reader.read(raws[2], lambda _id: None)
    taken = reader.take()
    assert [len(arrays[0]) for arrays in taken.values()] == [
        len(rows) for rows in _expected_rows([first, last]).values()
    ]
    ids = {str(v) for arrays in taken.values() for v in arrays[0].to_pylist()}
    assert broken["id"] not in ids


def _expected_rows(records: list[Any]) -> dict[str, list[Any]]:
    tables = _tables(records, raw=False)
    return {name: tables[name] for name in GATHERED}


def test_records_of_both_lanes_keep_their_order_in_every_table():
    """A record the careful reader reads between two the compiled lane reads: its rows sit
    between theirs, in every table."""
    records: list[Any] = _busy_records(6)
    records[2] = {**records[2], "name": 3}  # rejected by the careful reader
    records[4] = {**records[4], "created_at": "2025-06-01"}  # a date only: read carefully
    assert _tables(records, raw=True) == _tables(records, raw=False)


def test_an_export_reads_raw_records_with_the_compiled_lane(monkeypatch):
    calls = []
    read = GatheredReader.read

    def counting(self: GatheredReader, raw: msgspec.Raw, listed: Any) -> None:
        calls.append(raw)
        read(self, raw, listed)

    monkeypatch.setattr(GatheredReader, "read", counting)
    records = _busy_records(3)
    _tables(records, raw=True)
    assert len(calls) == 3


class _Small(msgspec.Struct, gc=False):
    name: str | None = None
    size: float | None = None


def _gatherer(ops: list[tuple[Any, ...]], kinds: str = "sds") -> Any:
    """A gatherer of one table: (name, size, unknown_fields_json) from `_Small`."""
    return gather.Gatherer(
        [kinds], [(_Small, ops)], (0,), 0, 2, 2, orjson.dumps, Fallback, msgspec.UNSET
    )


def test_a_value_of_another_type_than_its_column_gives_the_record_back():
    # the name into the text column, then into the float column, which refuses it
    reader = _gatherer([(gathered.SCALAR, "name", 0, 0), (gathered.SCALAR, "name", 0, 1)])
    reader.read(_Small(name=None), "d1", {}, None)
    with pytest.raises(Fallback):
        reader.read(_Small(name="xyz"), "d2", {}, None)
    rows, columns = reader.take(0)
    assert rows == 1
    assert [column[0] for column in columns] == [1, 1, 1]  # one row, of nulls
    assert columns[0][3] == b""  # the text its refused row had written is gone too


@pytest.mark.parametrize(
    ("ops", "error"),
    [
        ([(gathered.SCALAR, "missing", 0, 0)], ValueError),  # no such field
        ([(gathered.SCALAR, "name", 0, 9)], ValueError),  # no such column
        ([(gathered.SCALAR, "name", 4, 0)], ValueError),  # no such table
        ([(99, "name", 0, 0)], ValueError),  # no such operation
        ([(gathered.SCALAR, "name", 0)], ValueError),  # too few fields
        ([(gathered.NESTED, "name", 5)], ValueError),  # no such level
        (["not an op"], TypeError),
    ],
)
def test_a_program_it_cannot_run_is_refused_when_made(ops, error):
    with pytest.raises(error):
        _gatherer(ops)


def test_an_unknown_column_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind"):
        _gatherer([], kinds="sdx")
