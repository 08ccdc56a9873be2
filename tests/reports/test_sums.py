"""The reports' sums by group (`analysis/_reports/_sums.py`) against pandas' own groupby.

Grouping takes a table of the codes seen where they are few (no sort) and sorts where they
are many or negative; sums count a pattern of unknown rows once. Each path must give what a
plain pandas groupby gives, group by group, in the order of the keys' codes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dims._reports import _sums

CODES = hnp.arrays("int64", st.integers(1, 60), elements=st.integers(-1, 5))


def _reference_groups(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Groups numbered in the order of their keys, and each group's first row, by pandas."""
    frame = pd.DataFrame({f"k{i}": key for i, key in enumerate(keys)})
    groups = frame.groupby(list(frame.columns), sort=True).ngroup().to_numpy("int64")
    first = pd.Series(np.arange(len(groups))).groupby(groups).min().to_numpy("int64")
    return groups, first


@settings(max_examples=200, deadline=None)
@given(st.lists(CODES, min_size=1, max_size=3), st.integers(0, 2**40))
def test_group_codes_match_pandas(keys: list[np.ndarray], spread: int) -> None:
    size = min(len(k) for k in keys)
    keys = [k[:size] for k in keys]
    keys[0] = keys[0] * spread  # codes far apart: the sorting path, not the table
    groups, first = _sums.group_codes(keys)
    expected_groups, expected_first = _reference_groups(keys)
    assert groups.tolist() == expected_groups.tolist()
    assert first.tolist() == expected_first.tolist()


@pytest.mark.parametrize("limit", [0, 1 << 24])
def test_table_and_sort_paths_agree(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    rng = np.random.default_rng(0)
    keys = [rng.integers(0, 7, 5_000), rng.integers(0, 300, 5_000)]
    monkeypatch.setattr(_sums, "_TABLE_LIMIT", limit)
    groups, first = _sums.group_codes(keys)
    expected_groups, expected_first = _reference_groups(keys)
    assert groups.tolist() == expected_groups.tolist()
    assert first.tolist() == expected_first.tolist()
    members = rng.integers(0, 900, 5_000)
    where = rng.random(5_000) < 0.7
    count = len(first)
    expected = (
        pd.DataFrame({"g": groups[where], "m": members[where]})
        .groupby("g")["m"]
        .nunique()
        .reindex(range(count), fill_value=0)
    )
    assert _sums.distinct(members, groups, count, where).tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays("int64", st.integers(0, 40), elements=st.integers(0, 6)),
    st.lists(st.sampled_from([np.nan, 0.0, 1.5, -2.0, 1e9]), min_size=40, max_size=40),
    st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_sums_match_pandas_min_count(
    groups: np.ndarray, values: list[float], same_pattern: list[bool]
) -> None:
    count = int(groups.max()) + 2 if len(groups) else 1  # the last group has no row
    a = np.array(values[: len(groups)])
    # a second column unknown where the first is (a shared pattern), or known everywhere
    b = np.where(np.isnan(a), np.nan, 3.0) if same_pattern[0] else np.ones(len(groups))
    got = _sums.sums({"a": a, "b": b}, groups, count)
    for name, column in (("a", a), ("b", b)):
        expected = (
            pd.Series(column)
            .groupby(groups)
            .sum(min_count=1)
            .reindex(range(count))
            .to_numpy("float64")
        )
        np.testing.assert_array_equal(got[name], expected)
