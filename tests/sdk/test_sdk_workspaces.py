"""A client of several workspaces (`tenant_id=[…]`, issue 29): every call covers each of
them, and a listing yields each deployment once, the copy an export of the same workspaces
keeps (tests/overlap.py's fleet: stale copies, copies of a workspace not asked for, a
record naming no workspace), sync and async, in memory as in an export."""

from __future__ import annotations

import asyncio
import copy
from uuid import UUID

import pandas as pd
import pytest
from overlap import STALE_VERSION, overlapping

import dims
from dims._errors import ConfigurationError, WorkspacesFailed
from dims._storage import read_table
from dims.sandbox import Faults, generate_fleet, run_sandbox

SEED = 13
CLAIMED_NAME = "claimed-by-a"


def overlap_with_a_claimed_copy():
    """overlapping(), and one of B's deployments that C lists as it is and A lists as its
    own (tenant_id A): A's copy, which comes later when C is given first, wins."""
    o = overlapping(SEED)
    theirs = [r for r in o.own(o.b) if r["id"] not in (o.of_b["id"],)][3]
    claimed = copy.deepcopy(theirs)
    claimed["tenant_id"], claimed["name"] = o.a, CLAIMED_NAME
    o.fleet.list_also(o.c, [theirs])
    o.fleet.list_also(o.a, [claimed])
    return o, theirs["id"]


def kept(o, claimed_id, order):
    """id -> (own tenant_id, image_version, name) of each copy an export of `order` keeps."""
    records, _ = o.expected(order)
    out = {r["id"]: (r.get("tenant_id"), r["image_version"], r["name"]) for r in records}
    theirs = next(r for r in o.fleet.deployments if r["id"] == claimed_id)
    out[claimed_id] = (o.a, theirs["image_version"], CLAIMED_NAME)
    return out


def in_order(frame):
    """Rows in one order whatever order they came in."""
    return frame.sort_values(list(frame.columns), na_position="first").reset_index(drop=True)


def seen(models):
    """The same of the models (a record naming no workspace: None)."""
    return {
        str(m.id): (
            str(m.tenant_id) if isinstance(m.tenant_id, UUID) else None,
            m.image_version,
            m.name,
        )
        for m in models
    }


def test_a_listing_of_several_workspaces_yields_the_exports_copies_once(tmp_path):
    o, claimed_id = overlap_with_a_claimed_copy()
    order = [o.c, o.a]  # C first: A's copies of the stale and the claimed come late
    with (
        run_sandbox(fleet=o.fleet) as sb,
        dims.Client(base_url=sb.base_url, tenant_id=order) as client,
    ):
        assert client.tenant_ids == tuple(order)
        models = list(client.deployments.list(page_size=7))
        pages = list(client.deployments.list(page_size=7).pages())
        frames = client.deployments.list().to_pandas()
        with (  # the export tells of the copies it dropped, as the test's fleet has them
            pytest.warns(dims.DuplicateDeploymentsWarning),
            pytest.warns(dims.TenantMismatchWarning),
        ):
            exported = client.take_snapshot(tmp_path / "out")
    ids = [str(m.id) for m in models]
    assert len(ids) == len(set(ids))  # each once
    assert seen(models) == kept(o, claimed_id, order)
    assert STALE_VERSION not in {m.image_version for m in models}
    assert {p.tenant_id for p in pages} == set(order)
    paged = [str(r["id"]) for p in pages for r in p.records]
    assert sorted(paged) == sorted(ids)  # the pages hold the same copies, each once
    for name, frame in frames.items():  # the workspaces' pages interleave as they come
        written = read_table(exported.out_dir, name).drop(columns=["snapshot_at", "snapshot_date"])
        mine = frame.drop(columns=["snapshot_at"])
        pd.testing.assert_frame_equal(in_order(mine), in_order(written), obj=name)
    rows = frames["deployments"].set_index("id")
    assert {i: rows.loc[i, "name"] for i in ids} == {str(m.id): m.name for m in models}


def test_the_async_client_yields_the_same_copies():
    o, claimed_id = overlap_with_a_claimed_copy()
    order = [o.c, o.a]
    with run_sandbox(fleet=o.fleet) as sb:

        async def main():
            async with dims.AsyncClient(base_url=sb.base_url, tenant_id=order) as client:
                models = [m async for m in client.deployments.list(page_size=7)]
                pages = [p async for p in client.deployments.list(page_size=7).pages()]
                tables = await client.deployments.list().to_arrow()
                return models, pages, tables

        models, pages, tables = asyncio.run(main())
    assert seen(models) == kept(o, claimed_id, order)
    assert len(models) == len({m.id for m in models})
    assert sorted(str(m.id) for m in models) == sorted(tables["deployments"]["id"].to_pylist())
    paged = [str(r["id"]) for p in pages for r in p.records]
    assert sorted(paged) == sorted(str(m.id) for m in models)


def test_the_workspaces_come_from_dims_tenant_id_too(monkeypatch):
    fleet = generate_fleet(40, seed=3, tenants=3)
    with run_sandbox(fleet=fleet) as sb:
        first, second, _ = fleet.tenant_ids()
        monkeypatch.setenv("DIMS_TENANT_ID", f"{first},{second}")
        with dims.Client(base_url=sb.base_url) as client:
            assert client.tenant_ids == (first, second)
            got = sorted(str(m.id) for m in client.deployments.list())
            providers = client.providers.list()
            with pytest.raises(ConfigurationError, match=r"with_options\(tenant_id=…\)"):
                client.deployments.with_raw_response.list()
            one = client.with_options(tenant_id=second)
            raw = one.deployments.with_raw_response.list(page_size=100)
    want = sorted(r["id"] for r in fleet.deployments if r["tenant_id"] in (first, second))
    assert got == want
    assert [p.id for p in providers] == [p["id"] for p in fleet.providers]  # each once
    assert {str(d.tenant_id) for d in raw.parse().resources} == {second}


def test_a_failing_workspace_is_its_typed_error_or_the_exports_one():
    fleet = generate_fleet(30, seed=3, tenants=2)
    good, bad = fleet.tenant_ids()
    faults = Faults(fail_tenant=bad, fail_tenant_status=500)
    with (
        run_sandbox(fleet=fleet, faults=faults) as sb,
        dims.Client(base_url=sb.base_url, tenant_id=[good, bad], max_retries=0) as c,
    ):
        with pytest.raises(dims.ServerError, match="HTTP 500"):
            list(c.deployments.list())
        with pytest.raises(WorkspacesFailed, match=f"{bad}: GET"):
            c.deployments.list().to_arrow()


def test_a_tenant_id_of_the_wrong_kind_is_one_line():
    with pytest.raises(ConfigurationError, match="tenant_id must be a workspace id or a list"):
        dims.Client(base_url="http://127.0.0.1:8765", tenant_id=7)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="empty workspace"):
        dims.Client(base_url="http://127.0.0.1:8765", tenant_id=["a", ""])


KEY = "sk-workspace-key-0123456789"


def _each_call(mode, provider_id, integration_id):
    """Every call of a client of several workspaces that asks each one, as `mode` runs it."""
    if mode == "sync":
        return {
            "deployments": lambda c: list(c.deployments.list(page_size=5)),
            "pages": lambda c: list(c.deployments.list(page_size=5).pages()),
            "providers.list": lambda c: c.providers.list(),
            "providers.get": lambda c: c.providers.get(provider_id),
            "repositories.list": lambda c: c.repositories.list(integration_id),
        }

    async def models(c):
        return [m async for m in c.deployments.list(page_size=5)]

    async def pages(c):
        return [p async for p in c.deployments.list(page_size=5).pages()]

    return {
        "deployments": models,
        "pages": pages,
        "providers.list": lambda c: c.providers.list(),
        "providers.get": lambda c: c.providers.get(provider_id),
        "repositories.list": lambda c: c.repositories.list(integration_id),
    }


def _run(mode, make, call):
    if mode == "sync":
        with make(dims.Client) as client:
            return call(client)

    async def main():
        async with make(dims.AsyncClient) as client:
            return await call(client)

    return asyncio.run(main())


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, dims.AuthenticationError),
        (403, dims.PermissionDeniedError),
        (500, dims.ServerError),
    ],
)
def test_the_error_of_one_workspace_of_several_names_it(mode, status, kind):
    """A sandbox that wants a key, and one workspace of two that refuses it (or fails):
    every call that asks each workspace raises that workspace's typed error, and its line
    names the workspace (the request alone does not: the workspace is a header), never the
    key."""
    fleet = generate_fleet(30, seed=3, tenants=2)
    good, bad = fleet.tenant_ids()
    faults = Faults(fail_tenant=bad, fail_tenant_status=status)
    provider = fleet.providers[0]["provider_id"]
    integration = sorted(fleet.repositories)[0]
    with run_sandbox(fleet=fleet, faults=faults, api_key=KEY) as sb:

        def make(cls):
            return cls(base_url=sb.base_url, api_key=KEY, tenant_id=[bad, good], max_retries=0)

        for name, call in _each_call(mode, provider, integration).items():
            with pytest.raises(kind) as info:
                _run(mode, make, call)
            error, line = info.value, str(info.value)
            assert error.status_code == status and error.workspace == bad, name
            assert line.startswith(f"workspace {bad}: GET "), (name, line)
            assert f"HTTP {status}" in line and "\n" not in line, (name, line)
            assert good not in line and KEY not in f"{line} {error!r} {error.body!r}", name


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("call", ["to_arrow", "to_pandas"])
def test_tables_in_memory_that_a_workspace_fails_speak_of_the_call_not_of_publishing(mode, call):
    """`to_arrow()` and `to_pandas()` publish nothing: a failed workspace makes the call
    give no tables, and its line says that, naming the call, the workspace and why."""
    fleet = generate_fleet(30, seed=3, tenants=2)
    good, bad = fleet.tenant_ids()
    faults = Faults(fail_tenant=bad, fail_tenant_status=401)
    with run_sandbox(fleet=fleet, faults=faults, api_key=KEY) as sb:

        def make(cls):
            return cls(base_url=sb.base_url, api_key=KEY, tenant_id=[good, bad], max_retries=0)

        def tables(client):  # the sync call, or the coroutine the async one awaits
            return getattr(client.deployments.list(), call)()

        with pytest.raises(WorkspacesFailed) as info:
            _run(mode, make, tables)
    line = str(info.value)
    assert line.startswith(f"1 of 2 workspace(s) failed, so deployments.list().{call}() "), line
    assert f"{bad}: GET " in line and "HTTP 401" in line and f"fetched: {good} (" in line
    assert "publish" not in line and "--allow-partial" not in line, line
    assert "\n" not in line and KEY not in line
    assert info.value.workspaces[bad]["status"] == "failed"
    assert info.value.workspaces[good]["status"] == "fetched"
