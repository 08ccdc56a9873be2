"""Every public report frame is tidy: its dtypes, its shape, no total rows, short reprs.

Tidy means what a pandas user expects: one row per entity (so `df.x.sum()` is the fleet's
figure, never twice), counts as integers, text (ids, names, types, versions) in pandas' one
string dtype `str`, and the fleet's totals from separate functions.
"""

from __future__ import annotations

import fleet_math as fm
import pandas as pd
import pytest

from dims import _reports as reports

DATE = "2025-06-04"  # of the snapshots the tests below export themselves
TEXT_COLUMNS = {
    "deployment_id",
    "name",
    "deployment_type",
    "k8s_namespace",
    "tenant_id",
    "component",
    "image_version",
    "newest_version",
    "anomaly",
    "detail",
    "signal",
    "suggestion",
    "active_revision_id",
    "latest_revision_id",
    "unpriced_reason",
    "label:team",
}
COUNT_COLUMNS = {
    "deployments",
    "replicas_min",
    "replicas_max",
    "sidecars",
    "init_containers",
    "db_max_connections",
    "deployments_with_db",
    "on_newest",
    "unparseable_versions",
    "versions_behind",
    "max_versions_behind",
    "version_order",
    "max_scale",
    "deployments_unpriced",
    "deployments_unbounded",
}
TOTAL_LABELS = {"all", "overall", "total"}


# `fleet` and `snap` (tests/reports/conftest.py): one fleet, exported once.


def _kinds(fleet) -> set[str]:
    return set(fleet.deployment_types.values())


# function, or function[grouping] -> (rows it must have, given the fleet and the snapshot)
FRAMES = {
    "pod_requests": lambda fleet, snap: len(fleet.deployments),
    "component_capacity": lambda fleet, snap: sum(len(fm.components(r)) for r in fleet.deployments),
    "capacity_by[component]": lambda fleet, snap: len(
        {c for r in fleet.deployments for c in fm.components(r)}
    ),
    "capacity_by[deployment_type]": lambda fleet, snap: len(_kinds(fleet)),
    "capacity_by[k8s_namespace]": lambda fleet, snap: len(
        {fm.namespace(r) for r in fleet.deployments}
    ),
    "capacity_by[tenant_id]": lambda fleet, snap: len(fleet.tenant_ids()),
    "capacity_summary": lambda fleet, snap: len(
        {(c, fleet.deployment_types[r["id"]]) for r in fleet.deployments for c in fm.components(r)}
    ),
    "overcommit": lambda fleet, snap: len({c for r in fleet.deployments for c in fm.components(r)}),
    "db_capacity": lambda fleet, snap: len(
        {fleet.deployment_types[r["id"]] for r in fleet.deployments if "db" in fm.components(r)}
    ),
    "deployment_totals": lambda fleet, snap: len(fleet.deployments),
    "cost_by_deployment": lambda fleet, snap: len(fleet.deployments),
    "cost_by": None,
    "allocated": lambda fleet, snap: len(fleet.deployments),
    "largest_deployments": lambda fleet, snap: 10,
    "anomalies": None,
    "rightsizing": None,
    "image_version_summary": lambda fleet, snap: len(
        {r.get("image_version") for r in fleet.deployments}
    ),
    "deployments_behind": lambda fleet, snap: len(fleet.deployments),
    "versions_by_type": lambda fleet, snap: len(
        {(fleet.deployment_types[r["id"]], r.get("image_version")) for r in fleet.deployments}
    ),
    "newest_share_by_type": lambda fleet, snap: len(_kinds(fleet)),
    "pending_rollouts": lambda fleet, snap: sum(
        r["active_revision_id"] != r["latest_revision_id"] for r in fleet.deployments
    ),
}


#: The arguments a frame function needs beside the snapshot.
ARGUMENTS = {"cost_by": ("label:team",), "allocated": ("namespace,label:team",)}


def _frame(name: str, snap) -> pd.DataFrame:
    """The frame FRAMES names: `capacity_by[k8s_namespace]` is `capacity_by(snap, [...])`."""
    function, _, grouping = name.partition("[")
    arguments = ([grouping.rstrip("]")],) if grouping else ARGUMENTS.get(name, ())
    return getattr(reports, function)(snap, *arguments)


def test_every_public_frame_function_is_checked() -> None:
    """A new public frame function must be added to FRAMES (and so to these tests)."""
    returns_frames = {
        name
        for name in reports.__all__
        if callable(getattr(reports, name))
        and getattr(getattr(reports, name), "__annotations__", {}).get("return") == "pd.DataFrame"
    }
    across_snapshots = {
        "versions_over_time",
        "version_changes",
        "changed_deployments",
        "cost_history",
        "group_cost_changes",
    }
    # (see the test below, and test_diff.py for changed_deployments)
    assert returns_frames - across_snapshots == {name.partition("[")[0] for name in FRAMES}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_frame_dtypes_and_shape(name, fleet, snap) -> None:
    frame = _frame(name, snap)
    assert isinstance(frame, pd.DataFrame)
    expected_rows = FRAMES[name]
    if expected_rows is not None:
        assert len(frame) == expected_rows(fleet, snap), name
    assert len(frame) > 0
    assert list(frame.index) == list(range(len(frame))), "a plain 0..n-1 index"
    for column in frame.columns:
        dtype = frame[column].dtype
        assert dtype != "object", f"{name}.{column} is object"
        if column in TEXT_COLUMNS:
            assert dtype == "str", f"{name}.{column}: {dtype}"
        elif column in COUNT_COLUMNS:
            assert pd.api.types.is_integer_dtype(dtype), f"{name}.{column}: {dtype}"
        elif column.endswith(("_cores", "_gib", "_usd_month", "_scale", "share", "overcommit")):
            assert dtype == "float64", f"{name}.{column}: {dtype}"


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_no_total_rows(name, snap) -> None:
    frame = _frame(name, snap)
    for column in ("component", "deployment_type", "k8s_namespace"):
        if column in frame.columns:
            assert not TOTAL_LABELS & set(frame[column].dropna()), (name, column)


def test_sums_of_tidy_frames_are_the_fleet_totals(fleet, snap) -> None:
    rs = [fm.resource_spec(r) for r in fleet.deployments]
    storage = sum(s.get("db_storage_gi") or 0 for s in rs)
    assert reports.db_capacity(snap)["db_storage_gib"].sum() == pytest.approx(storage)
    assert reports.db_capacity_total(snap)["db_storage_gib"] == pytest.approx(storage)
    shares = reports.newest_share_by_type(snap)
    total = reports.newest_share_total(snap)
    assert shares["deployments"].sum() == total["deployments"] == len(fleet.deployments)
    assert shares["on_newest"].sum() == total["on_newest"]
    by_type = reports.capacity_by(snap, ["deployment_type"])
    totals = reports.fleet_totals(snap)
    for column in ("cpu_request_cores_max_scale", "cost_request_max_scale_usd_month"):
        assert by_type[column].sum() == pytest.approx(totals[column], abs=0.01)


def test_fleet_totals_counts_are_ints_and_sums_are_rounded(fleet, snap) -> None:
    totals = reports.fleet_totals(snap)
    for name in ("deployments", "replicas_min", "replicas_max", "db_max_connections"):
        assert type(totals[name]) is int, name
    assert totals["deployments"] == len(fleet.deployments)
    for name, value in totals.items():
        if name.endswith("_usd_month"):
            assert value == round(value, 2), name
        elif name.endswith(("_cores", "_gib")) or "_scale" in name:
            assert value == round(value, 3), name
    for total in (
        reports.db_capacity_total(snap),
        reports.overcommit_total(snap),
        reports.newest_share_total(snap),
    ):
        assert all(not hasattr(v, "dtype") for v in total.values()), total  # plain Python


def test_reprs_are_short_summaries(tmp_path, fleet, snap, dataset_date) -> None:
    text = repr(snap)
    assert len(text.splitlines()) == 1 and len(text) < 200, text
    assert f"{len(fleet.deployments)} rows" in text and dataset_date in text
    for day in (DATE, "2025-06-05"):  # two snapshots of the same fleet
        fm.export_fleet(fleet.deployments, fleet.deployment_types, tmp_path, day)
    result = reports.diff(tmp_path, DATE, "2025-06-05")
    text = repr(result)
    assert len(text.splitlines()) == 1 and len(text) < 300, text
    assert "added=0" in text and DATE in text


def test_frames_across_snapshots(tmp_path, fleet) -> None:
    for day in (DATE, "2025-06-05"):
        fm.export_fleet(fleet.deployments, fleet.deployment_types, tmp_path, day)
    over_time = reports.versions_over_time(tmp_path)
    assert len(over_time) == 2 * len({r.get("image_version") for r in fleet.deployments})
    assert over_time["deployments"].dtype == "int64"
    assert over_time["share"].dtype == "float64"
    assert over_time["snapshot_date"].dtype == "str"
    changes = reports.version_changes(tmp_path, DATE, "2025-06-05")
    assert changes.empty and "deployment_id" in changes.columns
