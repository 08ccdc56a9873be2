"""A group's figure as the report has it, and the deployments behind it.

Figures come from `reports.cost_by` (a group) and `reports.fleet_totals` (the fleet), so a
budget is held to the very dollars `dims report --by` prints; the deployments of a group are
those `reports.allocated` puts in it, so the two never disagree on who is in a group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from dims._policy._rules import Group, Rules
from dims._reports import (
    PriceSheet,
    Snapshot,
    allocated,
    cost_by,
    cost_by_deployment,
    fleet_totals,
)


@dataclass(frozen=True)
class Figure:
    """A group's cost on the rules' basis, and what it leaves out."""

    #: dollars a month of what is known; None where nothing in the group is known
    value: float | None
    unpriced: int
    #: priced deployments whose limits are unbounded (left out of the limits basis only)
    unbounded: int
    #: the group's deployments (`cost_by_deployment` rows), most expensive first
    members: pd.DataFrame
    #: those of `members` whose cost the figure leaves out
    left_out: pd.DataFrame

    def left_out_text(self, limits: bool) -> str:
        """`4 deployments unpriced and 1 deployment with unbounded limits` (`left_out`)."""
        parts = [f"{_count(self.unpriced)} unpriced"] if self.unpriced else []
        if limits and self.unbounded:
            parts.append(f"{_count(self.unbounded)} with unbounded limits")
        return " and ".join(parts)


def _count(deployments: int) -> str:
    return f"{deployments:,} deployment{'s' * (deployments != 1)}"


def known(value: object) -> float | None:
    """A figure as a float, None where it is unknown (NaN)."""
    number = float(value) if value is not None else math.nan  # type: ignore[arg-type]
    return number if math.isfinite(number) else None


def costs(snap: Snapshot, prices: PriceSheet) -> pd.DataFrame:
    """`cost_by_deployment`, computed once per snapshot and sheet for every rule."""
    return snap.memo(f"policy costs {prices!r}", lambda s: cost_by_deployment(s, prices))


def members_of(snap: Snapshot, group: Group, prices: PriceSheet) -> pd.DataFrame:
    """The group's deployments as `cost_by_deployment` rows, most expensive first."""
    every = costs(snap, prices)
    if group.is_fleet:
        return every
    where = snap.memo(f"policy allocated {group.keys}", lambda s: allocated(s, list(group.keys)))
    chosen = pd.Series(True, index=where.index)
    for key, value in zip(group.keys, group.values, strict=True):
        chosen &= where[key] == value
    return every[every["deployment_id"].isin(where.loc[chosen, "deployment_id"])]


def figure_of(snap: Snapshot, group: Group, rules: Rules, prices: PriceSheet) -> Figure | None:
    """The group's figure, or None when no deployment is in it."""
    members = members_of(snap, group, prices)
    if members.empty:
        return None
    if group.is_fleet:
        row: dict[str, object] = dict(fleet_totals(snap, prices))
    else:
        frame = snap.memo(
            f"policy cost_by {group.keys} {prices!r}",
            lambda s: cost_by(s, list(group.keys), prices),
        )
        chosen = pd.Series(True, index=frame.index)
        for key, value in zip(group.keys, group.values, strict=True):
            chosen &= frame[key] == value
        row = {str(k): v for k, v in frame[chosen].iloc[0].items()}
    left = members["unpriced_reason"].notna()
    if rules.basis == "limits":
        left |= members["limits_unbounded"].astype(bool)
    return Figure(
        value=known(row[rules.cost_column]),
        unpriced=int(row["deployments_unpriced"]),  # type: ignore[call-overload]
        unbounded=int(row["deployments_unbounded"]),  # type: ignore[call-overload]
        members=members,
        left_out=members[left],
    )
