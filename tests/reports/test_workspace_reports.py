"""Reports and `dims diff` across workspaces (the whole organisation by default) and per
workspace (issue 17)."""

from __future__ import annotations

import json
from datetime import date

import pytest
from cli_in_process import run

from dims import _reports as reports
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims.sandbox import generate_fleet, roll_out

DAY1, DAY2, DAY3 = date(2025, 7, 1), date(2025, 7, 2), date(2025, 7, 3)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Three workspaces on day 1; day 2 after a roll-out; day 3 without the last workspace."""
    out = tmp_path_factory.mktemp("workspaces")
    fleet = generate_fleet(90, seed=8, tenants=3)
    a, b, c = fleet.tenant_ids()

    def export(day, tenants):
        records = [r for r in fleet.deployments if r["tenant_id"] in tenants]
        export_snapshot([Page(records, source="dump")], out, snapshot_date=day)

    export(DAY1, {a, b, c})
    moved = set(roll_out(fleet, "9.0.0", 0.5))
    export(DAY2, {a, b, c})
    export(DAY3, {a, b})
    return out, fleet, moved


def test_capacity_by_workspace_adds_up_to_the_organisation(dataset):
    out, fleet, _ = dataset
    snap = reports.load_snapshot(out, DAY1)
    by_workspace = reports.capacity_by(snap, ["tenant_id"]).set_index("tenant_id")
    assert sorted(by_workspace.index) == fleet.tenant_ids()
    totals = reports.fleet_totals(snap)
    assert by_workspace["deployments"].sum() == totals["deployments"] == 90
    for column in ("cpu_request_cores_max_scale", "memory_limit_gib_min_scale"):
        assert by_workspace[column].sum() == pytest.approx(totals[column])
    for tenant in fleet.tenant_ids():
        one = reports.load_snapshot(out, DAY1, tenant_ids=[tenant])
        assert set(one.deployments["tenant_id"]) == {tenant}
        assert set(one.containers["deployment_id"]) <= set(one.deployments["id"])
        alone = reports.fleet_totals(one)
        assert alone["deployments"] == by_workspace.loc[tenant, "deployments"]
        assert alone["cpu_request_cores_max_scale"] == pytest.approx(
            by_workspace.loc[tenant, "cpu_request_cores_max_scale"]
        )


def test_diff_of_one_workspace_counts_only_its_changes(dataset):
    out, fleet, moved = dataset
    a = fleet.tenant_ids()[0]
    in_a = {r["id"] for r in fleet.deployments if r["tenant_id"] == a}
    whole = reports.diff(out, DAY1, DAY2)
    one = reports.diff(out, DAY1, DAY2, tenant_ids=[a])
    assert len(whole.version_changes) == len(moved)
    assert set(one.version_changes["deployment_id"]) == moved & in_a
    assert 0 < len(moved & in_a) < len(moved)
    assert whole.notes == one.notes == []


def test_a_workspace_missing_from_a_day_is_said_not_silently_removed(dataset):
    out, fleet, _ = dataset
    c = fleet.tenant_ids()[2]
    result = reports.diff(out, DAY2, DAY3)
    in_c = sum(r["tenant_id"] == c for r in fleet.deployments)
    assert result.counts()["removed"] == in_c
    assert len(result.notes) == 1 and c in result.notes[0] and "only in the from" in result.notes[0]
    assert c in result.summary()


def test_dims_diff_takes_tenant_ids(capsys, dataset):
    out, fleet, moved = dataset
    a, b, _ = fleet.tenant_ids()
    argv = ("diff", "--out", str(out), "--from", str(DAY1), "--to", str(DAY2), "--json")
    code, text, err = run(capsys, *argv, "--tenant-id", f"{a},{b}")
    assert code == 0, err
    found = json.loads(text)
    wanted = {r["id"] for r in fleet.deployments if r["tenant_id"] in (a, b)} & moved
    assert found["tenant_ids"] == [a, b]
    assert found["counts"]["upgrades"] + found["counts"]["other_version_changes"] == len(wanted)
    assert {c["deployment_id"] for c in found["changes"]} == wanted
