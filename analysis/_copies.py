"""Which copy of a deployment a day keeps, when several workspaces list it: decided once.

The listings of several workspaces may overlap: a workspace may also list another's
deployment (the service's scoping is its own), or one id may come from two workspaces, one
copy stale. A capacity total that counts a deployment twice is the worst error a capacity
tool can make, so a day holds an id once. Every copy is carried to this one decision with
the workspace that listed it (`LISTED_BY`, a column of the work tables only); nothing
before it drops a copy and nothing after it takes one back. The copies of an id are ranked,
as dlt ranks at load (`ROW_NUMBER() OVER (PARTITION BY id ORDER BY rank)`):

1. rule "day": the day's published row of a workspace this export did not fetch stays over
   a new copy that names such a workspace too (another workspace's view of a deployment
   that is not its own; the day's row is its workspace's, not this export's to replace);
   a new copy that names an exported workspace replaces it (a deployment that moved);
2. rule "owner": the copy listed by the workspace its own `tenant_id` names;
3. rule "order": else the copy of the workspace given first (`--tenant-id A --tenant-id C`:
   A's), which is also how two copies that both name their own workspace are decided.

A copy whose lister is not one of `order` (a source without workspaces) is not judged: it is
kept. A kept copy whose tenant_id names a workspace that failed is not kept either (that
workspace publishes nothing), and the day's row of it stays. `rank` is pure (Arrow in,
masks and counts out), so the export's publish, the in-memory tables and the SDK's stream
all apply the same rule (`rank_key`: one copy's rank, for a stream that judges as it goes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["LISTED_BY", "RULES", "Keep", "Ranked", "rank", "rank_key"]

#: The column of the work tables that names the workspace whose listing returned the row
#: (never written to the dataset: the writer keeps it aside).
LISTED_BY = "__dims_listed_by"
#: The rules that decide between copies, as the manifest names them.
RULES = ("owner", "order", "day")


@dataclass(frozen=True)
class Ranked:
    """The decision for every copy: which stay, and what was dropped, per workspace."""

    #: One per new copy (`rank`'s `copies`, in their order): whether the day keeps it.
    kept: pa.Array
    #: One per published row of the day (`rank`'s `day`): whether it stays.
    day_kept: pa.Array
    #: Per lister: its copies dropped for another copy, by rule (every rule named).
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per lister: copies kept whose own tenant_id names another workspace.
    elsewhere: dict[str, int] = field(default_factory=dict)

    @property
    def read_twice(self) -> int:
        """Copies read that lost to another new copy (not to the day's row): the records
        of the export they are not."""
        return sum(by_rule["owner"] + by_rule["order"] for by_rule in self.dropped.values())

    @property
    def every_copy_kept(self) -> bool:
        return bool(pc.all(self.kept).as_py() is not False)


def rank_key(tenant: str | None, lister: str, order: Sequence[str]) -> int:
    """A new copy's rank among the copies of its id (lower wins): its lister's place in
    `order`, after every owner's copy unless it is the owner's (rules "owner", "order")."""
    index = list(order).index(lister)
    return index if tenant == lister else len(order) + index


def rank(
    copies: pa.Table,
    order: Sequence[str],
    exported: Collection[str] | None = None,
    day: pa.Table | None = None,
) -> Ranked:
    """Rank `copies` (columns `id`, `tenant_id`, `LISTED_BY`: every new copy of the
    deployments, any order) listed by the workspaces `order`, against `day` (`id`,
    `tenant_id`: the day's published deployments, if any). `exported`: the workspaces whose
    fetch worked (default: all of `order`); the others failed."""
    worked = list(order if exported is None else exported)
    failed = [t for t in order if t not in set(worked)]
    ids = copies["id"].combine_chunks()
    tenants = copies["tenant_id"].combine_chunks().cast(pa.string())
    listers = copies[LISTED_BY].combine_chunks().cast(pa.string())
    tenants = pc.coalesce(tenants, listers)  # one naming none is its lister's (the tables')
    keys = _keys(tenants, listers, order)
    first, beaten_by = _first_of_each_id(ids, keys)
    rules = _rules(keys, beaten_by, len(order))
    kept = pc.and_not(first, _in(tenants, failed))  # a failed workspace publishes nothing
    day_kept = pa.array([], pa.bool_())
    if day is not None:
        kept, rules, day_kept = _against_day(ids, tenants, kept, rules, day, worked)
    dropped = {t: dict.fromkeys(RULES, 0) for t in order}
    for lister, rule in zip(listers.to_pylist(), rules.to_pylist(), strict=True):
        if rule is not None and lister in dropped:
            dropped[lister][rule] += 1
    judged = pc.is_valid(keys)
    named_other = pc.and_(judged, pc.not_equal(tenants, listers))
    survived = pc.and_(pc.is_null(rules), pc.fill_null(named_other, False))
    elsewhere = Counter(listers.filter(survived).to_pylist())
    return Ranked(kept, day_kept, dropped, {t: elsewhere.get(t, 0) for t in order})


def _keys(tenants: pa.Array, listers: pa.Array, order: Sequence[str]) -> pa.Array:
    """Each copy's `rank_key` (null: its lister is none of `order`, so it is not judged)."""
    index = pc.index_in(listers, value_set=pa.array(list(order), pa.string()))
    owner = pc.fill_null(pc.equal(tenants, listers), False)
    return pc.if_else(owner, index, pc.add(index, len(order))).cast(pa.int64())


def _first_of_each_id(ids: pa.Array, keys: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Whether each copy ranks first among the judged copies of its id (the unjudged, and
    those without an id, always do), and the winning rank of its id (null for those)."""
    n = len(ids)
    judged = pc.and_(pc.is_valid(keys), pc.is_valid(ids)).to_numpy(zero_copy_only=False)
    where = np.flatnonzero(judged)
    first = np.ones(n, dtype=bool)
    best = np.full(n, -1, dtype=np.int64)
    if len(where):
        table = pa.table({"id": ids.take(where), "key": keys.take(where), "at": where})
        order = pc.sort_indices(table, [("id", "ascending"), ("key", "ascending")])
        order = order.to_numpy()
        sorted_ids = table["id"].take(order).combine_chunks()
        starts = np.ones(len(order), dtype=bool)
        if len(order) > 1:
            same = pc.equal(sorted_ids.slice(1), sorted_ids.slice(0, len(order) - 1))
            starts[1:] = ~same.to_numpy(zero_copy_only=False)
        rows = table["at"].to_numpy()[order]
        sorted_keys = table["key"].to_numpy()[order]
        group = np.cumsum(starts) - 1
        first[rows] = starts
        best[rows] = sorted_keys[starts][group]
    return pa.array(first), pa.array(best, mask=~judged)


def _rules(keys: pa.Array, best: pa.Array, workspaces: int) -> pa.Array:
    """The rule that dropped each copy (null: kept), against the winning copy of its id."""
    lost = pc.fill_null(pc.greater(keys, best), False)
    owner = pc.and_(pc.less(best, workspaces), pc.greater_equal(keys, workspaces))
    rule = pc.if_else(pc.fill_null(owner, False), "owner", "order")
    return pc.if_else(lost, rule, pa.scalar(None, pa.string()))


def _against_day(
    ids: pa.Array,
    tenants: pa.Array,
    kept: pa.Array,
    rules: pa.Array,
    day: pa.Table,
    exported: list[str],
) -> tuple[pa.Array, pa.Array, pa.Array]:
    """Rule "day": the new copies kept, against the day's rows of workspaces not exported
    now. Each new copy's keep and rule, and which of the day's rows stay."""
    day_ids = day["id"].combine_chunks()
    theirs = pc.invert(_in(day["tenant_id"].combine_chunks(), exported))
    held = day_ids.filter(theirs)  # the day's rows of workspaces not exported now
    foreign = pc.invert(_in(tenants, exported))
    yields = pc.and_(kept, pc.and_(foreign, pc.is_in(ids, value_set=held)))
    yields = pc.fill_null(yields, False)
    kept = pc.and_not(kept, yields)
    rules = pc.if_else(yields, "day", rules)
    replaced = pc.is_in(day_ids, value_set=ids.filter(kept))
    return kept, rules, pc.and_not(theirs, replaced)


class Keep:
    """Which rows of every table `rank` keeps, a run of rows at a time: a deployment's as
    `kept` says, a child row with its deployment's copy (the same id, listed by the same
    workspace), a row of another table unless its tenant_id names a workspace that failed.
    `ids` and `listed` (`LISTED_BY` of every table) are the tables' whole columns."""

    def __init__(
        self,
        ids: pa.ChunkedArray,
        listed: Mapping[str, pa.ChunkedArray],
        kept: pa.Array,
        failed: Collection[str] = (),
    ) -> None:
        self.listed = listed
        self.kept = kept
        self.failed = failed
        #: Per workspace that listed kept copies (None: not known): those copies' ids.
        self.ids: dict[str | None, pa.Array] = {}
        listers = listed["deployments"].filter(kept)
        ids = ids.filter(kept)
        for lister in pc.unique(listers).to_pylist():
            mine = pc.fill_null(_is(listers, lister), False)
            self.ids[lister] = pc.unique(ids.filter(mine).combine_chunks())

    def rows(self, name: str, group: pa.Table, at: int) -> pa.Array:
        """A row group's mask (`at`: its first row's place in the table's file)."""
        if name == "deployments":
            return self.kept.slice(at, group.num_rows)
        if "deployment_id" not in group.column_names:  # kept unless a failed workspace's
            return pc.invert(_in(group["tenant_id"].combine_chunks(), self.failed))
        listers = self.listed[name].slice(at, group.num_rows)
        mask = pa.array(np.zeros(group.num_rows, dtype=bool))
        for lister, ids in self.ids.items():
            found = pc.and_(_is(listers, lister), pc.is_in(group["deployment_id"], value_set=ids))
            mask = pc.or_(mask, pc.fill_null(found, False))
        return mask


def _is(listers: pa.ChunkedArray, lister: str | None) -> pa.ChunkedArray:
    return pc.is_null(listers) if lister is None else pc.equal(listers, lister)


def _in(values: pa.Array, tenants: Collection[str]) -> pa.Array:
    """Whether each value is one of `tenants` (null: not one)."""
    found = pc.is_in(values, value_set=pa.array(list(tenants), pa.string()))
    return pc.fill_null(found, False)
