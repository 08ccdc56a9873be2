"""The compiled row layout (`dims._tables._columnar`) against pyarrow's own conversion.

Every table an export writes goes through `arrays_from_rows`; these tests hold it to the
result pyarrow gives for the same rows (the conversion it replaced), for values the
readers make and for values it must refuse (so that pyarrow converts them, or says what is
wrong, as before).
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dims._tables import TIMESTAMP
from dims._tables import _arrays as arrays
from dims._tables import _columnar as columnar
from dims._tables import _gathered as gathered
from dims._tables import _typed as typed
from dims._tables._arrays import arrays_from_rows

TYPES = {"s": pa.string(), "d": pa.float64(), "i": pa.int64(), "b": pa.bool_(), "t": TIMESTAMP}

zones = st.builds(
    lambda minutes: UTC if minutes == 0 else timezone(timedelta(minutes=minutes)),
    st.integers(-23 * 60 - 59, 23 * 60 + 59),
)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "s": st.text(),
    "d": st.floats(allow_nan=False),
    "i": st.integers(-(2**63), 2**63 - 1),
    "b": st.booleans(),
    # away from the ends of datetime's range, where an offset moves the instant outside it
    "t": st.datetimes(datetime(2, 1, 1), datetime(9998, 12, 31), timezones=zones),
}


def by_pyarrow(rows: list[Any], fields: list[pa.Field]) -> list[pa.Array]:
    return pa.array(map(tuple, rows), type=pa.struct(fields), size=len(rows)).flatten()


def fields_of(kinds: str) -> list[pa.Field]:
    return [pa.field(f"c{n}", TYPES[kind]) for n, kind in enumerate(kinds)]


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[Any]]:
    kinds = draw(st.text(alphabet="sdibt", min_size=1, max_size=8))
    row = st.tuples(*(st.none() | VALUES[kind] for kind in kinds))
    rows = draw(st.lists(row, max_size=40))
    as_lists = draw(st.booleans())
    return kinds, [list(r) for r in rows] if as_lists else rows


def test_the_compiled_modules_are_built():
    """`pip install` builds them (hatch_build.py); without them an export silently takes the
    slower paths (pyarrow's conversion, the orjson walk for unknown fields, the careful
    reader for every record)."""
    assert arrays.columnar is columnar is not None
    assert typed.unknownkeys is not None
    assert gathered.available()


@settings(max_examples=300, deadline=None)
@given(tables())
def test_rows_lay_out_as_pyarrow_converts_them(table: tuple[str, list[Any]]):
    kinds, rows = table
    fields = fields_of(kinds)
    assert columnar.columns(rows, kinds) is not None
    ours = arrays_from_rows(rows, fields)
    for mine, theirs in zip(ours, by_pyarrow(rows, fields), strict=True):
        mine.validate(full=True)
        assert mine.type == theirs.type
        assert mine.null_count == theirs.null_count
        assert mine.equals(theirs), (mine, theirs)


def test_instants_are_stored_in_utc_microseconds():
    kolkata = timezone(timedelta(hours=5, minutes=30))
    rows = [
        (datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),),
        (datetime(2024, 3, 1, 5, 29, 59, 999999, tzinfo=kolkata),),
        (datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),),
        (datetime(1, 1, 1, 12, tzinfo=timezone(timedelta(hours=-11))),),
    ]
    (array,) = arrays_from_rows(rows, fields_of("t"))
    stamps = array.cast(pa.int64()).to_pylist()
    leap_day_end = int(datetime(2024, 3, 1, tzinfo=UTC).timestamp() * 1_000_000) - 1
    assert stamps[:3] == [leap_day_end, leap_day_end, -999_999]
    assert array.to_pylist()[3] == datetime(1, 1, 1, 23, tzinfo=UTC)


class Text(str):
    """A str subclass: not what the readers make."""


@pytest.mark.parametrize(
    ("kinds", "rows"),
    [
        ("d", [(1.5,), (2,)]),  # an int in a double column: pyarrow checks it is exact
        ("i", [(1,), (True,)]),  # a bool is an int to Python, not to Arrow
        ("i", [(2**63,)]),  # beyond int64: pyarrow says so
        ("b", [(1,)]),
        ("s", [("a",), (Text("b"),)]),
        ("s", [("\ud800",)]),  # a lone surrogate: no UTF-8 for it
        ("t", [(datetime(2024, 1, 1),)]),  # naive: pyarrow's own rule
        ("t", [(datetime(2024, 7, 1, tzinfo=ZoneInfo("Europe/Paris")),)]),  # not a timezone
        ("s", [("a",), ("b", "c")]),  # a row of the wrong width
        ("s", [["a"], "b"]),  # a row that is not a list or tuple
    ],
)
def test_what_it_is_not_sure_of_goes_to_pyarrow(kinds: str, rows: list[Any]):
    assert columnar.columns(rows, kinds) is None
    fields = fields_of(kinds)
    try:
        expected = by_pyarrow(rows, fields)
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        with pytest.raises(type(exc)):
            arrays_from_rows(rows, fields)
    else:
        got = arrays_from_rows(rows, fields)
        assert [a.to_pylist() for a in got] == [a.to_pylist() for a in expected]


def test_types_it_has_no_letter_for_go_to_pyarrow():
    fields = [pa.field("n", pa.int32()), pa.field("s", pa.string())]
    got = arrays_from_rows([(1, "a"), (None, "b")], fields)
    assert [a.type for a in got] == [pa.int32(), pa.string()]
    assert got[0].to_pylist() == [1, None]


def test_an_unknown_letter_is_an_error():
    with pytest.raises(ValueError, match="unknown kind x at 1"):
        columnar.columns([("a", 1)], "sx")


def test_arrays_outlive_the_rows_they_came_from():
    rows = [[f"name-{n}" * 3, float(n)] for n in range(1000)]
    texts, numbers = arrays_from_rows(rows, fields_of("sd"))
    del rows
    gc.collect()
    assert texts[999].as_py() == "name-999" * 3
    assert numbers.to_numpy()[-1] == 999.0


def test_the_helpers_build_what_pyarrow_would():
    at = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)
    assert arrays.column([at], TIMESTAMP)[0].equals(pa.scalar(at, type=TIMESTAMP))
    assert arrays.column(["db"] * 3, pa.string()).equals(pa.array(["db"] * 3, pa.string()))
    assert arrays.column(["a", None], pa.string()).equals(pa.array(["a", None], pa.string()))
    index = np.arange(6).reshape(2, 3).T.ravel()
    assert arrays.int64_array(index).equals(pa.array(index, pa.int64()))
