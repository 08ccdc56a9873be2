"""Each deployment once across several workspaces, for a stream that cannot take one back.

An export may write a deployment's copy and later replace it with a better one
(`dims._fetch.OneCopy`: the owner's copy wins, else the first workspace's). A stream of models
handed to the user cannot take one back, so the SDK lists the workspaces one after another
in the order given, judges every copy with the export's own `OneCopy`, and holds back the
only copies a later one can beat: those whose own tenant_id does not name the workspace
that listed them (a later workspace's copy may name its own). A copy that names its lister
is final when it arrives: only the copy of an earlier workspace that names its own could
beat it, and that one came first. So the models are the copies an export of the same
workspaces keeps, each once, and memory holds only the copies listed outside their own
workspace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from .._fetch import OneCopy
from .._pages import Page, id_and_tenant

#: A record with the page it came on and its place there (what a model's error names).
Found = tuple[Any, Page, int]


class OneEach:
    """The copies filter of workspaces listed one after another, in the order given."""

    def __init__(self, tenants: Sequence[str]) -> None:
        self.copies = OneCopy(tenants)
        #: Copies passed on by OneCopy that a later workspace's copy may still replace.
        self.held: list[tuple[str, Any, Page, int]] = []

    def now(self, page: Page, tenant: str) -> Iterator[Found]:
        """The records of `page` (listed by `tenant`) that are final, in order."""
        for kept in self.copies.kept(dataclasses.replace(page, tenant_id=tenant)):
            for index, record in enumerate(kept.records):
                record_id, owner = id_and_tenant(record)
                if record_id is not None and owner != tenant:
                    self.held.append((record_id, record, kept, index))
                else:
                    yield record, kept, index

    def rest(self) -> Iterator[Found]:
        """After every workspace: the held copies no late winner replaced, then the late
        winners (`OneCopy.late_pages`)."""
        late = list(self.copies.late_pages())
        replaced = late[0].replaces or {} if late else {}
        for record_id, record, page, index in self.held:
            if record_id not in replaced:
                yield record, page, index
        for page in late:
            for index, record in enumerate(page.records):
                yield record, page, index

    def close(self) -> None:
        self.held.clear()
        self.copies.close()
