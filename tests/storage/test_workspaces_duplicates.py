"""Every deployment once, whichever workspaces list it (issue 26), over the loopback sandbox
and read back from real Parquet: the owner's copy wins whichever comes first, else the
workspace given first; one warning and per-workspace counts; later exports of the same
day never bring an id twice."""

from __future__ import annotations

import copy
import datetime as dt
import warnings

import msgspec
import orjson
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from overlap import STALE_VERSION, assert_each_once, overlapping

from dims._connection import RetryPolicy, connect
from dims._errors import DuplicateDeploymentsWarning, TenantMismatchWarning
from dims._evidence import Workspace
from dims._pages import Page
from dims._snapshot import export_snapshot, take_snapshot
from dims._storage import read_arrow
from dims._tables import SCHEMA_VERSION, TABLE_NAMES
from dims.sandbox import Faults, generate_fleet, run_sandbox

DAY = dt.date(2026, 4, 5)
SEED = 13
#: Per request, for the workspace whose pages must come second: its first page comes after
#: two of them (providers, then the page), well after the other's few pages.
SLOW_MS = 400


def client(sandbox, tenant):
    return connect(sandbox.base_url, tenant_id=tenant, retry=RetryPolicy.none())


def export_recording(clients, out, **options):
    """The export, and the warnings it gave (every one, even repeated)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = take_snapshot(clients, out, snapshot_date=DAY, **options)
    return result, caught


def of_kind(caught, kind):
    return [str(w.message) for w in caught if issubclass(w.category, kind)]


def duplicates(result, tenant):
    return result.manifest.to_dict()["fetch"]["workspaces"][tenant]["cross_workspace_duplicates"]


def by_rule(owner=0, order=0, day=0):
    return {"owner": owner, "order": order, "day": day}


def row_of(out, deployment_id, column):
    day = read_arrow(out, "deployments", DAY, ["id", column]).to_pydict()
    return dict(zip(day["id"], day[column], strict=True))[deployment_id]


def test_each_deployment_once_the_owners_copy_else_the_first_workspaces(tmp_path):
    o = overlapping(SEED)
    with run_sandbox(fleet=o.fleet) as sandbox:
        order = [o.a, o.c]
        result, caught = export_recording({t: client(sandbox, t) for t in order}, tmp_path)
    records, tenant_of = o.expected(order)
    assert tenant_of[o.untagged["id"]] == o.a and tenant_of[o.of_b["id"]] == o.b
    assert_each_once(tmp_path, DAY, records, tenant_of)
    # C's copies lost: the stale one to its owner A, the two no workspace owns to A (first)
    assert duplicates(result, o.c) == {"dropped": 3, "decided_by": by_rule(owner=1, order=2)}
    assert duplicates(result, o.a)["dropped"] == 0
    (warning,) = of_kind(caught, DuplicateDeploymentsWarning)  # one, for the whole export
    assert warning.startswith("3 duplicate copy(ies)")
    assert "1 by rule owner" in warning and "2 by rule order" in warning
    assert f"{o.a}, then {o.c}" in warning
    # A's copy of B's deployment is kept under B (its own word), so A is told of it
    assert result.manifest.fetch.workspaces[o.a].tenant_id_elsewhere == 1
    assert result.manifest.fetch.workspaces[o.c].tenant_id_elsewhere == 0
    assert result.records == len(records)
    assert f"workspace {o.c}: exported, " in result.summary()
    assert "3 duplicate copy(ies) dropped" in result.summary()


@pytest.mark.parametrize("owner_first", [True, False], ids=["owner-first", "owner-last"])
def test_the_owners_copy_wins_whichever_copy_comes_first(tmp_path, owner_first):
    """C is given first, so only the owner rule makes A's copy of A's deployment win. One
    workspace is served slowly, so the copies come in a known order: when A's copy comes
    last, C's stale copy was written already; when it comes first, C's copies of the
    deployments nobody exported owns come after A's (C is first in the order). Either way
    the publish keeps the same copies."""
    o = overlapping(SEED)
    slow_a, slow_c = (0, SLOW_MS) if owner_first else (SLOW_MS, 0)
    with (
        run_sandbox(fleet=o.fleet, latency_ms=slow_a) as for_a,
        run_sandbox(fleet=o.fleet, latency_ms=slow_c) as for_c,
    ):
        order = [o.c, o.a]
        clients = {o.c: client(for_c, o.c), o.a: client(for_a, o.a)}
        result, caught = export_recording(clients, tmp_path)
    records, tenant_of = o.expected(order)
    assert tenant_of[o.untagged["id"]] == o.c
    assert_each_once(tmp_path, DAY, records, tenant_of)
    assert row_of(tmp_path, o.shared["id"], "image_version") == o.shared["image_version"]
    # the same counts whichever came first
    assert duplicates(result, o.c) == {
        "dropped": 1,
        "decided_by": {"owner": 1, "order": 0, "day": 0},
    }
    assert duplicates(result, o.a) == {
        "dropped": 2,
        "decided_by": {"owner": 0, "order": 2, "day": 0},
    }
    assert result.manifest.fetch.workspaces[o.a].tenant_id_elsewhere == 0
    assert result.manifest.fetch.workspaces[o.c].tenant_id_elsewhere == 1
    assert result.records == len(records) and result.rejected == 0
    assert len(of_kind(caught, DuplicateDeploymentsWarning)) == 1
    assert of_kind(caught, TenantMismatchWarning) == [
        f"workspace {o.c}: 1 deployment(s) name another tenant_id in their record; "
        "kept under their own tenant_id"
    ]


def both_claim_it():
    """A fleet of two workspaces A and C where C also lists one of A's deployments as its
    own (tenant_id C, another image version): two copies, each naming the workspace that
    listed it, so no copy is the owner's more than the other."""
    fleet = generate_fleet(40, seed=SEED, tenants=2, embed_deployment_type=True)
    a, c = fleet.tenant_ids()
    theirs = [r for r in fleet.deployments if r["tenant_id"] == a][2]
    claimed = copy.deepcopy(theirs)
    claimed["tenant_id"], claimed["image_version"] = c, STALE_VERSION
    fleet.list_also(c, [claimed])
    return fleet, a, c, theirs


@pytest.mark.parametrize("first", ["a", "c"])
@pytest.mark.parametrize("arrives", ["first-workspace-first", "first-workspace-last"])
def test_two_copies_that_both_name_their_own_workspace_are_decided_by_order(
    tmp_path, first, arrives
):
    """The workspace given first keeps its copy, whichever copy comes first (when it comes
    last it replaces the other, written already), and the manifest counts the other copy
    under rule "order", not "owner": each copy is its own workspace's."""
    fleet, a, c, theirs = both_claim_it()
    order = [a, c] if first == "a" else [c, a]
    winner, loser = order
    slow = dict.fromkeys(order, 0)
    slow[winner if arrives == "first-workspace-last" else loser] = SLOW_MS
    with (
        run_sandbox(fleet=fleet, latency_ms=slow[a]) as for_a,
        run_sandbox(fleet=fleet, latency_ms=slow[c]) as for_c,
    ):
        clients = {a: client(for_a, a), c: client(for_c, c)}
        result, caught = export_recording({t: clients[t] for t in order}, tmp_path)
    assert duplicates(result, loser) == {"dropped": 1, "decided_by": by_rule(order=1)}
    assert duplicates(result, winner) == {"dropped": 0, "decided_by": by_rule()}
    (warning,) = of_kind(caught, DuplicateDeploymentsWarning)
    assert warning.startswith("1 duplicate copy(ies)") and "1 by rule order" in warning
    assert "by rule owner" not in warning
    assert of_kind(caught, TenantMismatchWarning) == []  # each copy names its lister
    ids = read_arrow(tmp_path, "deployments", DAY, ["id"])["id"].to_pylist()
    assert ids.count(theirs["id"]) == 1
    assert row_of(tmp_path, theirs["id"], "tenant_id") == winner
    version = theirs["image_version"] if winner == a else STALE_VERSION
    assert row_of(tmp_path, theirs["id"], "image_version") == version
    assert result.records == len(fleet.deployments)


def by_hand(tenant, records, size=5):
    """`records` as the pages workspace `tenant` would list them, `size` a page."""
    raw = [msgspec.Raw(orjson.dumps(r)) for r in records]
    return [
        Page(raw[i : i + size], source=f"page offset={i}", first_index=i, tenant_id=tenant)
        for i in range(0, len(raw), size)
    ]


@pytest.mark.filterwarnings("ignore::dims._errors.TenantMismatchWarning")
def test_every_copy_is_written_and_the_publish_keeps_the_winners_of_every_row_group(tmp_path):
    """The same rule on pages given by hand, in the order that makes A's copy come last,
    written in small row groups: every copy is written, several row groups apart, and the
    publish keeps the winner's rows in every table (a child row with its own copy) and
    counts the others once."""
    o = overlapping(SEED)
    records, tenant_of = o.expected([o.c, o.a])
    listed = {
        o.c: [*o.own(o.c), *o.fleet.also_listed[o.c]],
        o.a: [*o.own(o.a), *o.fleet.also_listed[o.a]],
    }
    pages = [*by_hand(o.c, listed[o.c]), *by_hand(o.a, listed[o.a])]  # C's first: A's late
    with pytest.warns(DuplicateDeploymentsWarning, match="3 duplicate"):
        result = export_snapshot(
            pages,
            tmp_path,
            snapshot_date=DAY,
            row_group_records=10,
            workspaces=[Workspace(o.c), Workspace(o.a)],
        )
    assert_each_once(tmp_path, DAY, records, tenant_of)
    assert duplicates(result, o.c) == {"dropped": 1, "decided_by": by_rule(owner=1)}
    assert duplicates(result, o.a) == {"dropped": 2, "decided_by": by_rule(order=2)}
    assert result.records == len(records)
    files = sorted(tmp_path.glob(f"*/snapshot_date={DAY}/*.parquet"))
    assert len(files) == len(TABLE_NAMES)
    for path in files:  # rewritten, still this export's files, with no column of the work
        found = pq.read_metadata(path).metadata
        assert found[b"dims.export_id"] == result.manifest.export_id.encode(), path
        assert found[b"dims.schema_version"] == str(SCHEMA_VERSION).encode(), path
        assert pq.read_schema(path).names == read_arrow(tmp_path, path.parent.parent.name,
                                                        DAY).schema.names  # fmt: skip
        assert not any(name.startswith("__") for name in pq.read_schema(path).names), path


def test_a_workspace_listing_records_without_tenant_id_tags_them_with_its_own(tmp_path):
    fleet = generate_fleet(40, seed=SEED, tenants=2, embed_deployment_type=True)
    a, b = fleet.tenant_ids()
    untagged = []
    for record in fleet.deployments:
        if record["tenant_id"] == a:
            bare = copy.deepcopy(record)
            del bare["tenant_id"]
            untagged.append(bare)
    fleet.deployments[:] = [r for r in fleet.deployments if r["tenant_id"] != a]
    fleet.list_also(a, untagged)  # A lists them; they name no workspace
    with run_sandbox(fleet=fleet) as sandbox:
        result, caught = export_recording({t: client(sandbox, t) for t in (a, b)}, tmp_path)
    tenants = {r["id"]: a for r in untagged} | {
        r["id"]: b for r in fleet.deployments if r["tenant_id"] == b
    }
    for table in TABLE_NAMES:
        found = read_arrow(tmp_path, table, DAY)
        key = "id" if table == "deployments" else "deployment_id"
        if key in found.column_names:
            rows = zip(found[key].to_pylist(), found["tenant_id"].to_pylist(), strict=True)
            assert all(tenant == tenants[i] for i, tenant in rows), table
    assert result.manifest.workspaces[a].deployments == len(untagged) > 0
    assert result.manifest.fetch.workspaces[a].tenant_id_elsewhere == 0
    assert not of_kind(caught, TenantMismatchWarning) and not of_kind(
        caught, DuplicateDeploymentsWarning
    )


def test_a_deployment_moved_from_b_to_a_replaces_bs_row_and_bs_other_rows_stay(tmp_path):
    fleet = generate_fleet(60, seed=SEED, tenants=2, embed_deployment_type=True)
    a, b = fleet.tenant_ids()
    with run_sandbox(fleet=fleet) as sandbox:
        export_recording({b: client(sandbox, b)}, tmp_path)
    before = read_arrow(tmp_path, "deployments", DAY)
    moved = next(r for r in fleet.deployments if r["tenant_id"] == b)
    moved["tenant_id"] = a  # the service now lists it under A only
    with run_sandbox(fleet=fleet) as sandbox:
        result, caught = export_recording({a: client(sandbox, a)}, tmp_path)
    records = fleet.deployments
    assert_each_once(tmp_path, DAY, records, {r["id"]: r["tenant_id"] for r in records})
    day = read_arrow(tmp_path, "deployments", DAY)
    b_rows = before.filter(pc.not_equal(before["id"], moved["id"]))
    kept = day.filter(pc.equal(day["tenant_id"], b))
    assert kept.sort_by("id").equals(b_rows.sort_by("id"))  # B's other rows, untouched
    assert result.manifest.workspaces[b].status == "carried"
    assert result.manifest.workspaces[a].deployments == sum(r["tenant_id"] == a for r in records)
    assert not of_kind(caught, DuplicateDeploymentsWarning)


def test_a_stale_copy_never_replaces_the_row_of_the_workspace_it_names(tmp_path):
    """A lists a stale copy of one of B's deployments (naming B). Exported first, A's copy
    is the day's only one, under B; B's own export replaces it; A exported again does not
    bring it back: the day's row is B's, and A's copy is counted (rule "day")."""
    fleet = generate_fleet(60, seed=SEED, tenants=2, embed_deployment_type=True)
    a, b = fleet.tenant_ids()
    theirs = next(r for r in fleet.deployments if r["tenant_id"] == b)
    stale = copy.deepcopy(theirs)
    stale["image_version"] = STALE_VERSION
    fleet.list_also(a, [stale])
    expected = {r["id"]: r["tenant_id"] for r in fleet.deployments}
    with run_sandbox(fleet=fleet) as sandbox:
        first, _ = export_recording({a: client(sandbox, a)}, tmp_path)
        assert row_of(tmp_path, theirs["id"], "image_version") == STALE_VERSION
        assert row_of(tmp_path, theirs["id"], "tenant_id") == b
        export_recording({b: client(sandbox, b)}, tmp_path)
        assert row_of(tmp_path, theirs["id"], "image_version") == theirs["image_version"]
        b_day = read_arrow(tmp_path, "deployments", DAY).filter(pc.field("tenant_id") == b)
        result, caught = export_recording({a: client(sandbox, a)}, tmp_path)
    assert_each_once(tmp_path, DAY, fleet.deployments, expected)
    day = read_arrow(tmp_path, "deployments", DAY)
    assert day.filter(pc.field("tenant_id") == b).sort_by("id").equals(b_day.sort_by("id"))
    assert duplicates(result, a) == {"dropped": 1, "decided_by": by_rule(day=1)}
    assert duplicates(first, a)["dropped"] == 0  # the first time, the day had no other
    # dropped, so not "kept under their own tenant_id"
    assert result.manifest.fetch.workspaces[a].tenant_id_elsewhere == 0
    assert not of_kind(caught, TenantMismatchWarning)
    (warning,) = of_kind(caught, DuplicateDeploymentsWarning)
    assert "1 by rule day" in warning


def test_an_export_of_the_whole_key_then_of_one_workspace_keeps_the_unattributed_rows(
    tmp_path,
):
    """Without --tenant-id, providers and repositories are nobody's (tenant_id null); a
    later export of workspace A the same day replaces A's deployments and keeps them."""
    fleet = generate_fleet(60, seed=SEED, tenants=2, embed_deployment_type=True)
    a = fleet.tenant_ids()[0]
    with run_sandbox(fleet=fleet) as sandbox:
        take_snapshot(
            connect(sandbox.base_url, retry=RetryPolicy.none()), tmp_path, snapshot_date=DAY
        )
        whole = {
            name: read_arrow(tmp_path, name, DAY) for name in ("oauth_providers", "repositories")
        }
        export_recording({a: client(sandbox, a)}, tmp_path)
    records = fleet.deployments
    assert_each_once(tmp_path, DAY, records, {r["id"]: r["tenant_id"] for r in records})
    for name, first in whole.items():
        assert first.num_rows and first["tenant_id"].null_count == first.num_rows
        now = read_arrow(tmp_path, name, DAY)
        nobodys = now.filter(pc.is_null(now["tenant_id"]))
        assert nobodys.sort_by("id").equals(first.sort_by("id")), name  # kept as they were
        assert set(now["tenant_id"].drop_null().to_pylist()) == {a}, name


def test_a_failed_workspace_stays_failed_after_a_later_export_of_another(tmp_path):
    fleet = generate_fleet(60, seed=SEED, tenants=2, embed_deployment_type=True)
    a, b = fleet.tenant_ids()
    faults = Faults(fail_tenant=b, fail_tenant_status=503)
    with run_sandbox(fleet=fleet, faults=faults) as sandbox:
        export_recording({t: client(sandbox, t) for t in (a, b)}, tmp_path, allow_partial=True)
    with run_sandbox(fleet=fleet) as sandbox:
        result, _ = export_recording({a: client(sandbox, a)}, tmp_path)
    sections = result.manifest.to_dict()["workspaces"]
    assert sections[a]["status"] == "exported"
    assert sections[b]["status"] == "failed" and "503" in sections[b]["error"]
    summary = result.summary().splitlines()
    assert summary[0].startswith("PARTIAL: 1 workspace(s) failed") and b in summary[0]
    assert any(line.strip().startswith(f"workspace {b}: FAILED") for line in summary)


@pytest.mark.filterwarnings("ignore::dims._errors.TenantMismatchWarning")
def test_a_listing_of_every_workspace_paged_first_loses_every_copy_its_owner_lists(
    tmp_path, monkeypatch
):
    """C's listing holds every workspace's deployments and comes first: every one of A's
    copies beats C's (A owns them), many batches after C's was written; the day is the
    fleet, once each, A's copies in the place they were listed."""
    monkeypatch.setattr("dims._snapshot.BATCH_RECORDS", 7)
    fleet = generate_fleet(60, seed=SEED, tenants=3, embed_deployment_type=True)
    a, _, c = fleet.tenant_ids()
    in_a = [r for r in fleet.deployments if r["tenant_id"] == a]
    stream = [*by_hand(c, fleet.deployments, 10), *by_hand(a, in_a, 10)]
    with pytest.warns(DuplicateDeploymentsWarning, match=f"{len(in_a)} by rule owner"):
        result = export_snapshot(
            stream, tmp_path, snapshot_date=DAY, workspaces=[Workspace(c), Workspace(a)]
        )
    records = fleet.deployments
    assert_each_once(tmp_path, DAY, records, {r["id"]: r["tenant_id"] for r in records})
    written = read_arrow(tmp_path, "deployments", DAY, ["id"])["id"].to_pylist()
    assert written[-len(in_a) :] == [r["id"] for r in in_a]  # A's, listed last, in their order
    assert duplicates(result, c) == {"dropped": len(in_a), "decided_by": by_rule(owner=len(in_a))}
    assert result.records == len(records) and result.rejected == 0
