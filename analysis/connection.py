"""`connect()`: the generated client, configured safely from arguments or `DIMS_*`.

The API key is attached per request by `ApiKeyAuth` (an httpx auth flow) rather than put
in the client's default headers, because the generated `Client` is an attrs class whose
repr prints its headers. The auth flow also refuses to send the key over plain http to a
host other than loopback unless explicitly allowed.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Generator
from dataclasses import dataclass, field

import httpx

from generated_client import Client

from .errors import ConfigurationError
from .secrets import protect_generated_models
from .transport import RetryPolicy, RetryTransport

#: The embedded sandbox's default address (`dims sandbox`).
DEFAULT_BASE_URL = "http://127.0.0.1:8765"
DEFAULT_API_KEY_HEADER = "X-Api-Key"
DEFAULT_TENANT_HEADER = "X-Tenant-Id"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)

ENV_BASE_URL = "DIMS_BASE_URL"
ENV_API_KEY = "DIMS_API_KEY"
ENV_TENANT_ID = "DIMS_TENANT_ID"


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ApiKeyAuth(httpx.Auth):
    """Adds the key and tenant headers to each request; never shows the key."""

    def __init__(
        self,
        api_key: str | None,
        tenant_id: str | None = None,
        *,
        api_key_header: str = DEFAULT_API_KEY_HEADER,
        tenant_header: str = DEFAULT_TENANT_HEADER,
        allow_insecure_http: bool = False,
    ) -> None:
        self._api_key = api_key
        self._tenant_id = tenant_id
        self._api_key_header = api_key_header
        self._tenant_header = tenant_header
        self._allow_insecure_http = allow_insecure_http

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"ApiKeyAuth(api_key=<{key}>, tenant_id={self._tenant_id!r})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._api_key:
            check_key_transport(request.url, self._allow_insecure_http)
            request.headers[self._api_key_header] = self._api_key
        if self._tenant_id:
            request.headers[self._tenant_header] = self._tenant_id
        yield request


def check_key_transport(url: httpx.URL, allow_insecure_http: bool) -> None:
    """Refuse to send a key in clear text anywhere but this machine."""
    if url.scheme == "http" and not is_loopback(url.host) and not allow_insecure_http:
        raise ConfigurationError(
            f"refusing to send the API key over plain http to {url.host}: use https, "
            "or pass --allow-insecure-http (allow_insecure_http=True) if you accept the risk"
        )


@dataclass(frozen=True)
class Settings:
    """Resolved connection settings. The key is kept out of the repr."""

    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    tenant_id: str | None = None
    api_key_header: str = DEFAULT_API_KEY_HEADER
    tenant_header: str = DEFAULT_TENANT_HEADER
    allow_insecure_http: bool = False

    @classmethod
    def resolve(
        cls,
        base_url: str | None = None,
        api_key: str | None = None,
        tenant_id: str | None = None,
        **options: object,
    ) -> Settings:
        """Arguments first, then `DIMS_*` environment variables, then the sandbox default."""
        settings = cls(
            base_url=(base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/"),
            api_key=api_key or os.environ.get(ENV_API_KEY) or None,
            tenant_id=tenant_id or os.environ.get(ENV_TENANT_ID) or None,
            **options,  # type: ignore[arg-type]
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        try:
            url = httpx.URL(self.base_url)
        except httpx.InvalidURL as exc:
            raise ConfigurationError(f"invalid base URL {self.base_url!r}: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ConfigurationError(
                f"invalid base URL {self.base_url!r}: expected http(s)://host[:port], "
                "e.g. http://127.0.0.1:8765"
            )
        # httpx percent-encodes characters no host may contain ("http://[bad", a space)
        # instead of refusing them; such a host would only fail later, as a DNS error.
        if "%" in url.host or (url.port is not None and not 0 < url.port < 65536):
            raise ConfigurationError(
                f"invalid base URL {self.base_url!r}: the host or port is malformed; "
                "expected http(s)://host[:port], e.g. http://127.0.0.1:8765"
            )
        if self.api_key:
            check_key_transport(url, self.allow_insecure_http)


def connect(
    base_url: str | None = None,
    api_key: str | None = None,
    tenant_id: str | None = None,
    *,
    api_key_header: str = DEFAULT_API_KEY_HEADER,
    tenant_header: str = DEFAULT_TENANT_HEADER,
    allow_insecure_http: bool = False,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    retry: RetryPolicy | None = None,
    transport: RetryTransport | None = None,
) -> Client:
    """The generated client, with a timeout, retries, and the key attached safely.

    Unset arguments come from `DIMS_BASE_URL`, `DIMS_API_KEY` and `DIMS_TENANT_ID`; with
    neither, the client points at the local sandbox (`dims sandbox`).
    """
    settings = Settings.resolve(
        base_url,
        api_key,
        tenant_id,
        api_key_header=api_key_header,
        tenant_header=tenant_header,
        allow_insecure_http=allow_insecure_http,
    )
    auth = ApiKeyAuth(
        settings.api_key,
        settings.tenant_id,
        api_key_header=settings.api_key_header,
        tenant_header=settings.tenant_header,
        allow_insecure_http=settings.allow_insecure_http,
    )
    if not isinstance(timeout, httpx.Timeout):
        timeout = httpx.Timeout(timeout)
    protect_generated_models()  # the models this client returns never show a secret value
    return Client(
        base_url=settings.base_url,
        timeout=timeout,
        httpx_args={"auth": auth, "transport": transport or RetryTransport(retry)},
    )


def retry_transport(client: Client) -> RetryTransport:
    """The RetryTransport a client from `connect()` uses (for its stats)."""
    transport = client._httpx_args.get("transport")
    if not isinstance(transport, RetryTransport):
        raise ConfigurationError("this client was not made by analysis.connect()")
    return transport
