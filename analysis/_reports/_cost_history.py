"""The month's cost per group for every snapshot (`cost_history`), and each group's changes of
cost between consecutive snapshots (`group_cost_changes`, what `dims history --by` prints).

A day is read, grouped and let go before the next is read: the history holds one small row
per group per day, never the days' full tables at once. A group's figures are exactly those
of `cost_by` on that day (the same keys, the same price sheet), so the history and the
day's `cost_by_<keys>.parquet` agree to the cent. Unpriced deployments stay out of the sums
and are counted (`deployments_unpriced`); a group whose every deployment is unpriced has a
null cost, never $0. A group absent on a day (none of its deployments there) has no row.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from dims._errors import DatasetError
from dims._reports import _prices as pr
from dims._reports._allocation import cost_by, parse_keys
from dims._reports._frames import load_snapshot, snapshot_days
from dims._reports._history import DIFF_COLUMNS

#: The columns of `cost_history` (and of `cost_history.parquet`), in order.
COST_HISTORY_COLUMNS = [
    "day",
    "grouping",
    "group",
    "deployments",
    "deployments_unpriced",
    "deployments_unbounded",
    *pr.COST_TOTALS,
]
#: What a change of a group's cost is measured by (the report's order: requests at max scale).
HEADLINE = pr.cost_column("request", "max")
#: The separator of a group's values when it is grouped by several keys.
SEPARATOR = ", "


def _days(
    out_dir: str | Path, from_date: str | date | None, to_date: str | date | None
) -> list[str]:
    days = snapshot_days(out_dir)
    for given in (from_date, to_date):
        if given is not None and str(given) not in days:
            listed = ", ".join(days) or "none"
            raise DatasetError(f"no snapshot dated {given} in {out_dir}; available: {listed}")
    low = str(from_date) if from_date is not None else ""
    high = str(to_date) if to_date is not None else "9999-12-31"
    return [d for d in days if low <= d <= high]


def _empty() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype="float64") for c in COST_HISTORY_COLUMNS})
    for column in ("day", "grouping", "group"):
        frame[column] = frame[column].astype("object")
    for column in ("deployments", "deployments_unpriced", "deployments_unbounded"):
        frame[column] = frame[column].astype("int64")
    return frame


def cost_history(
    out_dir: str | Path,
    by: str | Sequence[str],
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
    from_date: str | date | None = None,
    to_date: str | date | None = None,
) -> pd.DataFrame:
    """The month's cost per group of each allocation of `by` (`"label:team"`, or a list:
    `["label:team", "namespace"]`) on every snapshot from `from_date` to `to_date` (default:
    all): one row per day (the snapshot's date), grouping (its keys, comma-separated) and group (the
    value as `cost_by` names it; several keys' values joined by ", "), with deployments
    counted, unpriced and unbounded counted, and the four cost totals. Oldest day first,
    most expensive group first within a day."""
    # the keys only (not allocation_tables, whose name-collision warning the report gave)
    texts = [by] if isinstance(by, str) else list(by)
    groupings = list(dict.fromkeys(tuple(parse_keys(text)) for text in texts))
    frames = []
    for day in _days(out_dir, from_date, to_date):
        snap = load_snapshot(out_dir, day, deployment_columns=DIFF_COLUMNS)
        for keys in groupings:
            frames.append(_day_rows(cost_by(snap, list(keys), prices), day, keys))
        del snap
    frames = [f for f in frames if len(f)]
    if not frames:
        return _empty()
    return pd.concat(frames, ignore_index=True)[COST_HISTORY_COLUMNS]


def _day_rows(grouped: pd.DataFrame, day: str, keys: Sequence[str]) -> pd.DataFrame:
    if len(keys) == 1:
        group = grouped[keys[0]].astype("object")
    else:
        # row by row, not DataFrame.agg(axis=1), which gives a frame for no rows
        texts = grouped[list(keys)].astype("str").itertuples(index=False, name=None)
        group = pd.Series([SEPARATOR.join(row) for row in texts], dtype="object")
    out = pd.DataFrame(
        {
            "day": day,
            "grouping": ",".join(keys),
            "group": group.to_numpy(dtype=object),
        }
    )
    for column in COST_HISTORY_COLUMNS[3:]:
        out[column] = grouped[column].to_numpy()
    return out


#: The columns of `group_cost_changes`.
CHANGE_COLUMNS = [
    "day",
    "previous_day",
    "grouping",
    "group",
    "deployments_before",
    "deployments_after",
    "before",
    "after",
    "change",
]


def group_cost_changes(history: pd.DataFrame, measure: str = HEADLINE) -> pd.DataFrame:
    """Each group's change of `measure` (default: requests at max scale) between consecutive
    snapshots of `history` (`cost_history`'s frame): day, previous_day, grouping,
    group, deployments before and after, the cost before and after and the change. A group
    absent on one side has 0 deployments and $0 there (it is not there, so it costs nothing);
    a side with a null cost (every deployment unpriced) makes the change null, never a guess.
    Groups whose cost and count did not move are left out."""
    days = sorted(str(d) for d in history["day"].unique())
    rows: list[pd.DataFrame] = []
    index = ["grouping", "group"]
    for previous, day in itertools.pairwise(days):
        old = history[history["day"] == previous].set_index(index)
        new = history[history["day"] == day].set_index(index)
        both = old[["deployments", measure]].merge(
            new[["deployments", measure]],
            how="outer",
            left_index=True,
            right_index=True,
            suffixes=("_before", "_after"),
        )
        for side, frame in (("before", old), ("after", new)):
            missing = ~both.index.isin(frame.index)
            both.loc[missing, f"deployments_{side}"] = 0
            both.loc[missing, f"{measure}_{side}"] = 0.0
        before = both[f"{measure}_before"].astype("float64")
        after = both[f"{measure}_after"].astype("float64")
        change = after - before
        moved = (change.abs() > 1e-9) | (before.isna() != after.isna())
        moved |= both["deployments_before"] != both["deployments_after"]
        out = pd.DataFrame(
            {
                "day": day,
                "previous_day": previous,
                "deployments_before": both["deployments_before"].astype("int64"),
                "deployments_after": both["deployments_after"].astype("int64"),
                "before": before,
                "after": after,
                "change": change,
            }
        )[moved.to_numpy()]
        rows.append(out.reset_index())
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in CHANGE_COLUMNS})
    out = pd.concat(rows, ignore_index=True)
    order = np.lexsort((-out["change"].abs().fillna(np.inf), out["grouping"], out["day"]))
    return out.iloc[order][CHANGE_COLUMNS].reset_index(drop=True)
