"""The compiled lane (_gather.c): what it keeps of a record it gives back, and what it refuses.

That it writes the careful reader's tables is tested in test_compiled_lane.py (every test
there runs with it); here: rollback, a value of the wrong type, programs it must refuse.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dims._pages import Page
from dims._tables import Flattener
from dims._tables import _gathered as gathered
from dims._tables import _rules as t
from dims._tables._gathered import GATHERED, GatheredReader
from dims._tables._layout import Layout
from dims._tables._typed import Fallback
from dims.sandbox import generate_fleet

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
    page = Page(RAW_ARRAY.decode(orjson.dumps([first, broken, last])), source="t")
    stop, refused = reader.read_many(page, 0)
    assert stop == 1 and isinstance(refused, Fallback)
    assert reader.rows() == 1  # the first record's row only
    assert reader.read_many(page, 2) == (3, None)
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
    taken = []
    read_many = GatheredReader.read_many

    def counting(self: GatheredReader, page: Page, start: int) -> Any:
        stop, refused = read_many(self, page, start)
        taken.append(stop - start)
        return stop, refused

    monkeypatch.setattr(GatheredReader, "read_many", counting)
    records = _busy_records(3)
    _tables(records, raw=True)
    assert taken == [3]  # one call into C for the page


def test_a_run_stops_at_a_parsed_record_and_at_one_given_back():
    records: list[Any] = _busy_records(5)
    records[3] = {**records[3], "future_field": 1}  # the strict Structs refuse it
    raws: list[Any] = RAW_ARRAY.decode(orjson.dumps(records))
    raws[1] = records[1]  # parsed, not raw
    layout = Layout(False)
    reader = GatheredReader(layout, layout.schemas())
    page = Page(raws, source="t", tags={records[0]["id"]: "prod"})
    assert reader.read_many(page, 0) == (1, None)
    stop, refused = reader.read_many(page, 2)
    assert stop == 3 and isinstance(refused, msgspec.ValidationError)
    assert "unknown field" in str(refused)
    reader.read_given_back(raws[3], refused, page)
    assert reader.read_many(page, 4) == (5, None)
    deployments = reader.take()["deployments"]
    wide = layout.wide.names
    ids = deployments[wide.index("id")].to_pylist()
    assert ids == [records[n]["id"] for n in (0, 2, 3, 4)]
    types = deployments[wide.index("deployment_type")].to_pylist()
    assert types == ["prod", None, None, None]  # the sandbox's records name no type
    unknown = deployments[wide.index("unknown_fields_json")].to_pylist()
    assert '"future_field":1' in unknown[2]


class _Small(msgspec.Struct, gc=False):
    name: str | None = None
    size: float | None = None


def _gatherer(ops: list[tuple[Any, ...]], kinds: str = "sds") -> Any:
    """A gatherer of one table: (name, size, unknown_fields_json) from `_Small`."""
    return gather.Gatherer(
        [kinds],
        [(_Small, ops)],
        (0,),
        0,
        2,
        2,
        orjson.dumps,
        Fallback,
        msgspec.UNSET,
        "name",
        msgspec.Raw,
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


class _Stamp(msgspec.Struct, gc=False):
    at: str | None = None


def _stamps(parse: Any = t.parse_datetime) -> Any:
    """A gatherer of (at, unknown_fields_json, deployment_type) from `_Stamp`."""
    return gather.Gatherer(
        ["tss"],
        [(_Stamp, [(gathered.DATETIME, "at", 0, 0, parse)])],
        (0,),
        0,
        1,
        2,
        orjson.dumps,
        Fallback,
        msgspec.UNSET,
        "at",
        msgspec.Raw,
    )


def _micros(text: str) -> int:
    parsed = t.parse_datetime(text)
    return (parsed - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


_DIGITS = st.text("0123456789", min_size=1, max_size=1)


@st.composite
def _date_times(draw: st.DrawFn) -> str:
    """Text of the common form with any digits (months 13, February 30th), a fraction of
    any length, and any offset: what the C reading must take exactly as Python or leave."""
    pattern = "dddd-dd-ddTdd:dd:dd"
    text = "".join(draw(_DIGITS) if c == "d" else c for c in pattern)
    if draw(st.booleans()):
        text += "." + "".join(draw(_DIGITS) for _ in range(draw(st.integers(0, 8))))
    text += draw(st.sampled_from(["", "Z", "+", "-", "z", " "]))
    if text[-1] in "+-":
        text += draw(_DIGITS) + draw(_DIGITS) + ":" + draw(_DIGITS) + draw(_DIGITS)
    return text


@st.composite
def _edge_date_times(draw: st.DrawFn) -> str:
    """The common form where it is hard: a leap second (second 60, where one can be or
    not: any hour and minute, any offset), and the first and last days of years 1-9999
    with offsets that push the instant out of them or keep it in."""
    day = draw(st.sampled_from(["0001-01-01", "9999-12-31", "2016-12-31", "2015-06-30"]))
    hour = draw(st.sampled_from(["00", "01", "15", "22", "23"]))
    minute = draw(st.sampled_from(["00", "30", "59"]))
    second = draw(st.sampled_from(["59", "60", "00"]))
    fraction = draw(st.sampled_from(["", ".5", ".999999", ".000"]))
    offset = draw(st.sampled_from(["Z", "", "+00:00", "+01:00", "-01:00", "-08:00", "+14:00",
                                   "+00:30", "-00:01", "+23:59"]))  # fmt: skip
    return f"{day}T{hour}:{minute}:{second}{fraction}{offset}"


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        _date_times(),
        _edge_date_times(),
        st.builds(
            datetime.isoformat,
            st.datetimes(timezones=st.none() | st.timezones()),
            timespec=st.sampled_from(["auto", "seconds", "milliseconds", "microseconds"]),
        ),
    )
)
def test_a_date_time_reads_as_python_reads_it_or_is_given_back(text: str):
    reader = _stamps()
    try:
        expected = _micros(text)
    except ValueError:
        with pytest.raises(Fallback):
            reader.read(_Stamp(at=text), "d", {}, None)
        return
    reader.read(_Stamp(at=text), "d", {}, None)
    rows, columns = reader.take(0)
    assert rows == 1
    assert int.from_bytes(columns[0][3], "little", signed=True) == expected


@pytest.mark.parametrize(
    "text",
    ["2025-06-01T12:30:45Z", "2025-06-01T12:30:45.123456+05:30", "2024-02-29T00:00:00.250-08:00",
     "2025-06-01T12:30:45", "2000-02-29T23:59:59.999999Z",
     # a leap second, read as second 59 (fraction kept), at 23:59 in UTC whatever the offset
     "2016-12-31T23:59:60Z", "2016-12-31T23:59:60.500Z", "2016-12-31T15:59:60-08:00",
     "9999-12-31T23:59:60Z",
     # the first and last instants of years 1-9999 in UTC
     "0001-01-01T00:00:00Z", "0001-01-01T01:00:00+01:00", "9999-12-31T23:59:59.999999Z",
     "9999-12-31T22:59:59-01:00"],
)  # fmt: skip
def test_the_common_form_is_read_without_python(text: str):
    def refuse(_text: str) -> Any:
        raise AssertionError("the Python rule was called")

    reader = _stamps(refuse)
    reader.read(_Stamp(at=text), "d", {}, None)
    _rows, columns = reader.take(0)
    assert int.from_bytes(columns[0][3], "little", signed=True) == _micros(text)


@pytest.mark.parametrize(
    "text", ["2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2025-04-31T00:00:00Z",
             "0000-01-01T00:00:00Z", "2025-06-01T24:00:00Z", "2025-06-01T12:00:60Z",
             # second 60 where no leap second can be (22:59 and 00:00 in UTC)
             "2016-12-31T23:59:60+01:00", "2017-01-01T00:00:60Z", "2016-12-31T23:59:61Z",
             # instants in year 0 or 10000 once the offset is applied
             "0001-01-01T00:00:00+01:00", "0001-01-01T00:59:59.999999+01:00",
             "9999-12-31T23:59:59-01:00", "9999-12-31T23:00:00-01:00"],
)  # fmt: skip
def test_a_date_that_does_not_exist_is_given_back(text: str):
    with pytest.raises(Fallback):
        _stamps().read(_Stamp(at=text), "d", {}, None)


def test_a_volume_names_its_one_source_or_all_of_them():
    records: list[Any] = _busy_records(1)
    spec = records[0]["source_config"]["resource_spec"]
    spec["volumes"] = [
        {"name": "one", "configMap": {"name": "c", "items": [{"b": 1, "a": 2}]}},
        {"name": "two", "secret": {"secretName": "s"}, "configMap": {"name": "c"}},
        {"name": "none", "csi": None},
        {"name": "empty", "emptyDir": {}},
    ]
    tables = _tables(records, raw=True)
    assert tables == _tables(records, raw=False)
    found = [(v["source_type"], v["source_json"]) for v in tables["deployment_volumes"]]
    assert found == [
        ("configMap", '{"items":[{"a":2,"b":1}],"name":"c"}'),
        ("configMap,secret", '{"configMap":{"name":"c"},"secret":{"secretName":"s"}}'),
        (None, None),
        ("emptyDir", "{}"),
    ]
