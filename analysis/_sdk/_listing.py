"""What a listing of deployments is, sync or async: its filters, options and clients."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .. import _spec as spec
from .._connection import DimsClient
from .._errors import ConfigurationError, WorkspacesFailed
from .._options import Filters
from ._connections import Connections, Timeout


class Listing:
    """One listing's request, checked when it is made; what is fetched is the twin's."""

    def __init__(
        self,
        connections: Connections,
        filters: Filters,
        *,
        page_size: int,
        concurrency: int,
        timeout: Timeout | None,
    ) -> None:
        low, high = spec.page_size_range()
        if isinstance(page_size, bool) or not isinstance(page_size, int):
            raise ConfigurationError(f"page_size must be a whole number, got {page_size!r}")
        if not low <= page_size <= high:
            raise ConfigurationError(f"page_size must be within {low}..{high}, got {page_size}")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigurationError(f"concurrency must be 1 or more, got {concurrency!r}")
        self._connections = connections
        self.filters = filters
        self.page_size = page_size
        self.concurrency = concurrency
        self.timeout = timeout
        connections.clients(timeout)  # a bad timeout is refused now, not when iterated

    def _clients(self) -> dict[str | None, DimsClient]:
        """Workspace -> client, in the order given (None: the one client, no workspace)."""
        return self._connections.clients(self.timeout)

    def fetch_options(self) -> dict[str, Any]:
        """The fetch layer's options and filters for one workspace's listing."""
        return {
            "page_size": self.page_size,
            "concurrency": self.concurrency,
            **self.filters.query(),
        }

    def export_options(self, include_env_values: bool) -> dict[str, Any]:
        """`snapshot.fetch_tables`' options and filters for the same listing."""
        return {**self.fetch_options(), "include_env_values": include_env_values}

    def source(self) -> DimsClient | Mapping[str, DimsClient]:
        return self._connections.source(self.timeout)

    def asking(self, tenant: str | None) -> contextlib.AbstractContextManager[None]:
        """Around one workspace's pages: an error names it (`Connections.asking`)."""
        return self._connections.asking(tenant)

    @staticmethod
    @contextlib.contextmanager
    def tables_for(call: str) -> Iterator[None]:
        """Around the tables `call` (`to_arrow`, `to_pandas`) reads in memory: a workspace
        that failed is said to have failed that call, which publishes nothing."""
        try:
            yield
        except WorkspacesFailed as failed:
            raise WorkspacesFailed(failed.workspaces, f"deployments.list().{call}()") from None

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.filters.items())
        return f"<{type(self).__name__} {shown or 'every deployment'}>"


def merged(lists: Iterable[list[Any]]) -> list[Any]:
    """The records of several workspaces' lists, in order, each `id` once (the first)."""
    out: list[Any] = []
    seen: set[Any] = set()
    for records in lists:
        for record in records:
            key = record.get("id") if isinstance(record, dict) else None
            key = key if isinstance(key, str) else None
            if key is not None and key in seen:
                continue
            if key is not None:
                seen.add(key)
            out.append(record)
    return out
