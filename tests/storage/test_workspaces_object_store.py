"""Two workspaces exported one after the other into one day on object storage (the real S3
server of tests/object_store.py): the second keeps the first, read back from the server."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.fs as pafs
import pytest

from analysis import connect
from analysis.connection import RetryPolicy
from analysis.sandbox import Faults, run_sandbox
from analysis.snapshot import WorkspacesFailed, take_workspaces_snapshot
from analysis.storage.reader import read_arrow

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
            return take_workspaces_snapshot({tenant: client}, s3_out, snapshot_date=DAY)

        export(a)
        first = manifest(s3_server, s3_out)
        with pytest.raises(WorkspacesFailed, match="403"):
            export(b)
        assert manifest(s3_server, s3_out) == first  # the failed export changed nothing
    with run_sandbox(deployments=60, seed=3, tenants=2) as sandbox:
        client = connect(sandbox.base_url, tenant_id=b)
        take_workspaces_snapshot({b: client}, s3_out, snapshot_date=DAY)
    assert by_tenant(s3_out) == expected
    sections = manifest(s3_server, s3_out)["workspaces"]
    assert sections[a]["status"] == "carried" and sections[a]["export_id"] == first["export_id"]
    assert sections[b]["status"] == "exported"
    components = read_arrow(s3_out, "deployment_components", DAY, ["tenant_id"])["tenant_id"]
    assert components.null_count == 0 and set(components.to_pylist()) == {a, b}
    selector = pafs.FileSelector(s3_out.removeprefix("s3://"), recursive=True)
    keys = [info.path for info in s3_server.filesystem().get_file_info(selector)]
    assert not [key for key in keys if "/_staging/" in key]  # nothing left half-published
