"""The month in a few figures: what `dims report` prints, `--json` carries and the page opens
with. The requests at min and max scale, the limits with how many deployments they leave out,
the unpriced, and where the money is (the top types, namespaces and teams).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from dims._escape import printable
from dims._reports import _prices as pr
from dims._reports._allocation import cost_by
from dims._reports._capacity import (
    COST_ORDER,
    SHARE,
    capacity_by,
    fleet_totals,
    status_of,
)
from dims._reports._frames import Snapshot

#: How many groups of each kind the headline lists.
TOP = 5
#: The label whose values are the teams, where the fleet has it.
TEAM_LABEL = "team"


def _money(value: object) -> float | None:
    """A figure for JSON: None where it is unknown (never NaN, which JSON lacks)."""
    number = float(value) if value is not None else math.nan  # type: ignore[arg-type]
    return round(number, 2) if math.isfinite(number) else None


def _top(frame: pd.DataFrame, key: str) -> list[dict[str, Any]]:
    return [
        {
            "name": None if pd.isna(row[key]) else str(row[key]),
            "usd_month": _money(row[COST_ORDER]),
            "share": None if pd.isna(row[SHARE]) else round(float(row[SHARE]), 4),
        }
        for row in frame.head(TOP).to_dict(orient="records")
    ]


def has_label(snap: Snapshot, key: str) -> bool:
    return bool((snap.labels["key"] == key).any())


def groups(snap: Snapshot, prices: pr.PriceSheet) -> dict[str, tuple[pd.DataFrame, str]]:
    """The allocations the headline and the page lead with: kind -> (frame, its key)."""
    out = {
        "types": (capacity_by(snap, ["deployment_type"], prices), "deployment_type"),
        "namespaces": (capacity_by(snap, ["k8s_namespace"], prices), "k8s_namespace"),
    }
    if has_label(snap, TEAM_LABEL):
        out["teams"] = (cost_by(snap, f"label:{TEAM_LABEL}", prices), f"label:{TEAM_LABEL}")
    return out


def headline(snap: Snapshot, prices: pr.PriceSheet = pr.DEFAULT_PRICES) -> dict[str, Any]:
    """The month's figures of a snapshot under `prices` (plain JSON-ready values)."""
    totals = fleet_totals(snap, prices)
    reasons = status_of(snap)["unpriced_reason"].value_counts()
    month = {
        f"{basis}s_{scale}_scale": _money(totals[pr.cost_column(basis, scale)])
        for basis in ("request", "limit")
        for scale in ("min", "max")
    }
    month["db_storage"] = _money(totals[pr.STORAGE_COST])
    return {
        "snapshot_date": snap.snapshot_date,
        "deployments": totals["deployments"],
        "prices": {
            "name": prices.name or "defaults",
            "source": prices.source,
            "rates": prices.describe(),
        },
        "usd_month": month,
        "deployments_unpriced": totals["deployments_unpriced"],
        "unpriced_reasons": {str(k): int(v) for k, v in reasons.items()},
        "deployments_unbounded": totals["deployments_unbounded"],
        "deployments_scale_inverted": totals["deployments_scale_inverted"],
        "top": {kind: _top(frame, key) for kind, (frame, key) in groups(snap, prices).items()},
    }


def usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def lines(figures: Mapping[str, Any]) -> list[str]:
    """The headline as a few lines for a terminal."""
    month, unpriced = figures["usd_month"], figures["deployments_unpriced"]
    unbounded = figures["deployments_unbounded"]
    out = [
        f"{figures['deployments']:,} deployments on {figures['snapshot_date']}, "
        f"a month at {figures['prices']['source']}:",
        f"  requests    {usd(month['requests_min_scale'])} at min scale, "
        f"{usd(month['requests_max_scale'])} at max scale" + _left_out(unpriced, 0),
        f"  limits      {usd(month['limits_min_scale'])} at min scale, "
        f"{usd(month['limits_max_scale'])} at max scale" + _left_out(unpriced, unbounded),
        f"  DB storage  {usd(month['db_storage'])} of each figure above",
    ]
    if unpriced:
        reasons = ", ".join(f"{k} {v:,}" for k, v in figures["unpriced_reasons"].items())
        out.append(f"  unpriced    {unpriced:,} deployments in no figure: {reasons}")
    for kind, rows in figures["top"].items():
        listed = "; ".join(
            f"{printable(row['name'] or '(none)')} {usd(row['usd_month'])} "
            f"({100 * (row['share'] or 0):.1f} %)"
            for row in rows[:3]
        )
        out.append(f"  top {kind:<10} {listed}")
    return out


def _left_out(unpriced: int, unbounded: int) -> str:
    """What a total leaves out, said beside it."""
    parts = [f"{unpriced:,} unpriced"] if unpriced else []
    if unbounded:
        parts.append(f"{unbounded:,} with unbounded limits")
    return f" (not included: {' and '.join(parts)})" if parts else ""


#: Its name at the package `dims._reports` (imported from here on first use, dims._lazy).
headline_lines = lines
