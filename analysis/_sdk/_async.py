"""`AsyncClient` and its resources: the twin of `_sync`, the same calls awaited.

Listings are the fetch layer's async ones (`aiter_pages`), on the event loop. `to_arrow()`,
`to_pandas()` and `take_snapshot()` run the export's fetch and reading in a worker thread
(`asyncio.to_thread`), so the loop stays free while records are read into tables.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack

from dims_client.models import Deployment, DeploymentPage, OAuthProvider, Repository

from .. import _fetch as fetch
from .._connection import DimsClient
from .._errors import NotFoundError
from .._options import DeploymentFilters, Filters
from .._pages import Page
from . import _models as models
from ._base import BaseClient
from ._connections import Connections, Timeout
from ._listing import Listing, merged
from ._workspaces import Found, OneEach

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from .._options import ExportOptions
    from .._progress import Progress
    from .._snapshot import ExportResult

T = TypeVar("T")


class AsyncDeploymentListing(Listing):
    """The async twin of `DeploymentListing`: `async for deployment in listing`,
    `async for page in listing.pages()`, `await listing.to_arrow()`."""

    def __aiter__(self) -> AsyncIterator[Deployment]:
        return self._models()

    async def _models(self) -> AsyncIterator[Deployment]:
        async for record, page, index in self._found():
            yield models.deployment(record, page, index)

    def pages(self) -> AsyncIterator[Page]:
        """The listing's pages, as `DeploymentListing.pages` gives them."""
        clients = self._clients()
        if len(clients) == 1:
            ((tenant, client),) = clients.items()
            return self._tenant_pages(tenant, client)
        return self._workspace_pages(clients)

    async def _tenant_pages(self, tenant: str | None, client: DimsClient) -> AsyncIterator[Page]:
        with self.asking(tenant):
            async for page in fetch.aiter_pages(client, **self.fetch_options()):
                yield dataclasses.replace(page, tenant_id=tenant)

    async def _workspace_pages(self, clients: dict[str | None, DimsClient]) -> AsyncIterator[Page]:
        each = OneEach([t for t in clients if t is not None])
        try:
            for tenant, client in clients.items():
                assert tenant is not None
                async for page in self._tenant_pages(tenant, client):
                    for kept in each.pages(page, tenant):
                        yield kept
            for page in each.rest_pages():
                yield page
        finally:
            each.close()

    async def _found(self) -> AsyncIterator[Found]:
        clients = self._clients()
        if len(clients) == 1:
            async for page in self.pages():
                for index, record in enumerate(page.records):
                    yield record, page, index
            return
        each = OneEach([t for t in clients if t is not None])
        try:
            for tenant, client in clients.items():
                assert tenant is not None
                async for page in self._tenant_pages(tenant, client):
                    for found in each.now(page, tenant):
                        yield found
            for found in each.rest():
                yield found
        finally:
            each.close()

    async def to_arrow(self, *, include_env_values: bool = False) -> dict[str, pa.Table]:
        """`DeploymentListing.to_arrow`, fetched and read in a worker thread."""
        return await self._tables("to_arrow", include_env_values)

    async def to_pandas(self, *, include_env_values: bool = False) -> dict[str, pd.DataFrame]:
        """`to_arrow()` as DataFrames."""
        from .._tables import to_pandas

        tables = await self._tables("to_pandas", include_env_values)
        return {name: to_pandas(table) for name, table in tables.items()}

    async def _tables(self, call: str, include_env_values: bool) -> dict[str, pa.Table]:
        from .._snapshot import fetch_tables

        options = self.export_options(include_env_values)
        with self.tables_for(call):
            return await asyncio.to_thread(fetch_tables, self.source(), **options)


async def afirst_found(
    connections: Connections,
    timeout: Timeout | None,
    call: Callable[[DimsClient], Awaitable[T]],
) -> T:
    """The async twin of `_sync.first_found`."""
    missing: NotFoundError | None = None
    for tenant, client in connections.clients(timeout).items():
        with connections.asking(tenant):
            try:
                return await call(client)
            except NotFoundError as exc:
                missing = exc
    assert missing is not None, "no client to ask"
    raise missing


async def aeach_asked(
    connections: Connections,
    timeout: Timeout | None,
    call: Callable[[DimsClient], Awaitable[T]],
) -> list[T]:
    """The async twin of `_sync.each_asked`, every answer in a list."""
    answers = []
    for tenant, client in connections.clients(timeout).items():
        with connections.asking(tenant):
            answers.append(await call(client))
    return answers


class AsyncDeployments:
    """`client.deployments` of an AsyncClient."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(
        self,
        *,
        page_size: int = fetch.DEFAULT_PAGE_SIZE,
        concurrency: int = fetch.DEFAULT_CONCURRENCY,
        timeout: Timeout | None = None,
        **filters: Unpack[DeploymentFilters],
    ) -> AsyncDeploymentListing:
        """`Deployments.list`: nothing is sent until it is iterated (`async for`)."""
        return AsyncDeploymentListing(
            self._connections,
            Filters.of(filters),
            page_size=page_size,
            concurrency=concurrency,
            timeout=timeout,
        )

    @property
    def with_raw_response(self) -> AsyncDeploymentsWithRawResponse:
        return AsyncDeploymentsWithRawResponse(self._connections)


class AsyncDeploymentsWithRawResponse:
    """`client.deployments.with_raw_response` of an AsyncClient."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def list(
        self,
        *,
        page_size: int = fetch.DEFAULT_PAGE_SIZE,
        offset: int = 0,
        timeout: Timeout | None = None,
        **filters: Unpack[DeploymentFilters],
    ) -> models.APIResponse[DeploymentPage]:
        """One request: the page at `offset`, as `DeploymentsWithRawResponse.list`."""
        request = models.page_request(page_size, offset, filters)
        client = self._connections.one("deployments.with_raw_response.list()", timeout)
        return models.APIResponse(await models.asend(client, request), models.parse_page)


class AsyncProviders:
    """`client.providers` of an AsyncClient."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def list(self, *, timeout: Timeout | None = None) -> builtins.list[OAuthProvider]:
        lists = await aeach_asked(self._connections, timeout, fetch.alist_providers)
        return models.providers(merged(lists))

    async def get(self, provider_id: str, *, timeout: Timeout | None = None) -> OAuthProvider:
        record = await afirst_found(
            self._connections, timeout, lambda c: fetch.aget_provider(c, provider_id)
        )
        return models.parse_provider(record)

    @property
    def with_raw_response(self) -> AsyncProvidersWithRawResponse:
        return AsyncProvidersWithRawResponse(self._connections)


class AsyncProvidersWithRawResponse:
    """`client.providers.with_raw_response` of an AsyncClient."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def list(
        self, *, timeout: Timeout | None = None
    ) -> models.APIResponse[builtins.list[OAuthProvider]]:
        client = self._connections.one("providers.with_raw_response.list()", timeout)
        response = await models.asend(client, models.providers_request())
        return models.APIResponse(response, models.parse_providers)

    async def get(
        self, provider_id: str, *, timeout: Timeout | None = None
    ) -> models.APIResponse[OAuthProvider]:
        client = self._connections.one("providers.with_raw_response.get()", timeout)
        response = await models.asend(client, models.provider_request(provider_id))
        return models.APIResponse(response, models.parse_provider)


class AsyncRepositories:
    """`client.repositories` of an AsyncClient."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def list(
        self, integration_id: str, *, timeout: Timeout | None = None
    ) -> builtins.list[Repository]:
        records = await afirst_found(
            self._connections, timeout, lambda c: fetch.alist_repositories(c, integration_id)
        )
        return models.repositories(records, integration_id)

    @property
    def with_raw_response(self) -> AsyncRepositoriesWithRawResponse:
        return AsyncRepositoriesWithRawResponse(self._connections)


class AsyncRepositoriesWithRawResponse:
    """`client.repositories.with_raw_response` of an AsyncClient."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    async def list(
        self, integration_id: str, *, timeout: Timeout | None = None
    ) -> models.APIResponse[builtins.list[Repository]]:
        client = self._connections.one("repositories.with_raw_response.list()", timeout)
        request = fetch.repositories_request(client, integration_id)
        response = await models.asend(client, request)
        return models.APIResponse(response, models.repositories_parser(integration_id))


class AsyncClient(BaseClient):
    """The async twin of `Client`: the same arguments, resources and options, each call
    awaited (`async with AsyncClient() as client:` closes it). Make it inside the event
    loop that uses it: its connections belong to that loop."""

    deployments: AsyncDeployments
    providers: AsyncProviders
    repositories: AsyncRepositories

    def _attach(self, connections: Connections) -> None:
        self.deployments = AsyncDeployments(connections)
        self.providers = AsyncProviders(connections)
        self.repositories = AsyncRepositories(connections)

    async def take_snapshot(
        self,
        out_dir: str | Path,
        options: ExportOptions | None = None,
        filters: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        **keywords: Any,
    ) -> ExportResult:
        """`Client.take_snapshot`, in a worker thread."""
        from .._snapshot import take_snapshot

        source = self._connections.source()
        return await asyncio.to_thread(
            take_snapshot, source, out_dir, options, filters, progress=progress, **keywords
        )

    async def close(self) -> None:
        """Close the connections (a copy from `with_options` leaves them to its origin)."""
        await self._connections.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
