"""Several workspaces fetched at once, as one stream of pages for one snapshot.

Each workspace has its own client (its own `X-Tenant-Id`, the connection settings of
`connect()`) and is fetched in a thread of its own by `fetch.fetch_deployments`, with the
same completeness rules and its own evidence; its pages carry its tenant_id. They share one
`fetch.RequestBudget`: `--concurrency N` stays N requests in flight in all, whatever the
number of workspaces. A bounded
queue joins them, so memory stays bounded by a few pages per workspace whatever their
sizes. Every page passes on as it came: a deployment that several workspaces list comes
once per workspace, each page naming its lister; which copy a day keeps is decided once, at
publish (`dims._copies`). A workspace that fails (401/403 for that
tenant, 5xx after retries, a paging error) stops alone: the others go on, and `outcome()`
names it with its one-line error.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dims_client import Client

from .. import _defaults as defaults
from .._connection import retry_transport
from .._errors import DimsError
from .._evidence import FetchEvidence, Workspace
from .._options import FetchLimits, Filters
from .._pages import Page
from .._progress import Progress
from . import _listings as fetch

__all__ = ["WorkspaceFetch"]

#: Pages waiting per workspace before its fetch waits for the writer.
_QUEUED_PER_WORKSPACE = 4
_PUT_POLL_S = 0.1


@dataclass
class _State:
    """What one workspace's thread found."""

    stats: fetch.FetchStats = field(default_factory=fetch.FetchStats)
    providers: list[Any] = field(default_factory=list)
    repositories: fetch.Repositories = field(default_factory=fetch.Repositories)
    error: str | None = None
    #: Anything but a DimsError (a bug, Ctrl-C's clean-up): re-raised in the caller's thread.
    crash: BaseException | None = None


class WorkspaceFetch:
    """Fetch every workspace of `clients` (tenant_id -> client) concurrently.

    `pages()` yields their pages as they come (each with `Page.tenant_id`); once it is
    exhausted, `outcome()` gives each workspace's providers, repositories, evidence or error.
    Closing the `pages()` iterator early stops every fetch.
    """

    def __init__(
        self,
        clients: Mapping[str, Client],
        *,
        concurrency: int = defaults.CONCURRENCY,
        page_size: int = defaults.PAGE_SIZE,
        limits: FetchLimits | None = None,
        progress: Progress | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> None:
        self.clients = dict(clients)
        self.filters = Filters.of(filters)
        self.options: dict[str, Any] = {
            "page_size": page_size,
            "concurrency": concurrency,
            "limits": limits,
            "progress": progress,
            **self.filters.query(),
        }
        self.concurrency = concurrency
        self.budget = fetch.RequestBudget(concurrency)  # shared by every workspace
        self.states = {tenant: _State() for tenant in self.clients}
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(
            _QUEUED_PER_WORKSPACE * max(1, len(self.clients))
        )
        self._stop = threading.Event()

    def pages(self) -> Iterator[Page]:
        """Every workspace's pages, interleaved as they arrive."""
        fetched = self._fetched()
        try:
            yield from fetched
        finally:
            fetched.close()  # stops every fetch, now rather than when collected

    def _fetched(self) -> Generator[Page, None, None]:
        """Every workspace's pages as they arrive."""
        threads = [
            threading.Thread(
                target=self._run, args=(tenant,), name=f"dims-workspace-{n}", daemon=True
            )
            for n, tenant in enumerate(self.clients)
        ]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                kind, value = self._queue.get()
                if kind == "page":
                    yield value
                    continue
                running -= 1
                crash = self.states[value].crash
                if crash is not None:
                    raise crash
        finally:
            # Stopped early (an error, Ctrl-C) or done: the threads see it at their next page
            # and close their fetch; none is waited for, so a stalled request cannot hold
            # up the caller's clean-up (they are daemons, bounded by the request deadline).
            self._stop.set()

    def outcome(self) -> list[Workspace]:
        """Each workspace's part of the snapshot, in the order asked for."""
        return [
            Workspace(
                tenant_id=tenant,
                providers=state.providers,
                repositories=state.repositories.by_integration,
                evidence=self._evidence(state),
                error=state.error,
            )
            for tenant, state in self.states.items()
        ]

    def _evidence(self, state: _State) -> FetchEvidence:
        """What was asked and what came back in one workspace (the single export's shape)."""
        return fetch.export_evidence(self.filters, state.stats, state.providers, state.repositories)

    def _run(self, tenant: str) -> None:
        """One workspace, start to end, in its own thread; never raises."""
        client, state = self.clients[tenant], self.states[tenant]
        progress = self.options["progress"]
        if progress is not None:
            retry_transport(client).on_retry = progress.retry
        repositories = fetch.RepositoryFetcher(client, self.concurrency, budget=self.budget)
        try:
            state.providers = fetch.list_providers(client)
            pages = fetch.fetch_deployments(
                client,
                stats=state.stats,
                raw=True,
                on_integration=repositories.add,
                budget=self.budget,
                **self.options,
            )
            try:
                for page in pages:
                    if not self._put(("page", dataclasses.replace(page, tenant_id=tenant))):
                        return
            finally:
                getattr(pages, "close", lambda: None)()  # its requests in flight are cancelled
            state.repositories = repositories.result()
        except DimsError as exc:
            state.error = str(exc)
        except BaseException as exc:
            state.crash = exc
        finally:
            repositories.close()
            self._put(("done", tenant))

    def _put(self, item: tuple[str, Any]) -> bool:
        """Queue `item` unless the caller stopped reading; False when it did."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_PUT_POLL_S)
                return True
            except queue.Full:
                continue
        return False
