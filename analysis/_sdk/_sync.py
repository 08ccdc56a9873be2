"""`Client` and its resources: the SDK, synchronous (`_async` is its twin)."""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable, Iterator, Mapping
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


class DeploymentListing(Listing):
    """The deployments of one listing, fetched when iterated (anew each time).

    `for deployment in listing` gives the generated `Deployment` models, every page followed
    (several requests in flight), each deployment once. `pages()` gives the same as the fetch
    layer's `Page`s, raw records. `to_arrow()` and `to_pandas()` give every table of the
    dataset, in memory, as `dims export` would write them (see `snapshot.fetch_tables`).
    """

    def __iter__(self) -> Iterator[Deployment]:
        for record, page, index in self._found():
            yield models.deployment(record, page, index)

    def pages(self) -> Iterator[Page]:
        """The listing's pages (`dims.Page`: parsed JSON records, where they came from).

        Of several workspaces: each one's pages in turn (`Page.tenant_id` says whose), each
        deployment once, the copy an export keeps (`dims._copies`); a copy listed outside
        its own workspace comes after the last workspace, on a page of its own (a later
        workspace's copy might have beaten it)."""
        clients = self._clients()
        if len(clients) == 1:
            ((tenant, client),) = clients.items()
            return self._tenant_pages(tenant, client)
        return self._workspace_pages(clients)

    def _workspace_pages(self, clients: dict[str | None, DimsClient]) -> Iterator[Page]:
        each = OneEach([t for t in clients if t is not None])
        try:
            for tenant, client in clients.items():
                assert tenant is not None
                for page in self._tenant_pages(tenant, client):
                    yield from each.pages(page, tenant)
            yield from each.rest_pages()
        finally:
            each.close()

    def _tenant_pages(self, tenant: str | None, client: DimsClient) -> Iterator[Page]:
        with self.asking(tenant):
            for page in fetch.iter_pages(client, **self.fetch_options()):
                yield dataclasses.replace(page, tenant_id=tenant)

    def _found(self) -> Iterator[Found]:
        clients = self._clients()
        if len(clients) == 1:
            for page in self.pages():
                for index, record in enumerate(page.records):
                    yield record, page, index
            return
        each = OneEach([t for t in clients if t is not None])
        try:
            for tenant, client in clients.items():
                assert tenant is not None
                for page in self._tenant_pages(tenant, client):
                    yield from each.now(page, tenant)
            yield from each.rest()
        finally:
            each.close()

    def to_arrow(self, *, include_env_values: bool = False) -> dict[str, pa.Table]:
        """Every table of the dataset, by name, for this listing: what an export of it
        writes (the providers and the repositories it names included), in memory."""
        return self._tables("to_arrow", include_env_values)

    def to_pandas(self, *, include_env_values: bool = False) -> dict[str, pd.DataFrame]:
        """`to_arrow()` as DataFrames (nullable integers and booleans, as the reports read)."""
        from .._tables import to_pandas

        tables = self._tables("to_pandas", include_env_values)
        return {name: to_pandas(table) for name, table in tables.items()}

    def _tables(self, call: str, include_env_values: bool) -> dict[str, pa.Table]:
        from .._snapshot import fetch_tables

        with self.tables_for(call):
            return fetch_tables(self.source(), **self.export_options(include_env_values))


def each_asked(
    connections: Connections, timeout: Timeout | None, call: Callable[[DimsClient], T]
) -> Iterator[T]:
    """`call` on each workspace's client in turn; an error names its workspace."""
    for tenant, client in connections.clients(timeout).items():
        with connections.asking(tenant):
            yield call(client)


def first_found(
    connections: Connections, timeout: Timeout | None, call: Callable[[DimsClient], T]
) -> T:
    """`call` on each workspace's client in turn until one is not a 404 (the last 404 when
    every one is); another error names its workspace."""
    missing: NotFoundError | None = None
    for tenant, client in connections.clients(timeout).items():
        with connections.asking(tenant):
            try:
                return call(client)
            except NotFoundError as exc:
                missing = exc
    assert missing is not None, "no client to ask"
    raise missing


class Deployments:
    """`client.deployments`."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(
        self,
        *,
        page_size: int = fetch.DEFAULT_PAGE_SIZE,
        concurrency: int = fetch.DEFAULT_CONCURRENCY,
        timeout: Timeout | None = None,
        **filters: Unpack[DeploymentFilters],
    ) -> DeploymentListing:
        """Every deployment the filters select (`dims.DeploymentFilters`, the spec's
        list-deployments filters: `deployment_type="prod"`, `name_contains=…`, `status=…`,
        …), of every workspace of the client, auto-paginated. Nothing is sent until it is
        iterated; the filters and the page size are checked now, as `dims export` checks
        its options (`deployment_type="prd"` is a ConfigurationError naming the choices)."""
        return DeploymentListing(
            self._connections,
            Filters.of(filters),
            page_size=page_size,
            concurrency=concurrency,
            timeout=timeout,
        )

    @property
    def with_raw_response(self) -> DeploymentsWithRawResponse:
        """The same calls, each one request, giving its `APIResponse`."""
        return DeploymentsWithRawResponse(self._connections)


class DeploymentsWithRawResponse:
    """`client.deployments.with_raw_response`."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(
        self,
        *,
        page_size: int = fetch.DEFAULT_PAGE_SIZE,
        offset: int = 0,
        timeout: Timeout | None = None,
        **filters: Unpack[DeploymentFilters],
    ) -> models.APIResponse[DeploymentPage]:
        """One request: the page at `offset` (the first by default), not the listing. Its
        `parse()` is the generated `DeploymentPage` (`resources`, and `offset`, where the
        next page starts); one workspace only."""
        request = models.page_request(page_size, offset, filters)
        client = self._connections.one("deployments.with_raw_response.list()", timeout)
        return models.APIResponse(models.send(client, request), models.parse_page)


class Providers:
    """`client.providers`: the OAuth providers."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(self, *, timeout: Timeout | None = None) -> builtins.list[OAuthProvider]:
        """Every OAuth provider; of several workspaces, each one's in turn, each id once."""
        lists = each_asked(self._connections, timeout, fetch.list_providers)
        return models.providers(merged(lists))

    def get(self, provider_id: str, *, timeout: Timeout | None = None) -> OAuthProvider:
        """One provider by its provider_id slug (`github-local-dev`); of several workspaces,
        the first that has it."""
        record = first_found(
            self._connections, timeout, lambda c: fetch.get_provider(c, provider_id)
        )
        return models.parse_provider(record)

    @property
    def with_raw_response(self) -> ProvidersWithRawResponse:
        return ProvidersWithRawResponse(self._connections)


class ProvidersWithRawResponse:
    """`client.providers.with_raw_response`."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(
        self, *, timeout: Timeout | None = None
    ) -> models.APIResponse[builtins.list[OAuthProvider]]:
        client = self._connections.one("providers.with_raw_response.list()", timeout)
        response = models.send(client, models.providers_request())
        return models.APIResponse(response, models.parse_providers)

    def get(
        self, provider_id: str, *, timeout: Timeout | None = None
    ) -> models.APIResponse[OAuthProvider]:
        client = self._connections.one("providers.with_raw_response.get()", timeout)
        response = models.send(client, models.provider_request(provider_id))
        return models.APIResponse(response, models.parse_provider)


class Repositories:
    """`client.repositories`: the repositories reachable through a code-host integration."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(
        self, integration_id: str, *, timeout: Timeout | None = None
    ) -> builtins.list[Repository]:
        """The integration's repositories (its UUID, as a deployment's
        `source_config.integration_id` names it); of several workspaces, the first that
        knows the integration."""
        records = first_found(
            self._connections, timeout, lambda c: fetch.list_repositories(c, integration_id)
        )
        return models.repositories(records, integration_id)

    @property
    def with_raw_response(self) -> RepositoriesWithRawResponse:
        return RepositoriesWithRawResponse(self._connections)


class RepositoriesWithRawResponse:
    """`client.repositories.with_raw_response`."""

    def __init__(self, connections: Connections) -> None:
        self._connections = connections

    def list(
        self, integration_id: str, *, timeout: Timeout | None = None
    ) -> models.APIResponse[builtins.list[Repository]]:
        client = self._connections.one("repositories.with_raw_response.list()", timeout)
        response = models.send(client, fetch.repositories_request(client, integration_id))
        return models.APIResponse(response, models.repositories_parser(integration_id))


class Client(BaseClient):
    """The dims SDK: `Client(base_url=…, api_key=…, tenant_id=…)`, then its resources.

    Unset arguments come from `DIMS_BASE_URL`, `DIMS_API_KEY`, `DIMS_TENANT_ID` (one id or
    `A,B`) and `DIMS_CODE_HOST`, as `connect()` reads them; with none, the local sandbox.
    `tenant_id` may name several workspaces: every call then covers each of them.
    `timeout` bounds each connect and read (seconds, or an `httpx.Timeout`); `max_retries`
    is how often a request is retried (429 with Retry-After, 5xx, dropped connections,
    timeouts) before its typed error. Every method takes its own `timeout=` too, and
    `with_options(...)` gives a copy. Close it (`with Client() as client:`) to close its
    connections. The key is never shown: not in the repr, an error or a log.
    """

    deployments: Deployments
    providers: Providers
    repositories: Repositories

    def _attach(self, connections: Connections) -> None:
        self.deployments = Deployments(connections)
        self.providers = Providers(connections)
        self.repositories = Repositories(connections)

    def take_snapshot(
        self,
        out_dir: str | Path,
        options: ExportOptions | None = None,
        filters: Mapping[str, Any] | None = None,
        *,
        progress: Progress | None = None,
        **keywords: Any,
    ) -> ExportResult:
        """`dims export` through this client: every workspace into one snapshot under
        `out_dir` (`dims._snapshot.take_snapshot`, which takes the same options and
        filters)."""
        from .._snapshot import take_snapshot

        source = self._connections.source()
        return take_snapshot(source, out_dir, options, filters, progress=progress, **keywords)

    def close(self) -> None:
        """Close the connections (a copy from `with_options` leaves them to its origin)."""
        self._connections.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
