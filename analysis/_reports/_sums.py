"""Sums by group in numpy: the one place every grouping of the reports adds up.

Grouping a fleet's rows is a few passes of `numpy.bincount` over integer codes: no Python per
row, no hashing of text per row (text keys are coded once per deployment, then taken per row).
A sum adds what is known and is null where nothing is (pandas' `sum(min_count=1)`), so an
unknown figure never reads as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


def codes_of(values: pd.Series | np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """(an integer code per value, the distinct values): missing values get a code too."""
    codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=False)
    return codes.astype("int64"), pd.Index(uniques)


#: Above this many possible codes, `_dense` sorts instead of marking a table of them all.
_TABLE_LIMIT = 1 << 24


def _dense(codes: np.ndarray) -> np.ndarray:
    """Non-negative codes renumbered 0, 1, 2, … in their order (np.unique's inverse): by a
    table of the codes seen when they are few enough (no sort), else by sorting."""
    top = int(codes.max()) + 1
    if top > max(_TABLE_LIMIT, 4 * len(codes)):
        return np.unique(codes, return_inverse=True)[1].reshape(-1).astype("int64")
    seen = np.zeros(top, dtype=bool)
    seen[codes] = True
    renumbered: np.ndarray = (np.cumsum(seen) - 1)[codes]
    return renumbered


def group_codes(keys: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the group of each row, the first row of each group) for rows keyed by several
    integer codes at once; groups are numbered in the order of their keys' codes."""
    if not keys:
        raise ValueError("group by at least one key")
    if len(keys[0]) == 0:
        return np.zeros(0, "int64"), np.zeros(0, "int64")
    groups = np.zeros(len(keys[0]), "int64")
    for key in keys:  # mixed radix, coded again after each key so that it never overflows
        codes = np.asarray(key, "int64")
        codes = codes - int(codes.min())  # a missing category's -1 would reach into the next
        groups = _dense(groups * (int(codes.max()) + 1) + codes)
    rows = np.arange(len(groups), dtype="int64")
    first = np.full(int(groups.max()) + 1, len(groups), dtype="int64")
    np.minimum.at(first, groups, rows)
    return groups, first


def sums(
    columns: Mapping[str, np.ndarray], groups: np.ndarray, count: int
) -> dict[str, np.ndarray]:
    """Per group, the sum of each column's known values; NaN where none is known.

    Columns often share where they are unknown (a figure and its costs), so which groups
    know anything is counted once per such pattern, and a column known everywhere is summed
    with no masking at all."""
    out = {}
    known_by_pattern: dict[bytes, np.ndarray | None] = {}
    for name, values in columns.items():
        floats = np.asarray(values, "float64")
        unknown = np.isnan(floats)
        pattern = np.packbits(unknown).tobytes()
        if pattern not in known_by_pattern:
            anything = np.bincount(groups[~unknown], minlength=count) > 0
            known_by_pattern[pattern] = None if anything.all() else anything
        known = known_by_pattern[pattern]
        if unknown.any():
            floats = np.where(unknown, 0.0, floats)
        total = np.bincount(groups, weights=floats, minlength=count)
        out[name] = total if known is None else np.where(known, total, np.nan)
    return out


def distinct(members: np.ndarray, groups: np.ndarray, count: int, where: np.ndarray) -> np.ndarray:
    """Per group, how many distinct `members` (deployment codes) its rows in `where` have."""
    chosen = np.asarray(members, "int64")[where]
    size = int(chosen.max()) + 1 if len(chosen) else 1
    pairs = groups[where] * size + chosen
    if count * size > max(_TABLE_LIMIT, 4 * len(pairs)):
        return np.bincount(np.unique(pairs) // size, minlength=count).astype("int64")
    seen = np.zeros(count * size, dtype=bool)  # a table of the pairs seen: no sort
    seen[pairs] = True
    counted: np.ndarray = seen.reshape(count, size).sum(axis=1).astype("int64")
    return counted
