"""take_snapshot: the service → one snapshot, with providers and referenced repositories."""

from __future__ import annotations

import datetime as dt

from dims._connection import connect
from dims._snapshot import take_snapshot
from dims._storage import read_table
from dims.sandbox import run_sandbox

DAY = dt.date(2026, 1, 15)


def test_snapshot_holds_every_deployment_provider_and_referenced_repository(tmp_path):
    with run_sandbox(deployments=180, seed=4) as sandbox:
        result = take_snapshot(connect(sandbox.base_url), tmp_path, snapshot_date=DAY)
        fleet = sandbox.fleet
    referenced = {
        r["source_config"]["integration_id"]
        for r in fleet.deployments
        if isinstance(r.get("source_config"), dict) and r["source_config"].get("integration_id")
    }
    expected_repos = {(i, repo["id"]) for i in referenced for repo in fleet.repositories[i]}

    deployments = read_table(tmp_path, "deployments", DAY)
    assert sorted(deployments["id"]) == sorted(r["id"] for r in fleet.deployments)
    assert dict(zip(deployments["id"], deployments["deployment_type"], strict=True)) == (
        fleet.deployment_types
    )
    repos = read_table(tmp_path, "repositories", DAY)
    got = set(zip(repos["host_integration_id"], repos["id"], strict=True))
    assert got == expected_repos
    providers = read_table(tmp_path, "oauth_providers", DAY)
    assert sorted(providers["provider_id"]) == sorted(p["provider_id"] for p in fleet.providers)
    assert result.rows["deployments"] == 180 and result.rejected == 0
    assert "listings: all (fleet: 180 records" in result.summary()
    for kind in ("dev_free", "dev", "prod"):
        assert f"{kind} (tags: " in result.summary()


def test_an_integration_unknown_to_the_service_is_reported_not_lost(tmp_path):
    unknown = "00000000-0000-4000-8000-00000000abcd"
    with run_sandbox(deployments=60, seed=4) as sandbox:
        record = next(
            r for r in sandbox.fleet.deployments if isinstance(r.get("source_config"), dict)
        )
        record["source_config"]["integration_id"] = unknown  # served live by the sandbox
        result = take_snapshot(connect(sandbox.base_url), tmp_path, snapshot_date=DAY)
    assert f"unknown to the service (404), so they have no repositories: {unknown}" in (
        result.summary()
    )
    deployments = read_table(tmp_path, "deployments", DAY)
    assert unknown in set(deployments["integration_id"])  # the deployment itself is kept
    assert unknown not in set(read_table(tmp_path, "repositories", DAY)["host_integration_id"])
