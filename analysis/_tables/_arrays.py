"""Rows of Python values -> Arrow arrays, laid out in C where it can be (`columnar`).

Why: pyarrow converts Python values one at a time through its generic sequence converter
(and imports pandas to look for array-likes on the way); the rows here are already typed
by the readers, so `columnar.columns` copies them straight into Arrow's buffers (what that
saves: docs/benchmarks.md, "What each C module buys"). Anything it is not sure of (a value
of another type, a naive datetime, a string with a lone surrogate, a column type it does
not lay out) makes it answer None, and the table is converted by pyarrow as before: same
result, pyarrow's own errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from dims._compiled import left_out

from ._rules import TIMESTAMP

try:
    if left_out("columnar"):  # DIMS_NO_C, for benchmarks/cmodules.py
        raise ImportError("_columnar left out (DIMS_NO_C)")
    from . import _columnar as columnar
except ImportError:  # built by `pip install` (hatch_build.py); pyarrow alone still works
    columnar = None  # type: ignore[assignment]

#: The column types `columnar` lays out, by its letter for them.
_KINDS = {pa.string(): "s", pa.float64(): "d", pa.int64(): "i", pa.bool_(): "b", TIMESTAMP: "t"}


def kinds_of(fields: Sequence[pa.Field]) -> str | None:
    """`columnar`'s letters for the fields' types, or None when one has no letter."""
    letters = [_KINDS.get(field.type) for field in fields]
    return None if None in letters else "".join(letters)  # type: ignore[arg-type]


def arrays_from_rows(rows: list[Any], fields: Sequence[pa.Field]) -> list[pa.Array]:
    """One array per field from rows (lists or tuples, one value per field, in order)."""
    kinds = kinds_of(fields)
    laid_out = None
    if columnar is not None and kinds is not None:
        laid_out = columnar.columns(rows, kinds)
    if laid_out is None:
        # pyarrow reads each tuple in C++: about twice as fast as transposing in Python
        struct = pa.array(map(tuple, rows), type=pa.struct(fields), size=len(rows))
        return struct.flatten()  # type: ignore[no-any-return]
    return arrays_from_buffers(len(rows), laid_out, fields)


def arrays_from_buffers(
    n: int, buffers: list[tuple[int, bytes | None, bytes | None, bytes]], fields: Sequence[pa.Field]
) -> list[pa.Array]:
    """One array per field from `n` rows' column buffers as the C modules give them:
    (null_count, validity, offsets, data) each."""
    return [_array(field.type, n, *b) for field, b in zip(fields, buffers, strict=True)]


def column(values: list[Any], type_: pa.DataType) -> pa.Array:
    """One array of `type_` from a list of values (`pa.array` of them imports pandas)."""
    return arrays_from_rows([(value,) for value in values], [pa.field("value", type_)])[0]


def int64_array(values: np.ndarray[Any, Any]) -> pa.Array:
    """An int64 array sharing a numpy array's memory (pa.array of it imports pandas)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _array(
    type_: pa.DataType, n: int, nulls: int, validity: bytes | None, offsets: bytes | None,
    data: bytes,
) -> pa.Array:  # fmt: skip
    valid = None if validity is None else pa.py_buffer(validity)
    values = pa.py_buffer(data)
    if offsets is None:
        return pa.Array.from_buffers(type_, n, [valid, values], null_count=nulls)
    return pa.Array.from_buffers(type_, n, [valid, pa.py_buffer(offsets), values], null_count=nulls)
