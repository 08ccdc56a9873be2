"""What moved the month's cost between two snapshots, in dollars, split by cause.

Each deployment's change of each cost total goes to exactly one cause, so the causes add up
to the change of the fleet's totals:

- `added`, `removed`: a deployment in one snapshot only (its whole cost);
- `unpriced`: a deployment whose cost is known on one side only on that basis (it became
  unpriced or priced, or its limits unbounded or bounded): it left or entered the total;
- `image_version`: a deployment whose image version moved (its whole change: a release
  often brings its own sizes), per from → to;
- `scale`: the replicas changed, priced at the old per-replica cost of each component;
- `requests`: the rest: per-replica requests (or limits, on the limits basis), DB storage,
  sidecars, or a type with other rates.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from dims._reports import _prices as pr
from dims._reports._capacity import replica_costs_of, totals_of
from dims._reports._frames import Snapshot, among
from dims._reports._measures import BASES, SCALES

CAUSES = ("added", "removed", "scale", "requests", "image_version", "unpriced")
#: A change smaller than this (dollars a month) is rounding, not a cause.
_CENT_FRACTION = 1e-6
_ROW = ["deployment_id", "name", "deployment_type", "cause", "detail", *pr.COST_TOTALS]


def _state(frame: pd.DataFrame) -> pd.Series:
    """How a deployment is priced, for a detail: priced, limits unbounded, unpriced (why)."""
    state = pd.Series("priced", index=frame.index, dtype="object")
    state[frame["limits_unbounded"].to_numpy(dtype=bool)] = "limits unbounded"
    reason = frame["unpriced_reason"]
    unpriced = reason.notna().to_numpy()
    state[unpriced] = "unpriced (" + reason[unpriced].astype("object") + ")"
    return state


def _one_side(frame: pd.DataFrame, cause: str, sign: float) -> pd.DataFrame:
    """Added or removed deployments: their whole cost (unknown counts nothing)."""
    out = frame[["deployment_id", "name", "deployment_type"]].copy()
    out["cause"] = cause
    out["detail"] = _state(frame).to_numpy()
    for column in pr.COST_TOTALS:
        out[column] = sign * frame[column].fillna(0.0).to_numpy()
    return out


def _scale_effect(old: Snapshot, new: Snapshot, prices: pr.PriceSheet) -> pd.DataFrame:
    """Per deployment id, per cost total: the change of replicas of each component present
    on both sides, priced at its old cost per replica (narrow columns, never the wide
    `component_capacity` frames of both days)."""
    keys = ["deployment_id", "component"]
    before = replica_costs_of(old, prices)
    after = replica_costs_of(new, prices)[[*keys, "replicas_min", "replicas_max"]]
    both = before.merge(after, on=keys, suffixes=("_old", "_new"))
    del before, after
    effect = pd.DataFrame({"deployment_id": both["deployment_id"]})
    for basis in BASES:
        for scale in SCALES:
            moved = (
                both[f"replicas_{scale}_new"].to_numpy() - both[f"replicas_{scale}_old"].to_numpy()
            )
            effect[pr.cost_column(basis, scale)] = moved * both[f"per_replica_{basis}"].to_numpy()
    return effect.groupby("deployment_id", sort=False).sum()


def _split(both: pd.DataFrame, scale: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The changes of deployments on both sides, per cause (one column per cost total)."""
    moved = both["image_version_old"].fillna("\0") != both["image_version_new"].fillna("\0")
    effect = scale.reindex(both["deployment_id"].to_numpy()).fillna(0.0).set_axis(both.index)
    parts: dict[str, dict[str, np.ndarray]] = {
        c: {} for c in ("scale", "requests", "image_version", "unpriced")
    }
    for column in pr.COST_TOTALS:
        old, new = both[f"{column}_old"], both[f"{column}_new"]
        delta = (new.fillna(0.0) - old.fillna(0.0)).to_numpy()
        known = (old.notna() & new.notna()).to_numpy()
        plain = known & ~moved.to_numpy()
        parts["unpriced"][column] = np.where(known, 0.0, delta)
        parts["image_version"][column] = np.where(known & moved.to_numpy(), delta, 0.0)
        parts["scale"][column] = np.where(plain, effect[column].to_numpy(), 0.0)
        parts["requests"][column] = np.where(plain, delta - parts["scale"][column], 0.0)
    return {cause: pd.DataFrame(columns, index=both.index) for cause, columns in parts.items()}


def _rows(both: pd.DataFrame, cause: str, deltas: pd.DataFrame) -> pd.DataFrame:
    """The deployments with a change of this cause, as rows of `cost_changes`."""
    changed = (deltas.abs() > _CENT_FRACTION).any(axis=1).to_numpy()
    out = both.loc[changed, ["deployment_id", "name_new", "deployment_type_new"]]
    out = out.rename(columns={"name_new": "name", "deployment_type_new": "deployment_type"})
    out["cause"] = cause
    if cause == "image_version":
        detail = (
            both["image_version_old"].fillna("-").astype("object")
            + " → "
            + both["image_version_new"].fillna("-").astype("object")
        )
    elif cause == "unpriced":
        detail = (
            _state(both.filter(like="_old").rename(columns=lambda c: c[:-4]))
            + " → "
            + _state(both.filter(like="_new").rename(columns=lambda c: c[:-4]))
        )
    else:
        detail = pd.Series("", index=both.index)
    out["detail"] = detail[changed].to_numpy()
    return pd.concat([out.reset_index(drop=True), deltas[changed].reset_index(drop=True)], axis=1)


def cost_changes(old: Snapshot, new: Snapshot, prices: pr.PriceSheet) -> pd.DataFrame:
    """One row per deployment and cause of its change of the month's cost (`CAUSES`), with
    the change of each cost total; the rows add up to the change of the fleet's totals."""
    columns = ["deployment_id", "name", "deployment_type", "image_version", *pr.COST_TOTALS,
               "unpriced_reason", "limits_unbounded"]  # fmt: skip
    before = totals_of(old, prices)[columns].drop_duplicates("deployment_id")
    after = totals_of(new, prices)[columns].drop_duplicates("deployment_id")
    added = after[~among(after["deployment_id"], before["deployment_id"])]
    removed = before[~among(before["deployment_id"], after["deployment_id"])]
    both = before.merge(after, on="deployment_id", suffixes=("_old", "_new"))
    parts = [_one_side(added, "added", 1.0), _one_side(removed, "removed", -1.0)]
    for cause, deltas in _split(both, _scale_effect(old, new, prices)).items():
        parts.append(_rows(both, cause, deltas))
    out = pd.concat([p for p in parts if len(p)] or [pd.DataFrame(columns=_ROW)], ignore_index=True)
    for column in ("deployment_id", "name", "deployment_type", "cause", "detail"):
        out[column] = out[column].astype("str")
    return out[_ROW]


def cost_totals(before: Mapping[str, float], after: Mapping[str, float]) -> pd.DataFrame:
    """The month's cost totals on each side (what each leaves out beside them)."""
    measures = [*pr.COST_TOTALS, pr.STORAGE_COST]
    frame = pd.DataFrame(
        {
            "measure": measures,
            "from_value": [before[m] for m in measures],
            "to_value": [after[m] for m in measures],
        }
    )
    frame["delta"] = frame["to_value"].fillna(0.0) - frame["from_value"].fillna(0.0)
    for name in ("deployments_unpriced", "deployments_unbounded"):
        frame[f"{name}_from"] = before[name]
        frame[f"{name}_to"] = after[name]
    return frame


def movers(changes: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """The deployments whose month's cost (requests at max scale) changed most, either way:
    deployment_id, name, deployment_type, the change (every cause summed) and its causes."""
    column = pr.cost_column("request", "max")
    shown = ["deployment_id", "name", "deployment_type", column, "causes"]
    if changes.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in shown})
    grouped = changes.groupby(["deployment_id", "name", "deployment_type"], sort=False)
    out = grouped[column].sum().to_frame()
    out["causes"] = grouped["cause"].agg(lambda causes: ", ".join(dict.fromkeys(causes)))
    out = out.reset_index()
    out = out[out[column].abs() > 0.005]
    order = out[column].abs().sort_values(ascending=False, kind="stable").index
    return out.loc[order].head(top)[shown].reset_index(drop=True)
