"""Image versions: what the fleet runs, how far behind it is, and which rollouts are stuck.

"Versions behind" counts the distinct versions present in the same snapshot that are newer
(the dataset knows what the fleet runs, not the vendor's release list). Versions that do not
parse (`latest`, digests) are listed after the parseable ones and are never "behind".
"""

from __future__ import annotations

from typing import TypedDict

import pandas as pd

from dims._reports import _versions as versions
from dims._reports._frames import Snapshot, as_snapshot, text_column, tidy_text


def _image_versions(snap: Snapshot) -> pd.Series:
    return text_column(snap.deployments, "image_version")


def image_version_summary(source: Snapshot | str) -> pd.DataFrame:
    """Deployments per image_version, oldest to newest, unparseable versions last.

    The content of `image_version_summary.parquet`: image_version, deployments,
    versions_behind (0 for the newest, null when it does not parse), plus share of the fleet,
    version_order (0 = oldest), is_newest and parseable.
    """
    snap = as_snapshot(source)
    values = _image_versions(snap)
    counts = values.value_counts(dropna=False)
    out = pd.DataFrame({"image_version": counts.index.astype("object"), "deployments": counts})
    out = out.reset_index(drop=True)
    out["image_version"] = out["image_version"].where(out["image_version"].notna(), None)
    out["version_order"] = versions.version_rank(out["image_version"])
    out = out.sort_values(["version_order", "image_version"], na_position="last")
    behind = versions.versions_behind(out["image_version"])
    out["versions_behind"] = pd.array([behind.get(v) for v in out["image_version"]], dtype="Int64")
    out["parseable"] = out["image_version"].map(lambda v: versions.parse_version(v) is not None)
    out["is_newest"] = (out["versions_behind"] == 0).fillna(False).astype(bool)
    total = int(out["deployments"].sum())
    out["share"] = out["deployments"] / total if total else 0.0
    out["deployments"] = out["deployments"].astype("int64")
    columns = ["image_version", "deployments", "versions_behind", "share", "version_order"]
    out["image_version"] = out["image_version"].astype("str")
    return out[[*columns, "is_newest", "parseable"]].reset_index(drop=True)


def deployments_behind(source: Snapshot | str) -> pd.DataFrame:
    """Each deployment with how many versions it is behind the newest, furthest behind first.

    Deployments whose image_version does not parse have a null `versions_behind` and come
    last: they need a look, not an upgrade count.
    """
    snap = as_snapshot(source)
    summary = image_version_summary(snap)[["image_version", "versions_behind"]]
    frame = pd.DataFrame(
        {
            "deployment_id": text_column(snap.deployments, "id"),
            **{c: text_column(snap.deployments, c) for c in ("name", "deployment_type")},
            "image_version": _image_versions(snap),
        }
    )
    out = frame.merge(summary, on="image_version", how="left")
    out = out.sort_values(["versions_behind", "name"], ascending=[False, True], na_position="last")
    return out.reset_index(drop=True)


def newest_version(source: Snapshot | str) -> str | None:
    """The newest parseable image version in the snapshot."""
    return versions.newest(_image_versions(as_snapshot(source)).dropna().unique())


def versions_by_type(source: Snapshot | str) -> pd.DataFrame:
    """Deployments per (deployment_type, image_version), in version order within each type.

    `versions_behind` is relative to the newest version of the whole fleet, so types compare.
    """
    snap = as_snapshot(source)
    frame = pd.DataFrame(
        {
            "deployment_type": snap.deployments["deployment_type"].astype("object"),
            "image_version": _image_versions(snap),
        }
    )
    counts = frame.value_counts(dropna=False).rename("deployments").reset_index()
    behind = versions.versions_behind(frame["image_version"].dropna().unique())
    counts["versions_behind"] = pd.array(
        [behind.get(v) for v in counts["image_version"]], dtype="Int64"
    )
    counts["share_of_type"] = counts["deployments"] / counts.groupby(
        "deployment_type", dropna=False
    )["deployments"].transform("sum")
    counts["version_order"] = versions.version_rank(counts["image_version"])
    counts = counts.sort_values(["deployment_type", "version_order"], na_position="last")
    return tidy_text(counts.drop(columns="version_order").reset_index(drop=True))


def _newest_frame(snap: Snapshot) -> tuple[pd.DataFrame, str | None]:
    """Per deployment: its type, versions behind the fleet's newest, and whether on it."""
    values = _image_versions(snap)
    present = values.dropna().unique()
    newest = versions.newest(present)
    behind = versions.versions_behind(present)
    frame = pd.DataFrame(
        {
            "deployment_type": snap.deployments["deployment_type"].astype("object"),
            "behind": pd.Series(values.astype("object").map(behind)).astype("Int64"),
        }
    )
    frame["on_newest"] = (frame["behind"] == 0).fillna(False).astype(bool)
    frame["unparseable"] = frame["behind"].isna()
    return frame, newest


class NewestShare(TypedDict):
    """One row of `newest_share_by_type` (without its type): how close a group is to newest."""

    deployments: int
    newest_version: str | None
    on_newest: int
    share_on_newest: float
    mean_versions_behind: float
    max_versions_behind: int | None
    unparseable_versions: int


def _summarize(group: pd.DataFrame, newest: str | None) -> NewestShare:
    """One row of `newest_share_by_type` over the deployments in `group`."""
    deployments = len(group)
    on_newest = int(group["on_newest"].sum())
    behind = group["behind"]
    return {
        "deployments": deployments,
        "newest_version": newest,
        "on_newest": on_newest,
        "share_on_newest": on_newest / deployments if deployments else float("nan"),
        "mean_versions_behind": float(behind.astype("Float64").mean())
        if behind.notna().any()
        else float("nan"),
        "max_versions_behind": int(behind.max()) if behind.notna().any() else None,
        "unparseable_versions": int(group["unparseable"].sum()),
    }


def newest_share_by_type(source: Snapshot | str) -> pd.DataFrame:
    """Per deployment_type: the fleet's newest version and the share already on it, one row
    per type (the whole fleet's figures are `newest_share_total`).

    `mean_versions_behind` averages over deployments whose version parses.
    """
    frame, newest = _newest_frame(as_snapshot(source))
    rows = [
        {"deployment_type": kind, **_summarize(group, newest)}
        for kind, group in frame.groupby("deployment_type", dropna=False)
    ]
    columns = ["deployment_type", *_summarize(frame.iloc[:0], newest)]
    out = pd.DataFrame(rows, columns=columns)
    out["deployment_type"] = out["deployment_type"].astype("str")
    out["newest_version"] = out["newest_version"].astype("str")
    out["deployments"] = out["deployments"].astype("int64")
    out["on_newest"] = out["on_newest"].astype("int64")
    out["unparseable_versions"] = out["unparseable_versions"].astype("int64")
    out["max_versions_behind"] = out["max_versions_behind"].astype("Int64")
    out["share_on_newest"] = out["share_on_newest"].astype("float64")
    out["mean_versions_behind"] = out["mean_versions_behind"].astype("float64")
    return out


def newest_share_total(source: Snapshot | str) -> NewestShare:
    """The whole fleet's row of `newest_share_by_type`: newest version, share on it, …"""
    frame, newest = _newest_frame(as_snapshot(source))
    return _summarize(frame, newest)


def pending_rollouts(source: Snapshot | str) -> pd.DataFrame:
    """Deployments whose active revision is not their latest revision, oldest update first.

    A rollout that is pending or failed; `days_since_update` is measured from the snapshot's
    `snapshot_at`, so a report rendered later still says how it looked when exported.
    """
    snap = as_snapshot(source)
    d = snap.deployments
    active = text_column(d, "active_revision_id")
    latest = text_column(d, "latest_revision_id")
    differs = (active.fillna("") != latest.fillna("")) & (active.notna() | latest.notna())
    rows = d[differs]
    out = pd.DataFrame(
        {
            "deployment_id": text_column(rows, "id"),
            "name": text_column(rows, "name"),
            "deployment_type": text_column(rows, "deployment_type"),
            "image_version": _image_versions(snap)[differs],
            "active_revision_id": active[differs],
            "latest_revision_id": latest[differs],
            "updated_at": rows.get("updated_at"),
        }
    )
    snapshot_at = snap.snapshot_at
    if snapshot_at is not None and out["updated_at"] is not None and len(out):
        since = snapshot_at - pd.to_datetime(out["updated_at"], utc=True)
        out["time_since_update"] = since
        out["days_since_update"] = since.dt.total_seconds() / 86400.0
    else:
        out["time_since_update"] = pd.NaT
        out["days_since_update"] = float("nan")
    return out.sort_values("days_since_update", ascending=False, na_position="last").reset_index(
        drop=True
    )
