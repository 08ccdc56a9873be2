"""The one decision of which copy of a deployment a day keeps (`dims._copies.rank`), fed
the workspace cases directly: owner against non-owner, order, the same day exported twice,
a re-export of a day, a late better copy, a failed workspace; and the SDK's streaming filter
(`sdk._workspaces.OneEach`, which ranks by the same key as the copies come) keeps what the
ranking keeps, whatever the copies."""

from __future__ import annotations

import random

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from dims._copies import LISTED_BY, RULES, Keep, rank
from dims._pages import Page
from dims._sdk._workspaces import OneEach

A, B, C = "ws-a", "ws-b", "ws-c"


def copies(*rows: tuple[str, str | None, str | None]) -> pa.Table:
    """New copies as (id, tenant_id, listed_by)."""
    ids, tenants, listers = zip(*rows, strict=True) if rows else ((), (), ())
    return pa.table(
        {
            "id": pa.array(ids, pa.string()),
            "tenant_id": pa.array(tenants, pa.string()),
            LISTED_BY: pa.array(listers, pa.string()),
        }
    )


def day(*rows: tuple[str, str | None]) -> pa.Table:
    ids, tenants = zip(*rows, strict=True)
    return pa.table({"id": pa.array(ids, pa.string()), "tenant_id": pa.array(tenants, pa.string())})


def rules(**counts: int) -> dict[str, int]:
    return {rule: counts.get(rule, 0) for rule in RULES}


def test_the_owners_copy_wins_over_an_earlier_workspaces_whichever_comes_first():
    for rows in [(("d1", A, C), ("d1", A, A)), (("d1", A, A), ("d1", A, C))]:
        ranked = rank(copies(*rows), [C, A])
        kept = [
            lister for (_, _, lister), k in zip(rows, ranked.kept.to_pylist(), strict=True) if k
        ]
        assert kept == [A]
        assert ranked.dropped == {C: rules(owner=1), A: rules()}
        assert ranked.elsewhere == {C: 0, A: 0}


def test_copies_no_exported_workspace_owns_go_to_the_workspace_given_first():
    rows = [("d1", B, C), ("d1", B, A)]
    for order, winner in [([A, C], A), ([C, A], C)]:
        ranked = rank(copies(*rows), order)
        assert [r[2] for r, k in zip(rows, ranked.kept.to_pylist(), strict=True) if k] == [winner]
        loser = C if winner == A else A
        assert ranked.dropped[loser] == rules(order=1)
        assert ranked.elsewhere[winner] == 1  # kept, naming B
        assert ranked.read_twice == 1


def test_two_copies_that_each_name_their_lister_are_decided_by_order():
    ranked = rank(copies(("d1", C, C), ("d1", A, A)), [A, C])
    assert ranked.kept.to_pylist() == [False, True]
    assert ranked.dropped == {A: rules(), C: rules(order=1)}


def test_a_late_better_copy_wins_wherever_it_comes_in_the_stream():
    """The same copies in any order: the same winner per id and the same counts."""
    rows = [("d1", A, C), ("d2", B, C), ("d1", A, A), ("d2", B, A), ("d3", None, A)]
    expected = None
    for seed in range(6):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        ranked = rank(copies(*shuffled), [C, A])
        kept = sorted(r for r, k in zip(shuffled, ranked.kept.to_pylist(), strict=True) if k)
        found = (kept, ranked.dropped, ranked.elsewhere)
        assert expected is None or found == expected
        expected = found
    assert expected is not None
    assert expected[0] == [("d1", A, A), ("d2", B, C), ("d3", None, A)]
    assert expected[1] == {C: rules(owner=1), A: rules(order=1)}


def test_a_stale_copy_never_replaces_the_day_row_of_the_workspace_it_names():
    """Rule "day": A lists a copy naming B; the day already has B's own row, and B is not
    exported now: B's row stays, A's copy is dropped and counted."""
    ranked = rank(copies(("d1", B, A), ("d2", A, A)), [A], day=day(("d1", B), ("d2", A)))
    assert ranked.kept.to_pylist() == [False, True]
    assert ranked.day_kept.to_pylist() == [True, False]  # A's old row: replaced by A's new
    assert ranked.dropped == {A: rules(day=1)}
    assert ranked.elsewhere == {A: 0}  # dropped, so not "kept under its own tenant_id"
    assert ranked.read_twice == 0  # read, and a record of the export, but not the day's


def test_a_deployment_that_moved_replaces_the_day_row_of_its_old_workspace():
    ranked = rank(copies(("d1", A, A)), [A], day=day(("d1", B), ("d2", B)))
    assert ranked.kept.to_pylist() == [True]
    assert ranked.day_kept.to_pylist() == [False, True]
    assert ranked.dropped == {A: rules()}


def test_the_same_day_exported_twice_replaces_the_exported_workspaces_rows_only():
    """A re-export of A: every day row of A goes (the new export is A's whole truth, a
    deployment A no longer lists included), B's rows stay."""
    old = day(("a1", A), ("a-gone", A), ("b1", B))
    ranked = rank(copies(("a1", A, A)), [A], day=old)
    assert ranked.kept.to_pylist() == [True]
    assert ranked.day_kept.to_pylist() == [False, False, True]


def test_a_failed_workspace_publishes_nothing_and_its_day_rows_stay():
    rows = [("d1", B, B), ("d2", A, A), ("d3", B, A)]
    ranked = rank(copies(*rows), [A, B], exported=[A], day=day(("d1", B), ("d9", B)))
    assert ranked.kept.to_pylist() == [False, True, False]
    assert ranked.day_kept.to_pylist() == [True, True]


def test_copies_of_a_source_without_workspaces_are_not_judged():
    ranked = rank(copies(("d1", None, None), ("d2", A, None)), [A])
    assert ranked.kept.to_pylist() == [True, True] and ranked.every_copy_kept


def test_a_child_row_goes_with_its_own_copy():
    """Two copies of d1 in one table, from C and from A: the child rows of A's copy stay,
    C's go; a table without a deployment column loses only a failed workspace's rows."""
    deployments = copies(("d1", A, C), ("d1", A, A), ("d2", C, C))
    ranked = rank(deployments, [C, A], exported=[C, A])
    listed = {
        "deployments": deployments[LISTED_BY],
        "deployment_labels": pa.chunked_array([pa.array([C, A, A, C], pa.string())]),
        "oauth_providers": pa.chunked_array([pa.array([C, A], pa.string())]),
    }
    keep = Keep(deployments["id"], listed, ranked.kept, failed=[C])
    labels = pa.table({"deployment_id": ["d1", "d1", "d1", "d2"], "tenant_id": [A, A, A, C]})
    assert keep.rows("deployment_labels", labels, 0).to_pylist() == [False, True, True, True]
    providers = pa.table({"id": ["p1", "p2"], "tenant_id": [C, A]})
    assert keep.rows("oauth_providers", providers, 0).to_pylist() == [False, True]


WORKSPACES = [A, B, C]
record_ids = st.sampled_from(["d1", "d2", "d3"])
tenants = st.sampled_from([A, B, C, "ws-x", None])


@settings(max_examples=200, deadline=None)
@given(
    order=st.permutations(WORKSPACES),
    listed=st.lists(st.tuples(record_ids, tenants, st.sampled_from(WORKSPACES)), max_size=12),
)
def test_the_sdk_stream_keeps_the_copies_the_ranking_keeps(order, listed):
    """The SDK lists workspaces one after another and cannot take back a model: by the
    same rank key it yields, per id, the copy `rank` keeps (each workspace lists an id
    once, as its own fetch does)."""
    once = {}
    for record_id, tenant, lister in listed:
        once.setdefault((record_id, lister), (record_id, tenant, lister))
    rows = sorted(once.values(), key=lambda row: order.index(row[2]))  # workspace by workspace
    ranked = rank(copies(*rows), order)
    # the tables name the lister where the record names no workspace
    expected = sorted(r for r, k in zip(rows, ranked.kept.to_pylist(), strict=True) if k)
    each = OneEach(order)
    streamed = []
    for record_id, tenant, lister in rows:
        record = {"id": record_id} | ({"tenant_id": tenant} if tenant is not None else {})
        for found, _, _ in each.now(Page([record], source="by hand"), lister):
            streamed.append((found["id"], found.get("tenant_id"), lister))
    for found, page, _ in each.rest():
        streamed.append((found["id"], found.get("tenant_id"), page.tenant_id))
    assert sorted(streamed) == expected
