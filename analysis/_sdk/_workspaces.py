"""Each deployment once across several workspaces, for a stream that cannot take one back.

An export writes every copy a workspace lists and decides at publish which one the day
keeps (`dims._copies.rank`: the owner's copy wins, else the first workspace's). A stream
of models handed to the user cannot wait for the end nor take one back, so the SDK lists the
workspaces one after another in the order given and ranks every copy by the export's own
key (`dims._copies.rank_key`) as it comes: a copy that names its lister (the owner's) is
final when it arrives, since only the owner's copy of an earlier workspace could beat it,
and that one came first; a copy listed outside its own workspace is held, as a later
workspace's owner copy may beat it, and passed on after the last workspace if none did. So
the models are the copies an export of the same workspaces keeps, each once, and memory
holds only the copies listed outside their own workspace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from .._copies import rank_key
from .._pages import Page, id_and_tenant

#: A record with the page it came on and its place there (what a model's error names).
Found = tuple[Any, Page, int]


class OneEach:
    """The copies filter of workspaces listed one after another, in the order given."""

    def __init__(self, tenants: Sequence[str]) -> None:
        self.order = list(tenants)
        #: The best rank seen per id (`rank_key`: lower wins).
        self.best: dict[str, int] = {}
        #: Copies listed outside their own workspace, the best of each id so far: each on
        #: a page of its own.
        self.held: dict[str, Page] = {}

    def now(self, page: Page, tenant: str) -> Iterator[Found]:
        """The records of `page` (listed by `tenant`) that are final, in order."""
        for kept in self.pages(page, tenant):
            for index, record in enumerate(kept.records):
                yield record, kept, index

    def pages(self, page: Page, tenant: str) -> Iterator[Page]:
        """`page` (listed by `tenant`), or its runs of final copies (each with its own
        first_index, so a record still names its place in the listing)."""
        page = dataclasses.replace(page, tenant_id=tenant)
        records, start = page.records, 0
        for i, record in enumerate(records):
            if self._final(record, page, i):
                continue
            if start < i:
                yield _run(page, start, i)
            start = i + 1
        if start == 0:
            yield page
        elif start < len(records):
            yield _run(page, start, len(records))

    def _final(self, record: Any, page: Page, i: int) -> bool:
        """Whether a copy passes on now (False: beaten already, or held)."""
        record_id, own = id_and_tenant(record)
        lister = page.tenant_id
        if record_id is None or lister not in self.order:
            return True  # not judged (the tables reject a record without an id)
        # a record naming no workspace is its lister's, as the tables make it
        key = rank_key(own if own is not None else lister, lister, self.order)
        best = self.best.get(record_id)
        if best is not None and best <= key:
            return False
        self.best[record_id] = key
        if key < len(self.order):  # the owner's copy: no later workspace's copy beats it
            self.held.pop(record_id, None)
            return True
        self.held[record_id] = _run(page, i, i + 1)
        return False

    def rest(self) -> Iterator[Found]:
        """After every workspace: the held copies no later copy beat."""
        for page in self.rest_pages():
            for index, record in enumerate(page.records):
                yield record, page, index

    def rest_pages(self) -> Iterator[Page]:
        """The held copies no later copy beat, each on a page of its own."""
        held, self.held = self.held, {}
        yield from held.values()

    def close(self) -> None:
        self.held.clear()


def _run(page: Page, start: int, stop: int) -> Page:
    """Records start..stop of `page` as a page of their own."""
    records: list[Any] = page.records[start:stop]
    return dataclasses.replace(page, records=records, first_index=page.first_index + start)
