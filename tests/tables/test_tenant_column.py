"""`tenant_id` in every table: the deployment's own, repeated by its children; the workspace
fetched from for providers, repositories and rejected records (issue 17)."""

from __future__ import annotations

import msgspec
import orjson
import pyarrow.compute as pc
import pytest

from dims._pages import Page
from dims._tables import TABLE_SCHEMAS, Flattener
from dims.sandbox import generate_fleet

OTHER = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"


def test_every_table_has_tenant_id_as_text():
    for name, schema in TABLE_SCHEMAS.items():
        assert schema.field("tenant_id").type == "string", name


@pytest.mark.parametrize("raw", [False, True], ids=["careful", "typed"])
def test_rows_carry_their_deployments_tenant_or_the_workspace(raw):
    fleet = generate_fleet(40, seed=5, tenants=1)
    (workspace,) = fleet.tenant_ids()
    records = [dict(r) for r in fleet.deployments]
    del records[1]["tenant_id"]  # no own tenant: it takes the workspace it came from
    records[2]["tenant_id"] = OTHER  # names another workspace: kept, and counted
    first, second, third = records[0]["id"], records[1]["id"], records[2]["id"]
    records.append({"id": 5})  # rejected: it takes the workspace
    if raw:
        records = [msgspec.Raw(orjson.dumps(r)) for r in records]
    flattener = Flattener()
    flattener.add_page(Page(records, source="page offset=0", tenant_id=workspace))
    flattener.add_providers(fleet.providers, tenant_id=workspace)
    flattener.add_repositories(fleet.repositories, tenant_id=workspace)
    flattener.add_providers(fleet.providers)  # listed without a workspace
    tables = flattener.take()

    deployments = tables["deployments"].to_pydict()
    tenant_of = dict(zip(deployments["id"], deployments["tenant_id"], strict=True))
    assert tenant_of[first] == workspace
    assert tenant_of[second] == workspace
    assert tenant_of[third] == OTHER
    assert flattener.tenant_mismatches == {workspace: 1}
    children = [n for n, s in TABLE_SCHEMAS.items() if "deployment_id" in s.names]
    assert len(children) == 9
    for name in children:
        rows = tables[name].to_pydict()
        assert rows["deployment_id"], name
        for deployment_id, tenant in zip(rows["deployment_id"], rows["tenant_id"], strict=True):
            assert tenant == tenant_of[deployment_id], name
    assert tables["rejected_records"].column("tenant_id").to_pylist() == [workspace]
    assert tables["repositories"].num_rows > 0
    assert pc.all(pc.equal(tables["repositories"]["tenant_id"], workspace)).as_py()
    providers = tables["oauth_providers"].column("tenant_id").to_pylist()
    assert providers == [workspace] * len(fleet.providers) + [None] * len(fleet.providers)


def test_without_a_workspace_rows_keep_the_records_own_tenant():
    fleet = generate_fleet(30, seed=2, tenants=3)
    tables = Flattener()
    tables.add_page(Page(fleet.deployments, source="dump.json"))
    out = tables.take()
    assert sorted(pc.unique(out["deployments"]["tenant_id"]).to_pylist()) == fleet.tenant_ids()
    assert len(fleet.tenant_ids()) == 3
    assert out["deployment_components"]["tenant_id"].null_count == 0
    assert tables.tenant_mismatches == {}
