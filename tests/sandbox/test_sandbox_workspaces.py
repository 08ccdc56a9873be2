"""The sandbox scopes listings to the workspace named by X-Tenant-Id, and can fail one."""

from __future__ import annotations

import httpx
import pytest

from dims.sandbox import Faults, generate_fleet, run_sandbox


def listed(base_url, headers):
    ids, offset = [], 0
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as http:
        for _ in range(100):  # bounded: 90 records in pages of 100
            body = http.get("/v2/deployments", params={"limit": 100, "offset": offset}).json()
            if not body["resources"]:
                return ids
            ids += [(r["id"], r["tenant_id"]) for r in body["resources"]]
            offset = body["offset"]
    raise AssertionError("the listing did not end")


def test_each_workspace_lists_only_its_records_and_none_lists_all():
    with run_sandbox(deployments=90, seed=3, tenants=3) as sandbox:
        tenants = sandbox.fleet.tenant_ids()
        assert len(tenants) == 3
        everything = listed(sandbox.base_url, {})
        scoped = {t: listed(sandbox.base_url, {"X-Tenant-Id": t}) for t in tenants}
        unknown = listed(sandbox.base_url, {"X-Tenant-Id": "not-a-workspace"})
    assert len(everything) == 90 and unknown == []
    for tenant, records in scoped.items():
        assert records and {t for _, t in records} == {tenant}
    assert sorted(r for records in scoped.values() for r in records) == sorted(everything)


@pytest.mark.parametrize("status", [403, 500])
def test_fail_tenant_fails_every_request_of_that_workspace_only(status):
    with run_sandbox(deployments=20, seed=1, tenants=2) as probe:
        failing, working = probe.fleet.tenant_ids()
    faults = Faults(fail_tenant=failing, fail_tenant_status=status)
    with (
        run_sandbox(deployments=20, seed=1, tenants=2, faults=faults) as sandbox,
        httpx.Client(base_url=sandbox.base_url, timeout=30) as http,
    ):
        bad = http.get("/v2/auth/providers", headers={"X-Tenant-Id": failing})
        good = http.get("/v2/deployments", headers={"X-Tenant-Id": working})
        assert sandbox.stats.faults["tenant_failure"] == 1
    assert bad.status_code == status and "detail" in bad.json()
    assert good.status_code == 200 and good.json()["resources"]


def test_fail_tenant_status_must_be_an_error_status():
    with pytest.raises(ValueError, match="fail_tenant_status"):
        Faults(fail_tenant="x", fail_tenant_status=200)


def records_of(base_url, headers, **params):
    found, offset = [], 0
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as http:
        for _ in range(100):  # bounded: a few pages of 7
            query = {"limit": 7, "offset": offset, **params}
            body = http.get("/v2/deployments", params=query)
            assert body.status_code == 200, body.text
            if not body.json()["resources"]:
                return found
            found += body.json()["resources"]
            offset = body.json()["offset"]
    raise AssertionError("the listing did not end")


def test_a_workspace_can_also_list_another_workspaces_records_and_untagged_ones():
    """Fleet.list_also: listings that overlap, as the real service's may (issue 26). The
    extra records come after the workspace's own, through its filters; no other listing
    changes."""
    fleet = generate_fleet(30, seed=3, tenants=2)
    a, b = fleet.tenant_ids()
    theirs = next(r for r in fleet.deployments if r["tenant_id"] == b)
    stale = {**theirs, "image_version": "0.0.1-stale"}
    bare = {key: value for key, value in theirs.items() if key != "tenant_id"}
    bare["id"] = "00000000-0000-4000-8000-000000000001"
    fleet.list_also(a, [stale, bare])
    fleet.list_also("only-lists-others", [theirs])
    own = {t: [r["id"] for r in fleet.deployments if r["tenant_id"] == t] for t in (a, b)}
    with run_sandbox(fleet=fleet, api_key="k") as sandbox:
        key = {"X-Api-Key": "k"}
        in_a = records_of(sandbox.base_url, {**key, "X-Tenant-Id": a})
        in_b = records_of(sandbox.base_url, {**key, "X-Tenant-Id": b})
        everything = records_of(sandbox.base_url, key)
        named = records_of(
            sandbox.base_url, {**key, "X-Tenant-Id": a}, name_contains=theirs["name"]
        )
        other = records_of(sandbox.base_url, {**key, "X-Tenant-Id": "only-lists-others"})
    assert [r["id"] for r in in_a] == [*own[a], theirs["id"], bare["id"]]
    assert in_a[-2] == stale and "tenant_id" not in in_a[-1]
    assert [r["id"] for r in in_b] == own[b]
    assert [r["id"] for r in everything] == [r["id"] for r in fleet.deployments]
    assert [r["id"] for r in named] == [theirs["id"], bare["id"]]
    assert other == [theirs]
