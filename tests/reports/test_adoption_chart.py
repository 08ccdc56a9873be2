"""The adoption chart stays one panel wide however long the history: a bar per snapshot up
to `ADOPTION_BARS_UP_TO`, stacked areas beyond, and a few date labels either way."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pandas as pd

from dims._reports._charts import ADOPTION_BARS_UP_TO, adoption_chart


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
    found = re.findall(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    assert len(found) == 1, svg[:200]  # one panel
    return float(found[0][0])


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
    bars = adoption_chart(over_time(ADOPTION_BARS_UP_TO))
    assert width(long) == width(bars) == width(adoption_chart(over_time(3))) <= 360
    assert "<polygon" in long and "<polygon" not in bars  # areas beyond, bars up to it
    assert bars.count("<rect") == 2 * ADOPTION_BARS_UP_TO
    assert 2 <= len(date_labels(bars)) <= 8
    assert len(long) < 2 * len(bars)  # as cheap as a month's
    assert "0.10.0" in long and "0.9.0" in long
