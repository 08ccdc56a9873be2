"""Records as the generated models, and one request's raw response.

The fetch layer hands records over as parsed JSON (so that the tables can keep a bad one
aside); the SDK's resources give the generated attrs models instead, which read the
published service's spellings of renamed fields too (`dims_client.ORIGINAL_NAMES`).
A record no model can hold is a ResponseFormatError naming where it came from.

`APIResponse` is what `with_raw_response` gives: the exchange of one request (its status,
headers and body) and `parse()`, the model it holds. It is built from a copy of the
response whose request carries no secret header (`_http_errors.without_secrets`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, Self, TypeVar

import httpx
import orjson

from dims_client.api.deployments import list_deployments_request_kwargs
from dims_client.api.oauth_providers import (
    get_oauth_provider_request_kwargs,
    list_oauth_providers_request_kwargs,
)
from dims_client.models import Deployment, DeploymentPage, OAuthProvider, Repository

from .. import _spec as spec
from .._connection import DimsClient
from .._errors import (
    ConfigurationError,
    ResponseFormatError,
)
from .._http_errors import connection_error, without_secrets
from .._options import Filters
from .._pages import Page
from .._secrets import scrub

T = TypeVar("T")


class _Model(Protocol):
    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self: ...


M = TypeVar("M", bound=_Model)


def model(cls: type[M], record: Any, where: str) -> M:
    """`record` as the generated model `cls`, or a ResponseFormatError naming `where`."""
    try:
        return cls.from_dict(record)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        reason = scrub(f"{type(exc).__name__}: {str(exc)[:80]}")
        raise ResponseFormatError(
            f"{where}: not a {cls.__name__} as openapi.yaml describes it ({reason}); "
            "dims._fetch yields raw records, and an export keeps such ones aside in "
            "rejected_records"
        ) from None


def deployment(record: Any, page: Page, index: int) -> Deployment:
    """The record at `index` of `page` as a Deployment."""
    workspace = f" of workspace {page.tenant_id}" if page.tenant_id is not None else ""
    return model(Deployment, record, f"{page.source}{workspace} record {index}")


def providers(records: list[Any]) -> list[OAuthProvider]:
    return [model(OAuthProvider, r, f"OAuth provider {i}") for i, r in enumerate(records)]


def repositories(records: list[Any], integration_id: str) -> list[Repository]:
    return [
        model(Repository, r, f"repository {i} of integration {integration_id}")
        for i, r in enumerate(records)
    ]


class APIResponse(Generic[T]):
    """One request's response, as sent (`status_code`, `headers`, `content`, `json()`), and
    the model it holds (`parse()`, parsed once). `http_response` is the httpx response, its
    request without the secret headers."""

    def __init__(self, response: httpx.Response, parse: Callable[[Any], T]) -> None:
        self.http_response = without_secrets(response)
        self._parse = parse
        self._parsed: list[T] = []

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.http_response.headers

    @property
    def content(self) -> bytes:
        return self.http_response.content

    @property
    def url(self) -> httpx.URL:
        return self.http_response.request.url

    def json(self) -> Any:
        """The body as JSON."""
        try:
            return orjson.loads(self.content)
        except orjson.JSONDecodeError as exc:
            raise ResponseFormatError(
                f"GET {self.url} returned a body that is not JSON ({exc})"
            ) from None

    def parse(self) -> T:
        """The body as the generated model(s) it holds."""
        if not self._parsed:
            self._parsed.append(self._parse(self.json()))
        return self._parsed[0]

    def __repr__(self) -> str:
        request = self.http_response.request
        return f"<APIResponse [{self.status_code}] {request.method} {request.url}>"


# -- the request of each raw call ----------------------------------------------------------


def page_request(page_size: int, offset: int, filters: Mapping[str, Any]) -> dict[str, Any]:
    """One list-deployments request (the first page, unless `offset`)."""
    low, high = spec.page_size_range()
    if not low <= page_size <= high:
        raise ConfigurationError(f"page_size must be within {low}..{high}, got {page_size}")
    query = Filters.of(filters).query()
    return list_deployments_request_kwargs(limit=page_size, offset=offset, **query)


def parse_page(body: Any) -> DeploymentPage:
    return model(DeploymentPage, body, "the deployments page")


def providers_request() -> dict[str, Any]:
    return list_oauth_providers_request_kwargs()


def parse_providers(body: Any) -> list[OAuthProvider]:
    if not isinstance(body, list):
        raise ResponseFormatError("list providers returned JSON that is not an array")
    return providers(body)


def provider_request(provider_id: str) -> dict[str, Any]:
    return get_oauth_provider_request_kwargs(provider_id)


def parse_provider(body: Any) -> OAuthProvider:
    return model(OAuthProvider, body, "the OAuth provider")


def repositories_parser(integration_id: str) -> Callable[[Any], list[Repository]]:
    def parse(body: Any) -> list[Repository]:
        if not isinstance(body, list):
            raise ResponseFormatError("list repositories returned JSON that is not an array")
        return repositories(body, integration_id)

    return parse


def send(client: DimsClient, request: dict[str, Any]) -> httpx.Response:
    """One request through the client's transport (its retries; a typed error for an error
    status); a failure to reach the service is the fetch layer's one-line error."""
    http = client.get_httpx_client()
    try:
        return http.request(**request)
    except httpx.TransportError as exc:
        raise connection_error(http.base_url, request["method"], request["url"], exc) from None


async def asend(client: DimsClient, request: dict[str, Any]) -> httpx.Response:
    """The async twin of `send`."""
    http = client.get_async_httpx_client()
    try:
        return await http.request(**request)
    except httpx.TransportError as exc:
        raise connection_error(http.base_url, request["method"], request["url"], exc) from None
