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


def group_codes(keys: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the group of each row, the first row of each group) for rows keyed by several
    integer codes at once."""
    if not keys:
        raise ValueError("group by at least one key")
    if len(keys[0]) == 0:
        return np.zeros(0, "int64"), np.zeros(0, "int64")
    combined = np.zeros(len(keys[0]), "int64")
    for key in keys:  # mixed radix, coded again after each key so that it never overflows
        codes = np.asarray(key, "int64")
        combined = combined * (int(codes.max()) + 1) + codes
        combined = np.unique(combined, return_inverse=True)[1].reshape(-1)
    _, first, groups = np.unique(combined, return_index=True, return_inverse=True)
    return groups.reshape(-1).astype("int64"), first


def sums(
    columns: Mapping[str, np.ndarray], groups: np.ndarray, count: int
) -> dict[str, np.ndarray]:
    """Per group, the sum of each column's known values; NaN where none is known."""
    out = {}
    for name, values in columns.items():
        floats = np.asarray(values, "float64")
        known = ~np.isnan(floats)
        total = np.bincount(groups, weights=np.where(known, floats, 0.0), minlength=count)
        seen = np.bincount(groups, weights=known, minlength=count)
        out[name] = np.where(seen > 0, total, np.nan)
    return out


def distinct(members: np.ndarray, groups: np.ndarray, count: int, where: np.ndarray) -> np.ndarray:
    """Per group, how many distinct `members` (deployment codes) its rows in `where` have."""
    chosen = np.asarray(members, "int64")[where]
    size = int(chosen.max()) + 1 if len(chosen) else 1
    pairs = np.unique(groups[where] * size + chosen)
    return np.bincount(pairs // size, minlength=count).astype("int64")
