"""What `Client` and `AsyncClient` share: how they are made, copied and shown.

Each twin adds its resources (`_attach`) and how it closes; everything else is here, once.
"""

from __future__ import annotations

from typing import Self

from ._connections import ClientOptions, Connections, TenantIds, Timeout, resolve


class BaseClient:
    """A client of the service: its connections (one per workspace) and its options."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        tenant_id: TenantIds = None,
        code_host: str | None = None,
        timeout: Timeout | None = None,
        max_retries: int | None = None,
        allow_insecure_http: bool = False,
        profile: str | None = None,
    ) -> None:
        """Unset arguments come from `DIMS_*`, then from the profile (`profile`,
        `DIMS_PROFILE`, or the config file's `default`: docs/profiles.md), then the sandbox."""
        options = resolve(
            base_url=base_url,
            api_key=api_key,
            tenant_id=tenant_id,
            code_host=code_host,
            timeout=timeout,
            max_retries=max_retries,
            allow_insecure_http=allow_insecure_http,
            profile=profile,
        )
        self._adopt(Connections(options))

    @classmethod
    def _sharing(cls, connections: Connections) -> Self:
        """A client over `connections` as they are: `with_options`' copy, which shares its
        origin's (not a constructor argument, so the signature users read is theirs only)."""
        self = cls.__new__(cls)
        self._adopt(connections)
        return self

    def _adopt(self, connections: Connections) -> None:
        self._connections = connections
        self._attach(connections)

    def _attach(self, connections: Connections) -> None:
        """Make the resources (each twin its own) over `connections`."""

    def with_options(
        self,
        *,
        timeout: Timeout | None = None,
        max_retries: int | None = None,
        tenant_id: TenantIds = None,
    ) -> Self:
        """A copy with these options (the others as here), sharing this client's
        connections: cheap to make per call. Closing it leaves them open; closing this
        client closes them for both."""
        connections = self._connections.copy(
            timeout=timeout, max_retries=max_retries, tenant_id=tenant_id
        )
        return self._sharing(connections)

    @property
    def options(self) -> ClientOptions:
        """What this client was made with, resolved (base URL, workspaces, timeout, retries);
        the key is in it but never in its repr."""
        return self._connections.options

    @property
    def base_url(self) -> str:
        return self.options.settings.base_url or ""  # the SDK always has one (the sandbox's)

    @property
    def tenant_ids(self) -> tuple[str, ...]:
        """The workspaces every call covers, in order (empty: no X-Tenant-Id is sent)."""
        return self.options.tenants

    @property
    def max_retries(self) -> int:
        return self.options.max_retries

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"
