"""Two workspaces exported one after the other into one day on object storage (the real S3
server of tests/object_store.py): the second keeps the first, read back from the server;
every deployment once whichever workspaces list it."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.fs as pafs
import pytest
from overlap import assert_each_once, overlapping

from dims._connection import RetryPolicy, connect
from dims._errors import DuplicateDeploymentsWarning
from dims._snapshot import WorkspacesFailed, take_snapshot
from dims._storage import read_arrow
from dims.sandbox import Faults, run_sandbox

DAY = dt.date(2026, 5, 6)


def by_tenant(out):
    found = read_arrow(out, "deployments", DAY, ["id", "tenant_id"]).to_pydict()
    tenants: dict[str, set[str]] = {}
    for deployment_id, tenant in zip(found["id"], found["tenant_id"], strict=True):
        tenants.setdefault(tenant, set()).add(deployment_id)
    return tenants


def manifest(s3_server, out):
    path = f"{out.removeprefix('s3://')}/_manifests/{DAY}.json"
    with s3_server.filesystem().open_input_file(path) as handle:
        return json.loads(handle.read())


def test_two_workspaces_in_one_day_on_s3_keep_each_other(s3_server, s3_out):
    with run_sandbox(deployments=60, seed=3, tenants=2) as probe:
        a, b = probe.fleet.tenant_ids()
        expected = {
            t: {r["id"] for r in probe.fleet.deployments if r["tenant_id"] == t} for t in (a, b)
        }
    failing = Faults(fail_tenant=b, fail_tenant_status=403)
    with run_sandbox(deployments=60, seed=3, tenants=2, faults=failing) as sandbox:

        def export(tenant):
            client = connect(sandbox.base_url, tenant_id=tenant, retry=RetryPolicy.none())
            return take_snapshot({tenant: client}, s3_out, snapshot_date=DAY)

        export(a)
        first = manifest(s3_server, s3_out)
        with pytest.raises(WorkspacesFailed, match="403"):
            export(b)
        assert manifest(s3_server, s3_out) == first  # the failed export changed nothing
    with run_sandbox(deployments=60, seed=3, tenants=2) as sandbox:
        client = connect(sandbox.base_url, tenant_id=b)
        take_snapshot({b: client}, s3_out, snapshot_date=DAY)
    assert by_tenant(s3_out) == expected
    sections = manifest(s3_server, s3_out)["workspaces"]
    assert sections[a]["status"] == "carried" and sections[a]["export_id"] == first["export_id"]
    assert sections[b]["status"] == "exported"
    components = read_arrow(s3_out, "deployment_components", DAY, ["tenant_id"])["tenant_id"]
    assert components.null_count == 0 and set(components.to_pylist()) == {a, b}
    selector = pafs.FileSelector(s3_out.removeprefix("s3://"), recursive=True)
    keys = [info.path for info in s3_server.filesystem().get_file_info(selector)]
    assert not [key for key in keys if "/_staging/" in key]  # nothing left half-published


@pytest.mark.filterwarnings("ignore::dims._errors.TenantMismatchWarning")
def test_every_deployment_once_on_s3_and_a_moved_one_replaces_its_row(s3_server, s3_out):
    """Issue 26 on object storage: C is given first and A's copy of its own deployment comes
        last (A is served slowly), so C's stale copy was written before it (both are written; the
    publish keeps A's); then a
        deployment moves from C to A and A alone is exported into the same day."""
    o = overlapping(seed=13)
    with (
        run_sandbox(fleet=o.fleet, latency_ms=400) as for_a,
        run_sandbox(fleet=o.fleet) as for_c,
    ):
        clients = {
            o.c: connect(for_c.base_url, tenant_id=o.c, retry=RetryPolicy.none()),
            o.a: connect(for_a.base_url, tenant_id=o.a, retry=RetryPolicy.none()),
        }
        with pytest.warns(DuplicateDeploymentsWarning, match="3 duplicate"):
            take_snapshot(clients, s3_out, snapshot_date=DAY)
    records, tenant_of = o.expected([o.c, o.a])
    assert_each_once(s3_out, DAY, records, tenant_of)
    written = read_arrow(s3_out, "deployments", DAY, ["id", "image_version"]).to_pydict()
    versions = dict(zip(written["id"], written["image_version"], strict=True))
    assert versions[o.shared["id"]] == o.shared["image_version"]  # A's, written after C's
    moved = o.own(o.c)[0]
    moved["tenant_id"] = o.a
    with run_sandbox(fleet=o.fleet) as sandbox:
        client = connect(sandbox.base_url, tenant_id=o.a, retry=RetryPolicy.none())
        with pytest.warns(DuplicateDeploymentsWarning, match="1 by rule day"):
            take_snapshot({o.a: client}, s3_out, snapshot_date=DAY)
    # A now lists the moved deployment and the one that names nobody; B's stays B's
    tenant_of |= {moved["id"]: o.a, o.untagged["id"]: o.a}
    assert_each_once(s3_out, DAY, records, tenant_of)
    after = manifest(s3_server, s3_out)
    assert after["workspaces"][o.c]["status"] == "carried"
    dropped = after["fetch"]["workspaces"][o.a]["cross_workspace_duplicates"]
    assert dropped == {"dropped": 1, "decided_by": {"owner": 0, "order": 0, "day": 1}}
