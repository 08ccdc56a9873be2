"""The fleet's month's cost over time: the four cost totals (requests and limits at min and
max scale) of every snapshot up to a date, read from the days' files.

Each day is read with only the deployment columns the totals are made of (`DIFF_COLUMNS`,
what `dims diff` reads), and let go before the next, so a long history holds one day at a
time, never a table of every day. The per-group history (`cost_history`) is another table;
this is the fleet's line the page draws.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dims._reports import _prices as pr
from dims._reports._capacity import fleet_totals
from dims._reports._frames import load_snapshot, snapshot_days
from dims._reports._history import DIFF_COLUMNS

#: The columns of `cost_over_time`, one source for the page and its tests.
TREND_COLUMNS = [
    "snapshot_date",
    *pr.COST_TOTALS,
    "deployments",
    "deployments_unpriced",
    "deployments_unbounded",
]


def cost_over_time(
    out_dir: str | Path, prices: pr.PriceSheet = pr.DEFAULT_PRICES, up_to: str | None = None
) -> pd.DataFrame:
    """One row per snapshot (oldest first, up to `up_to` when given): the four cost totals
    and the deployments they leave out (`fleet_totals`: NaN where nothing is known)."""
    rows = []
    for day in snapshot_days(out_dir):
        if up_to is not None and day > up_to:
            break
        totals = fleet_totals(load_snapshot(out_dir, day, deployment_columns=DIFF_COLUMNS), prices)
        rows.append({"snapshot_date": day, **{c: totals[c] for c in TREND_COLUMNS[1:]}})
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in TREND_COLUMNS})
    return pd.DataFrame(rows, columns=TREND_COLUMNS)
