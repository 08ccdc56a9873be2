"""The adoption chart stays one chart wide however long the history: a bar per snapshot up
to `ADOPTION_BARS_UP_TO`, stacked areas with a few date labels beyond."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pandas as pd
import pytest

from analysis.reports._charts import ADOPTION_BARS_UP_TO, adoption_chart


def over_time(days: int) -> pd.DataFrame:
    """Two versions a day, the newer one gaining share day by day."""
    rows = []
    for n in range(days):
        day = (date(2024, 1, 1) + timedelta(days=n)).isoformat()
        share = n / max(days - 1, 1)
        rows += [
            {"snapshot_date": day, "image_version": "0.9.0", "deployments": 1, "share": 1 - share},
            {"snapshot_date": day, "image_version": "0.10.0", "deployments": 1, "share": share},
        ]
    return pd.DataFrame(rows)


def width(svg: str) -> float:
    match = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    assert match, svg[:200]
    return float(match[1])


def date_labels(svg: str) -> set[str]:
    return set(re.findall(r">(\d{4}-\d{2}-\d{2})<", svg))


def test_few_snapshots_get_a_labelled_bar_each() -> None:
    svg = adoption_chart(over_time(3))
    assert date_labels(svg) == {"2024-01-01", "2024-01-02", "2024-01-03"}
    assert "0.10.0" in svg and "0.9.0" in svg


def test_three_years_of_snapshots_make_a_chart_as_wide_as_a_few_weeks() -> None:
    long = adoption_chart(over_time(1_095))
    labels = date_labels(long)
    assert 2 <= len(labels) <= 8
    assert {"2024-01-01", (date(2024, 1, 1) + timedelta(days=1_094)).isoformat()} <= labels
    just_past_bars = adoption_chart(over_time(ADOPTION_BARS_UP_TO + 1))
    assert width(long) == pytest.approx(width(just_past_bars), rel=0.05)
    assert width(long) < width(adoption_chart(over_time(ADOPTION_BARS_UP_TO)))
    assert "0.10.0" in long and "0.9.0" in long
