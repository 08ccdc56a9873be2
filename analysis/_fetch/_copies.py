"""Every deployment once, whichever workspaces list it: which copy of an id an export keeps.

The listings of several workspaces may overlap: a workspace may also list another's
deployment (the service's scoping is its own), or one id may come from two workspaces, one
copy stale. A capacity total that counts a deployment twice is the worst error a capacity
tool can make, so within one export an id is one row of `deployments` and its child rows
appear once. Of the copies of an id, the export keeps:

1. the copy listed by the workspace its own `tenant_id` names (the owner's: rule "owner");
2. else the copy of the workspace given first (`--tenant-id A --tenant-id C`: A's; rule
   "order"), which is also how two copies that both name their own workspace are decided;
3. a record that no exported workspace owns keeps its own tenant_id (the tables do that:
   `Flattener`), one naming none takes the workspace whose copy is kept.

`OneCopy.pages` applies this to the stream of pages without holding it: per id it keeps
the rank of the copy passed on (an int), and per workspace what it dropped. A later copy
that loses is dropped before it is read, counted for its workspace with the rule that
decided. A later copy that wins over one already passed on (whose rows may be written
already, and Parquet cannot take rows back cheaply) is held, raw, and yielded after the
last page on a page of its own that names what the late winners replace (`Page.replaces`,
every replaced id on each): the writer removes the replaced copies' rows from every table
and writes the winners'. So memory beyond
the ids is bounded by those late winners, which are rare: the owner's copy must come after
another workspace's copy of the same id, or a copy of an earlier workspace after a later
one's. Even when they are not (a workspace whose listing holds every workspace's
deployments, paged first), their raw text is spooled to a temporary file past a few MB, so
what stays in memory per late winner is its page's few fields. A workspace's own fetch
already keeps each id once; records without an id pass untouched (the tables reject them).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import msgspec

from .._pages import Page, id_and_tenant

__all__ = ["RULES", "OneCopy"]

#: The rules that decide between copies, as the manifest names them.
RULES = ("owner", "order")
#: Raw text of late winners kept in memory before it goes to a temporary file.
_SPOOL_BYTES = 8 * 1024 * 1024


class OneCopy:
    """The copies filter of one export of the workspaces `order` (as given: first wins)."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)
        self._index = {tenant: n for n, tenant in enumerate(self.order)}
        #: Rank of the copy kept so far per id: its workspace's index, plus len(order)
        #: unless it is the owner's copy. Lower wins.
        self._best: dict[str, int] = {}
        #: Late winners not yet yielded, by id, each on a page of its own.
        self._held = _Held()
        #: Ids whose passed-on copy a late winner replaces -> that copy's workspace.
        self._replaced: dict[str, str] = {}
        #: Ids whose kept copy names a workspace outside `order` -> the workspace it came from.
        self._foreign: dict[str, str] = {}
        self._dropped = {tenant: Counter[str]() for tenant in self.order}

    def pages(self, pages: Iterable[Page]) -> Iterator[Page]:
        """`pages` with every copy that loses left out, then the pages of late winners."""
        try:
            for page in pages:
                yield from self.kept(page)
            yield from self.late_pages()
        finally:
            self.close()

    # The same, pushed a page at a time (`pages` pulls an iterable; an async fetch cannot
    # hand it one): `kept` for each page, then `late_pages`, then `close`.

    def late_pages(self) -> Iterator[Page]:
        """After the last page: the late winners, each page naming every id they replace."""
        for page in self._held.pages():
            yield dataclasses.replace(page, replaces=self._replaced)

    def close(self) -> None:
        """Let go of the late winners held (their spool file)."""
        self._held.close()

    def dropped(self, tenant: str) -> dict[str, int]:
        """Copies listed by `tenant` that another workspace's copy replaced, by rule."""
        counts = self._dropped.get(tenant, Counter())
        return {rule: counts[rule] for rule in RULES}

    def foreign_ids(self, tenant: str) -> frozenset[str]:
        """Ids of the copies kept from `tenant` whose own tenant_id names a workspace that is
        not one of this export's (such a deployment stays that workspace's in the day)."""
        return frozenset(i for i, lister in self._foreign.items() if lister == tenant)

    def kept(self, page: Page) -> Iterator[Page]:
        """The page, or its runs of copies kept (each with its own first_index, so rejected
        records still name their place in the listing)."""
        index = self._index.get(page.tenant_id) if page.tenant_id is not None else None
        if index is None:  # not a workspace of this export: nothing to judge it by
            yield page
            return
        records, start = page.records, 0
        for i, record in enumerate(records):
            record_id, tenant = id_and_tenant(record)
            if record_id is None or self._passes(record_id, tenant, index, page, i):
                continue
            if start < i:
                yield _run(page, start, i)
            start = i + 1
        if start == 0:
            yield page
        elif start < len(records):
            yield _run(page, start, len(records))

    def _passes(self, record_id: str, tenant: str | None, index: int, page: Page, i: int) -> bool:
        """Judge one copy: True to pass it on now; False when dropped or held."""
        lister = self.order[index]
        rank = index if tenant == lister else len(self.order) + index
        best = self._best.get(record_id)
        if best is None:
            self._keep(record_id, rank, tenant, lister)
            return True
        if rank >= best:  # an earlier copy is better
            self._dropped[lister][_rule(best, rank, len(self.order))] += 1
            return False
        beaten = self.order[best % len(self.order)]
        self._dropped[beaten][_rule(rank, best, len(self.order))] += 1
        if record_id not in self._held:  # else the held one was never passed on
            self._replaced[record_id] = beaten
        self._held.put(record_id, _run(page, i, i + 1))
        self._keep(record_id, rank, tenant, lister)
        return False

    def _keep(self, record_id: str, rank: int, tenant: str | None, lister: str) -> None:
        self._best[record_id] = rank
        if tenant is not None and tenant not in self._index:
            self._foreign[record_id] = lister
        else:
            self._foreign.pop(record_id, None)


def _rule(winner: int, loser: int, workspaces: int) -> str:
    """Which rule decided between two ranks: the owner's copy over another, else order."""
    return "owner" if winner < workspaces <= loser else "order"


def _run(page: Page, start: int, stop: int) -> Page:
    """Records start..stop of `page` as a page of their own."""
    records: list[Any] = page.records[start:stop]
    return dataclasses.replace(page, records=records, first_index=page.first_index + start)


class _Held:
    """Late winners until the end of the stream, one record each: raw text spooled (in
    memory up to _SPOOL_BYTES, then in a temporary file), so neither it nor the response
    it was cut from stays in memory; parsed records (other sources) kept as they are."""

    def __init__(self) -> None:
        # closed by `close`, which `OneCopy.pages` calls however the stream ends
        self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115
        #: id -> its page (raw text taken out), and where the text is in the spool.
        self._pages: dict[str, tuple[Page, int, int]] = {}

    def __contains__(self, record_id: str) -> bool:
        return record_id in self._pages

    def put(self, record_id: str, page: Page) -> None:
        """Hold `page` (one record) for `record_id`, instead of any held before."""
        (record,) = page.records
        if type(record) is not msgspec.Raw:
            self._pages[record_id] = (page, -1, 0)
            return
        where = self._spool.seek(0, 2)
        size = self._spool.write(record)
        self._pages[record_id] = (dataclasses.replace(page, records=[]), where, size)

    def pages(self) -> Iterator[Page]:
        """Each held page, its raw text read back."""
        for page, where, size in self._pages.values():
            if where < 0:
                yield page
                continue
            self._spool.seek(where)
            yield dataclasses.replace(page, records=[msgspec.Raw(self._spool.read(size))])

    def close(self) -> None:
        self._pages.clear()
        self._spool.close()
