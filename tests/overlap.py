"""Fleets whose workspaces' listings overlap, and the checks that an export of them holds
every deployment once (issue 26): used by the tests of a folder and of object storage.

`overlapping()` makes three workspaces A, B, C (B is never exported by these tests):
- C also lists a stale copy of one of A's deployments (`shared`: another image version and
  more CPU, its own tenant_id still A's), so a wrong winner shows in the totals;
- A and C both list one of B's deployments (`of_b`: owned by no exported workspace);
- A and C both list a deployment that names no workspace (`untagged`).
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass
from typing import Any

import fleet_math as fm
import pandas as pd
import pytest

from dims import _reports as reports
from dims._pages import Page
from dims._storage import read_arrow
from dims._tables import TABLE_NAMES, flatten
from dims.sandbox import Fleet, generate_fleet

STALE_VERSION = "0.0.1-stale"
UNTAGGED_ID = "00000000-0000-4000-8000-0000000000aa"


@dataclass
class Overlap:
    fleet: Fleet
    a: str
    b: str
    c: str
    shared: dict[str, Any]
    of_b: dict[str, Any]
    untagged: dict[str, Any]

    def own(self, tenant: str) -> list[dict[str, Any]]:
        return [r for r in self.fleet.deployments if r["tenant_id"] == tenant]

    def expected(self, order: list[str]) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """The records an export of A and C in `order` should hold, once each, and the
        tenant_id each should have."""
        records = [*self.own(self.a), *self.own(self.c), self.of_b, self.untagged]
        tenant_of = {r["id"]: r.get("tenant_id") or order[0] for r in records}
        return records, tenant_of


def overlapping(seed: int, deployments: int = 60) -> Overlap:
    fleet = generate_fleet(deployments, seed=seed, tenants=3, embed_deployment_type=True)
    a, b, c = fleet.tenant_ids()
    own = {t: [r for r in fleet.deployments if r["tenant_id"] == t] for t in (a, b, c)}
    shared = own[a][0]  # the first of A's listing
    assert fm.resource_spec(shared).get("cpu") is not None, "choose another seed"
    stale = copy.deepcopy(shared)
    stale["image_version"] = STALE_VERSION
    stale["source_config"]["resource_spec"]["cpu"] = 64.0
    untagged = copy.deepcopy(own[b][1])
    untagged["id"] = UNTAGGED_ID
    del untagged["tenant_id"]
    fleet.list_also(c, [stale, own[b][0], untagged])
    fleet.list_also(a, [own[b][0], untagged])
    return Overlap(fleet, a, b, c, shared, own[b][0], untagged)


def assert_each_once(
    out: Any, day: Any, records: list[dict[str, Any]], tenant_of: dict[str, str]
) -> None:
    """The day holds `records` once each under `tenant_of`: one deployments row per id,
    every child table's rows per deployment as one read of the records gives them, and
    the CPU and memory totals per workspace of the fleet's own figures."""
    found = read_arrow(out, "deployments", day, ["id", "tenant_id"]).to_pydict()
    assert sorted(found["id"]) == sorted(tenant_of)  # each id once, none missing
    assert dict(zip(found["id"], found["tenant_id"], strict=True)) == tenant_of
    reference = flatten([Page(records, source="reference")])
    for name in TABLE_NAMES:
        if name == "deployments" or "deployment_id" not in reference[name].column_names:
            continue
        rows = read_arrow(out, name, day, ["deployment_id", "tenant_id"]).to_pydict()
        want = Counter(reference[name]["deployment_id"].to_pylist())
        assert Counter(rows["deployment_id"]) == want, name
        assert [tenant_of[i] for i in rows["deployment_id"]] == rows["tenant_id"], name
    snap = reports.load_snapshot(out, day)
    by_workspace = reports.capacity_by(snap, ["tenant_id"]).set_index("tenant_id")
    expected = fm.grouped_totals(records, lambda record, _: tenant_of[record["id"]])
    assert sorted(by_workspace.index) == sorted(expected)
    for tenant, want in expected.items():
        assert by_workspace.loc[tenant, "deployments"] == len(want["ids"])
        for column in ("cpu_request_cores_max_scale", "memory_limit_gib_min_scale"):
            got, value = by_workspace.loc[tenant, column], want[column]
            # None: nothing of the workspace is known (every one's limits unbounded): null
            assert pd.isna(got) if value is None else got == pytest.approx(value), column
    assert STALE_VERSION not in snap.deployments["image_version"].tolist()
