"""Across snapshots: version adoption over time and what changed between two dates.

Everything here reads the dataset alone (no service), so a history survives the service and
can be rebuilt from archived snapshots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pandas as pd

from dims import _spec as spec
from dims._arrowpool import reading_pool
from dims._escape import printable
from dims._reports import _capacity as capacity
from dims._reports import _prices as pr
from dims._reports import _versions as versions
from dims._reports._costchange import CAUSES, cost_changes, cost_totals
from dims._reports._frames import (
    DatasetError,
    Snapshot,
    among,
    history_counts,
    load_snapshot,
    read_written_table,
    snapshot_days,
    text_column,
)
from dims._reports._measures import DB_COLUMNS, IDENTITY, TOTALS
from dims._tables import UNREADABLE_VALUES_COLUMN

_VERSION_COLUMNS = ["id", "name", "deployment_type", "image_version"]
#: per-deployment figures compared by `diff`
DIFF_MEASURES = [
    "cpu_request_cores_max_scale",
    "cpu_limit_cores_max_scale",
    "memory_request_gib_max_scale",
    "memory_limit_gib_max_scale",
    "db_storage_gib",
]
_TOLERANCE = 1e-9
#: The columns of the deployments table `diff` reads: who each deployment is, its version,
#: every figure a component is sized by, and the figures sent unreadable. The rest (URLs,
#: commands, unknown fields) is most of the table's memory and no part of a comparison.
DIFF_COLUMNS = [
    "id",
    *(c for c in IDENTITY if c != "deployment_id"),
    "image_version",
    *dict.fromkeys(
        column for fields in spec.component_measures().values() for column in fields.values()
    ),
    UNREADABLE_VALUES_COLUMN,
]


def _versions_at(out_dir: str | Path, date: str) -> pd.DataFrame:
    frame = read_written_table(out_dir, "deployments", date, columns=_VERSION_COLUMNS)
    if frame is None:
        raise DatasetError(f"no deployments table for snapshot {date} in {out_dir}")
    frame = frame[[*_VERSION_COLUMNS, "snapshot_date"]].astype("object")
    return frame.where(frame.notna(), None).rename(columns={"id": "deployment_id"})


def versions_over_time(out_dir: str | Path) -> pd.DataFrame:
    """Deployments per image_version per snapshot date (long form, version order per date).

    Counted where the files are (only `image_version` is read, day by day), so three years
    of daily snapshots cost a scan of one column, not a frame of every deployment ever.
    """
    counts = history_counts(out_dir, "deployments", ["image_version"])
    counts = counts.rename(columns={"rows": "deployments"})
    version = counts["image_version"].astype("object")
    counts["image_version"] = version.where(version.notna(), None)
    counts["deployments"] = counts["deployments"].astype("int64")
    counts["share"] = counts["deployments"] / counts.groupby("snapshot_date")[
        "deployments"
    ].transform("sum")
    counts["version_order"] = versions.version_rank(counts["image_version"].astype("object"))
    counts = counts.sort_values(["snapshot_date", "version_order"]).drop(columns="version_order")
    return counts.reset_index(drop=True)


def _pick_dates(
    out_dir: str | Path, from_date: str | date | None, to_date: str | date | None
) -> tuple[str, str]:
    dates = snapshot_days(out_dir)
    for given in (from_date, to_date):
        if given is not None and str(given) not in dates:
            listed = ", ".join(dates) or "none"
            raise DatasetError(f"no snapshot dated {given} in {out_dir}; available: {listed}")
    to_date = str(to_date) if to_date is not None else (dates[-1] if dates else None)
    if from_date is None:
        earlier = [d for d in dates if to_date is not None and d < to_date]
        if not earlier:
            raise DatasetError(
                f"diff needs two snapshots in {out_dir}; found {len(dates)}"
                + (f" ({', '.join(dates)})" if dates else "")
                + ": export again on another day, or pass --from/--to (with the demo: `dims "
                "demo --roll-out VERSION` writes the day before a release and the day after)"
            )
        from_date = earlier[-1]
    assert to_date is not None
    return str(from_date), to_date


def version_changes(
    out_dir: str | Path, from_date: str | date | None = None, to_date: str | date | None = None
) -> pd.DataFrame:
    """Deployments present in both snapshots whose image_version changed (upgrade, downgrade,
    `changed` when either side does not parse, `unknown` when one side has none). Defaults:
    the two latest snapshots."""
    from_date, to_date = _pick_dates(out_dir, from_date, to_date)
    old = _versions_at(out_dir, from_date)
    new = _versions_at(out_dir, to_date)
    return _version_changes(old, new)


def _version_changes(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    both = new.merge(
        old[["deployment_id", "image_version"]].rename(columns={"image_version": "from_version"}),
        on="deployment_id",
    ).rename(columns={"image_version": "to_version"})
    both["change"] = [
        versions.compare(a, b)
        for a, b in zip(both["from_version"], both["to_version"], strict=True)
    ]
    changed = both[both["change"] != "same"]
    columns = ["deployment_id", "name", "deployment_type", "from_version", "to_version", "change"]
    return changed[columns].sort_values(["change", "name"]).reset_index(drop=True)


@dataclass
class DiffResult:
    """What changed between two snapshots; every part is a DataFrame for notebooks."""

    from_date: str
    to_date: str
    #: deployments only in `to_date`, with their image_version and size at max scale
    added: pd.DataFrame
    #: deployments only in `from_date`
    removed: pd.DataFrame
    #: deployments in both whose image_version changed (`change`: upgrade, downgrade, changed
    #: (unparseable), unknown (no version on one side))
    version_changes: pd.DataFrame
    #: deployments in both whose capacity changed: `<measure>_from`, `_to`, `_delta`
    capacity_changes: pd.DataFrame
    #: fleet totals: measure, from, to, delta
    capacity_totals: pd.DataFrame
    #: What the figures do not say by themselves (a workspace in one snapshot only).
    notes: list[str] = field(default_factory=list)
    #: the month's cost change, one row per deployment and cause (`CAUSES`): deployment_id,
    #: name, deployment_type, cause, detail and the change of each cost total
    cost_changes: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the month's cost totals: measure, from, to, delta, and the deployments unpriced and
    #: unbounded on each side
    cost_totals: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __repr__(self) -> str:
        """A summary (dates and counts); the frames are attributes, shown when asked for."""
        listed = ", ".join(f"{k}={v:,}" for k, v in self.counts().items())
        return f"DiffResult({self.from_date} → {self.to_date}: {listed})"

    def counts(self) -> dict[str, int]:
        change = self.version_changes["change"]
        return {
            "added": len(self.added),
            "removed": len(self.removed),
            "upgrades": int((change == "upgrade").sum()),
            "downgrades": int((change == "downgrade").sum()),
            "other_version_changes": int((change == "changed").sum()),
            "unknown_version_changes": int((change == "unknown").sum()),
            "capacity_changes": len(self.capacity_changes),
        }

    def cost_causes(self) -> pd.DataFrame:
        """The cost change by cause (`CAUSES`; image-version moves per from → to): how many
        deployments are behind each, and the change of each cost total. The rows add up to
        the change of the fleet's totals."""
        changes = self.cost_changes
        columns = ["cause", "detail", "deployments", *pr.COST_TOTALS]
        if changes.empty:
            return pd.DataFrame({c: pd.Series(dtype="float64") for c in columns})
        keyed = changes.assign(
            detail=changes["detail"].where(changes["cause"] == "image_version", "")
        )
        grouped = keyed.groupby(["cause", "detail"], sort=False)
        out = grouped[pr.COST_TOTALS].sum()
        out.insert(0, "deployments", grouped["deployment_id"].nunique())
        out = out.reset_index()
        out["order"] = out["cause"].map({c: n for n, c in enumerate(CAUSES)})
        out = out.sort_values(["order", pr.cost_column("request", "max")], ascending=[True, False])
        return out[columns].reset_index(drop=True)

    def summary(self) -> str:
        """A few lines for a terminal: counts, the month's cost by cause, then the fleet
        totals that moved."""
        c = self.counts()
        lines = [
            f"dims diff {self.from_date} → {self.to_date}",
            f"  deployments: +{c['added']} added, -{c['removed']} removed",
            f"  image versions: {c['upgrades']} upgraded, {c['downgrades']} downgraded"
            + (
                f", {c['other_version_changes']} changed (unparseable)"
                if c["other_version_changes"]
                else ""
            )
            + (
                f", {c['unknown_version_changes']} with no version on one side"
                if c["unknown_version_changes"]
                else ""
            ),
            f"  capacity changed on {c['capacity_changes']} deployments",
            *_cost_lines(self),
            "  fleet totals (from → to, delta):",
        ]
        totals = self.capacity_totals
        for measure, before, after, delta in zip(
            totals["measure"],
            totals["from_value"].astype(float),
            totals["to_value"].astype(float),
            totals["delta"].astype(float),
            strict=True,
        ):
            lines.append(f"    {measure:<34} {_moved(before, after, delta)}")
        for kind in ("upgrade", "downgrade"):
            frame = self.version_changes[self.version_changes["change"] == kind]
            if len(frame):
                moves = frame.groupby(["from_version", "to_version"], dropna=False).size()
                top = moves.sort_values(ascending=False).head(5)
                rows = top.reset_index().itertuples(index=False, name=None)
                listed = "; ".join(f"{printable(a)} → {printable(b)} ×{n}" for a, b, n in rows)
                lines.append(f"  most common {kind}s: {listed}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _moved(before: float, after: float, delta: float) -> str:
    """`from → to  (delta)` of a fleet total: counts (deployments, connections) as whole
    numbers, measures with decimals, `unknown` for a total nothing is known of (never NaN)."""
    known = [v for v in (before, after) if not math.isnan(v)]
    size = ",.0f" if all(v.is_integer() for v in known) else ",.2f"
    shown = [f"{v:>12{size}}" if not math.isnan(v) else f"{'unknown':>12}" for v in (before, after)]
    change = "n/a" if math.isnan(delta) else f"{delta:+{size}}"
    return f"{shown[0]} → {shown[1]}  ({change})"


def diff(
    out_dir: str | Path,
    from_date: str | date | None = None,
    to_date: str | date | None = None,
    tenant_ids: Sequence[str] | None = None,
    prices: pr.PriceSheet = pr.DEFAULT_PRICES,
) -> DiffResult:
    """Compare two snapshots of the dataset (defaults: the two latest), of the whole
    organisation or of the workspaces in `tenant_ids`; the month's cost change under
    `prices`, split by cause (`DiffResult.cost_causes`)."""
    from_date, to_date = _pick_dates(out_dir, from_date, to_date)
    with reading_pool():
        old_snap = _totalled(load_snapshot(out_dir, from_date, tenant_ids, DIFF_COLUMNS), prices)
        new_snap = _totalled(load_snapshot(out_dir, to_date, tenant_ids, DIFF_COLUMNS), prices)
        return compare(old_snap, new_snap, prices)


#: What `compare` reads again of a snapshot once its totals are made (`_totalled`).
_KEPT = ("deployment_totals", "fleet totals", "identity", "pricing_status", "component_rows")


def _totalled(snap: Snapshot, prices: pr.PriceSheet) -> Snapshot:
    """`snap` with its totals made and the frames they were made of let go: held for both
    days at once they are most of a comparison's memory (the other day is read after)."""
    capacity.totals_of(snap, prices)
    capacity.fleet_totals(snap, prices)
    for name in [n for n in snap.memos if not n.startswith(_KEPT)]:
        del snap.memos[name]
    return snap


def compare(
    old_snap: Snapshot, new_snap: Snapshot, prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> DiffResult:
    """`diff` of two loaded snapshots (the older first)."""
    old = capacity.totals_of(old_snap, prices)
    new = capacity.totals_of(new_snap, prices)
    shown = ["deployment_id", "name", "deployment_type", "image_version", *DIFF_MEASURES[:4]]
    old_ids, new_ids = set(old["deployment_id"]), set(new["deployment_id"])
    added = new[~among(new["deployment_id"], old_ids)][shown].sort_values("name")
    removed = old[~among(old["deployment_id"], new_ids)][shown].sort_values("name")

    version_cols = ["deployment_id", "name", "deployment_type", "image_version"]
    changes = _version_changes(old[version_cols], new[version_cols])

    both = new[["deployment_id", "name", "deployment_type", *DIFF_MEASURES]].merge(
        old[["deployment_id", *DIFF_MEASURES]], on="deployment_id", suffixes=("_to", "_from")
    )
    out = both[["deployment_id", "name", "deployment_type"]].copy()
    moved = pd.Series(False, index=both.index)
    for m in DIFF_MEASURES:
        before, after = both[f"{m}_from"].fillna(0.0), both[f"{m}_to"].fillna(0.0)
        out[f"{m}_from"], out[f"{m}_to"], out[f"{m}_delta"] = before, after, after - before
        moved |= (after - before).abs() > _TOLERANCE
    capacity_changes = out[moved].sort_values(
        "cpu_request_cores_max_scale_delta", key=lambda s: -s.abs()
    )

    totals_old = capacity.fleet_totals(old_snap, prices)
    totals_new = capacity.fleet_totals(new_snap, prices)
    measures = ["deployments", *TOTALS, *DB_COLUMNS]
    totals = pd.DataFrame(
        {
            "measure": measures,
            "from_value": [totals_old[m] for m in measures],
            "to_value": [totals_new[m] for m in measures],
        }
    )
    totals["delta"] = totals["to_value"] - totals["from_value"]
    return DiffResult(
        from_date=old_snap.snapshot_date,
        to_date=new_snap.snapshot_date,
        added=added.reset_index(drop=True),
        removed=removed.reset_index(drop=True),
        version_changes=changes,
        capacity_changes=capacity_changes.reset_index(drop=True),
        capacity_totals=totals,
        notes=_workspace_notes(
            old_snap, new_snap, added["deployment_id"], removed["deployment_id"]
        ),
        cost_changes=cost_changes(old_snap, new_snap, prices),
        cost_totals=cost_totals(totals_old, totals_new),
    )


#: How the summary names each cause.
CAUSE_NAMES = {
    "added": "deployments added",
    "removed": "deployments removed",
    "scale": "scale changes",
    "requests": "request changes",
    "image_version": "image-version moves",
    "unpriced": "priced or bounded no more, or again",
}


def _usd(value: float) -> str:
    return f"{'+' if value >= 0 else '-'}${abs(value):,.2f}"


def _dollars(value: float) -> str:
    return "unknown" if math.isnan(value) else f"${value:,.2f}"


def _cost_lines(result: DiffResult) -> list[str]:
    """The month's cost change, requests at max scale, by cause (with the deployments
    behind each), for the summary."""
    totals = result.cost_totals
    column = pr.cost_column("request", "max")
    if totals.empty or column not in set(totals["measure"]):
        return []
    row = totals[totals["measure"] == column]
    before, after, delta = (float(row[k].iloc[0]) for k in ("from_value", "to_value", "delta"))
    causes = result.cost_causes()
    lines = [
        f"  monthly cost, requests at max scale: {_dollars(before)} → {_dollars(after)} "
        f"({'n/a' if math.isnan(before + after) else _usd(delta)})"
        + (", by cause:" if len(causes) else "")
    ]
    for cause in CAUSES:
        mine = causes[causes["cause"] == cause]
        if mine.empty:
            continue
        count = int(mine["deployments"].sum())
        lines.append(
            f"    {CAUSE_NAMES[cause] + f' ({count:,})':<42} {_usd(float(mine[column].sum())):>16}"
        )
        if cause == "image_version":
            for move in mine.head(5).itertuples(index=False):
                cost = _usd(getattr(move, column))
                lines.append(f"      {printable(move.detail)} ×{move.deployments:,}: {cost}")
    return lines


#: The columns of `changed_deployments`, in order.
CHANGE_COLUMNS = [
    "deployment_id",
    "name",
    "deployment_type",
    "change",
    "from_version",
    "to_version",
]


def changed_deployments(result: DiffResult) -> pd.DataFrame:
    """One row per deployment that changed between the two snapshots of a diff, the list
    `dims diff` prints (and writes with `--changes-out`): columns `CHANGE_COLUMNS`.

    `change` is `added`, `removed`, a version change (`upgrade`, `downgrade`, or `changed`
    when either version does not parse) or `capacity`. A deployment whose version and
    capacity both changed is listed once, as its version change, so the rows add up to the
    deployments that moved. `from_version` and `to_version` are its image versions before
    and after (missing where it had none: the added before, the removed after, and both for
    a capacity change). Every column is text (`str`), as in every report frame.
    """
    added = result.added.assign(
        change="added", from_version=None, to_version=result.added["image_version"]
    )
    removed = result.removed.assign(
        change="removed", from_version=result.removed["image_version"], to_version=None
    )
    versions = result.version_changes
    moved = set(versions["deployment_id"])
    capacity = result.capacity_changes[~among(result.capacity_changes["deployment_id"], moved)]
    capacity = capacity.assign(change="capacity", from_version=None, to_version=None)
    parts = [part.reindex(columns=CHANGE_COLUMNS) for part in (added, removed, versions, capacity)]
    changes = pd.concat([p for p in parts if len(p)] or [parts[0]], ignore_index=True)
    return changes.astype("str")


def _deployments(count: int) -> str:
    return f"{count:,} deployment{'' if count == 1 else 's'}"


def _workspace_notes(
    old: Snapshot, new: Snapshot, added: pd.Series, removed: pd.Series
) -> list[str]:
    """A workspace in one snapshot only whose deployments count as added (or removed): the
    cause may be an export of fewer workspaces rather than the fleet changing. A workspace
    is named with how many of its deployments do, and only when some do: a deployment in
    both snapshots (its tenant_id missing on one side, say) is no addition."""
    notes = []
    before = set(text_column(old.deployments, "tenant_id").dropna())
    after = set(text_column(new.deployments, "tenant_id").dropna())
    for only, there, moved, how in (
        (before - after, old, removed, "removed"),
        (after - before, new, added, "added"),
    ):
        tenants = text_column(there.deployments, "tenant_id")
        ids = text_column(there.deployments, "id")
        counted = tenants[among(ids, moved)].value_counts()
        named = [
            f"{printable(t)} ({_deployments(int(counted[t]))})"
            for t in sorted(only)
            if t in counted
        ]
        if named:
            when = "from" if how == "removed" else "to"
            notes.append(
                f"workspace(s) only in the {when} snapshot ({there.snapshot_date}): "
                f"{', '.join(named)}; those deployments count as {how}"
            )
    return notes
