"""The connections an SDK client calls through, shared by `Client` and `AsyncClient`.

One generated client per workspace (`connect()`'s: the key attached safely, typed errors),
all over one `RetryTransport`, so every workspace and every copy of the client shares one
connection pool and one retry machinery (the transport's; nothing here retries).
A per-call `timeout` is a copy of those clients with that timeout, over the same transport;
`with_options(max_retries=…)` a copy over a transport that retries otherwise, still over the
same pools (`RetryTransport.with_policy`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import attrs
import httpx

from .. import _defaults as defaults
from .._connection import (
    DEFAULT_TIMEOUT,
    DimsClient,
    Given,
    RetryPolicy,
    RetryTransport,
    Settings,
    connect,
    resolve_settings,
    tenant_ids,
)
from .._errors import ConfigurationError, DimsError
from .._profiles import load_profile

#: What `timeout=` takes: seconds for each connect and read, or httpx's finer Timeout.
Timeout: TypeAlias = float | httpx.Timeout
#: What `tenant_id=` takes: one workspace, several (each may be "A,B"), or none.
TenantIds: TypeAlias = str | Sequence[str] | None


@dataclass(frozen=True)
class ClientOptions:
    """What a client was made with: its arguments, then `DIMS_*`, resolved and checked."""

    settings: Settings
    tenants: tuple[str, ...]
    timeout: httpx.Timeout
    max_retries: int
    #: Whether this client closes the connections (a copy shares its origin's).
    owner: bool = field(default=True, compare=False)

    def __repr__(self) -> str:
        """What a client shows of itself: never the key, only whether one is set."""
        key = "set" if self.settings.api_key else "unset"
        tenants: str | list[str] | None = list(self.tenants) if self.tenants else None
        if len(self.tenants) == 1:
            tenants = self.tenants[0]
        return (
            f"base_url={self.settings.base_url!r}, tenant_id={tenants!r}, api_key=<{key}>, "
            f"timeout={_seconds(self.timeout)}, max_retries={self.max_retries}"
        )


def _seconds(timeout: httpx.Timeout) -> str:
    values = {timeout.connect, timeout.read, timeout.write, timeout.pool}
    return repr(values.pop()) if len(values) == 1 else repr(timeout)


def resolve(
    *,
    base_url: str | None,
    api_key: str | None,
    tenant_id: TenantIds,
    code_host: str | None,
    timeout: Timeout | None,
    max_retries: int | None,
    allow_insecure_http: bool,
    profile: str | None = None,
) -> ClientOptions:
    """The arguments of `Client(...)`, then `DIMS_*`, then the profile, as `connect()`
    reads them, checked."""
    given = Given(
        base_url,
        api_key,
        tuple(_tenant_list(tenant_id) or ()),
        code_host,
        allow_insecure_http=allow_insecure_http,
    )
    settings = resolve_settings(given, load_profile(profile))  # once: each connection reuses it
    return ClientOptions(settings, settings.tenants, _timeout(timeout), _retries(max_retries))


def _tenant_list(tenant_id: TenantIds) -> list[str] | None:
    if tenant_id is None:
        return None
    if isinstance(tenant_id, str):
        return [tenant_id]
    if isinstance(tenant_id, Sequence) and all(isinstance(t, str) for t in tenant_id):
        return list(tenant_id)
    raise ConfigurationError(
        f"tenant_id must be a workspace id or a list of them, got {type(tenant_id).__name__}"
    )


def _timeout(timeout: Timeout | None) -> httpx.Timeout:
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, httpx.Timeout):
        return timeout
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ConfigurationError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return httpx.Timeout(float(timeout))


def _retries(max_retries: int | None) -> int:
    if max_retries is None:
        return defaults.RETRIES
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigurationError(
            f"max_retries must be a whole number of retries, 0 or more, got {max_retries!r}"
        )
    return max_retries


class Connections:
    """The generated clients of one SDK client, one per workspace (or one, without)."""

    def __init__(self, options: ClientOptions, transport: RetryTransport | None = None) -> None:
        self.options = options
        policy = RetryPolicy(retries=options.max_retries)
        self.transport = (
            transport.with_policy(policy) if transport is not None else RetryTransport(policy)
        )
        settings = options.settings
        self._clients: dict[str | None, DimsClient] = {
            tenant: connect(
                settings=settings.for_workspace(tenant),
                timeout=options.timeout,
                transport=self.transport,
            )
            for tenant in options.tenants or (None,)
        }

    def copy(
        self,
        *,
        timeout: Timeout | None = None,
        max_retries: int | None = None,
        tenant_id: TenantIds = None,
    ) -> Connections:
        """These connections with other options; unset ones kept. The copy shares the pools
        and never closes them: the client they came from does."""
        options = self.options
        tenants = options.tenants
        if tenant_id is not None:
            tenants = tuple(tenant_ids(_tenant_list(tenant_id)))
        chosen = ClientOptions(
            options.settings,
            tenants,
            options.timeout if timeout is None else _timeout(timeout),
            options.max_retries if max_retries is None else _retries(max_retries),
            owner=False,
        )
        return Connections(chosen, self.transport)

    @property
    def tenants(self) -> tuple[str, ...]:
        return self.options.tenants

    def clients(self, timeout: Timeout | None = None) -> dict[str | None, DimsClient]:
        """Workspace (None: none named) -> its generated client, for one call."""
        if timeout is None:
            return dict(self._clients)
        chosen = _timeout(timeout)
        return {t: attrs.evolve(c, timeout=chosen) for t, c in self._clients.items()}

    @contextlib.contextmanager
    def asking(self, tenant: str | None) -> Iterator[None]:
        """Around what one workspace answers: of a client of several, an error raised names
        that workspace (`DimsError.from_workspace`), since its request alone does not."""
        try:
            yield
        except DimsError as error:
            if tenant is not None and len(self._clients) > 1:
                error.from_workspace(tenant)
            raise

    def one(self, what: str, timeout: Timeout | None = None) -> DimsClient:
        """The client of a call that is one request, which one workspace must answer."""
        if len(self._clients) > 1:
            raise ConfigurationError(
                f"{what} is one request, to one workspace; this client has "
                f"{len(self._clients)} ({', '.join(self.tenants)}): use "
                "client.with_options(tenant_id=…) to choose one"
            )
        (client,) = self.clients(timeout).values()
        return client

    def source(self, timeout: Timeout | None = None) -> DimsClient | Mapping[str, DimsClient]:
        """What the lower layer (`take_snapshot`, `fetch_tables`) takes: the one client, or
        tenant_id -> client for several workspaces."""
        clients = self.clients(timeout)
        if len(self.tenants) > 1:
            return {tenant: clients[tenant] for tenant in self.tenants}
        (client,) = clients.values()
        return client

    def close(self) -> None:
        """Close the pools, if this client owns them (sync connections only)."""
        if self.options.owner:
            self.transport.close()

    async def aclose(self) -> None:
        """Close the pools, if this client owns them (both: an async client's `to_arrow`
        fetches in a thread, over the sync ones)."""
        if self.options.owner:
            self.transport.close()
            await self.transport.aclose()
