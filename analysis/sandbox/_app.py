"""The sandbox service: the spec's four GET operations over a Fleet, as a Starlette app.

It answers the way the real (FastAPI) service does on the points clients depend on:
JSON bodies serialized by orjson (integers past 64 bits by the standard library),
FastAPI-shaped errors, offset paging whose response `offset` is the next offset, and JSON
404/405 for unknown paths and methods. Like a real service it has one code host in its
repositories path (`codehost` as the spec writes it, `github` as the published service has
it): any other segment is an unknown path, 404.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, request_response

from .. import _codehost as codehost
from ._faults import FaultInjector, Faults, SandboxStats, Scope, Sequencer, tenant_of
from ._fleet import Fleet, json_bytes
from ._query import DeploymentQuery, ValidationFailed, parse_deployment_query, parse_uuid

_MAX_CACHED_SELECTIONS = 64
#: What a listing's last page answers as `offset` under each of faults.FINAL_OFFSETS.
_FINAL_OFFSETS: dict[str, Callable[[int], int]] = {
    "echo": lambda offset: offset,
    "zero": lambda offset: 0,
    "back": lambda offset: max(0, offset - 1),
}


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(body), status, headers, media_type="application/json")


def _validation_error(exc: ValidationFailed) -> Response:
    return _json({"detail": exc.errors}, 422)


class _Listing:
    """The deployment listing as served: the fleet's order, plus faults' insertions.

    Filtered selections are cached per query and listing version, so paging a large fleet
    page by page does not rescan it for every page.
    """

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.records = list(fleet.deployments)
        self.also_listed = {tenant: list(more) for tenant, more in fleet.also_listed.items()}
        self.types = dict(fleet.deployment_types)
        #: the records faults inserted, kept in front when the fleet's own list changes
        self._inserted: list[tuple[dict[str, Any], str | None]] = []
        self._fleet_revision = fleet.revision
        self.version = 0
        self._cache: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def insert_front(self, record: dict[str, Any], kind: str | None) -> None:
        with self._lock:
            self._inserted.insert(0, (record, kind))
            self.records.insert(0, record)
            self.types[record["id"]] = kind
            self.version += 1
            self._cache.clear()

    def _follow_fleet(self) -> None:
        """Serve the fleet's list again when it changed while served (`second_day` adds and
        removes deployments), the records faults inserted still in front."""
        if self.fleet.revision == self._fleet_revision:
            return
        with self._lock:
            self.records = [*(r for r, _ in self._inserted), *self.fleet.deployments]
            self.types = {**self.fleet.deployment_types, **{r["id"]: k for r, k in self._inserted}}
            self._fleet_revision = self.fleet.revision
            self.version += 1
            self._cache.clear()

    def select(self, q: DeploymentQuery, tenant: str | None = None) -> list[dict[str, Any]]:
        """The records the query matches, within workspace `tenant` (None: every workspace)."""
        self._follow_fleet()
        if tenant is None and not any(f is not None for f in q.filters):
            return self.records
        key = (self.version, tenant, *q.filters)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        selected = [
            rec
            for rec in self.records
            if (tenant is None or rec.get("tenant_id") == tenant) and self._matches(rec, q)
        ]
        if tenant is not None:  # what the workspace lists beyond its own (Fleet.list_also)
            selected += [rec for rec in self.also_listed.get(tenant, ()) if self._matches(rec, q)]
        with self._lock:
            if len(self._cache) >= _MAX_CACHED_SELECTIONS:
                self._cache.clear()
            self._cache[key] = selected
        return selected

    def _matches(self, rec: dict[str, Any], q: DeploymentQuery) -> bool:
        dep_id = str(rec.get("id"))
        fleet = self.fleet
        if q.deployment_ids is not None and dep_id not in q.deployment_ids:
            return False
        if q.deployment_type is not None and self.types.get(dep_id) != q.deployment_type:
            return False
        if q.image_version is not None and rec.get("image_version") != q.image_version:
            return False
        if q.status is not None and rec.get("status") != q.status:
            return False
        if q.name_contains is not None:
            name = rec.get("name")
            if name is None or q.name_contains.casefold() not in name.casefold():
                return False
        if (
            q.remote_reconciled is not None
            and fleet.remote_reconciled.get(dep_id, False) != q.remote_reconciled
        ):
            return False
        return q.tag_value_ids is None or not q.tag_value_ids.isdisjoint(
            fleet.tag_value_ids.get(dep_id, ())
        )


class _Service:
    """Route handlers over one fleet; state that faults change lives here, per app."""

    def __init__(self, fleet: Fleet, faults: Faults, stats: SandboxStats) -> None:
        self.fleet = fleet
        self.faults = faults
        self.stats = stats
        self.listing = _Listing(fleet)
        self.providers = {p["provider_id"]: p for p in fleet.providers}
        self.provider_list_body = json_bytes(fleet.providers)
        self._list_requests = 0
        self._lock = threading.Lock()

    async def get_provider(self, request: Request) -> Response:
        provider_id = request.path_params["provider_id"]
        record = self.providers.get(provider_id)
        if record is None:
            return _json({"detail": "OAuth provider not found"}, 404)
        return _json(record)

    async def list_providers(self, request: Request) -> Response:
        return Response(self.provider_list_body, media_type="application/json")

    async def list_repositories(self, request: Request) -> Response:
        try:
            integration_id = parse_uuid(request.path_params["integration_id"], "integration_id")
        except ValidationFailed as exc:
            return _validation_error(exc)
        repos = self.fleet.repositories.get(integration_id)
        if repos is None:
            return _json({"detail": "Integration not found"}, 404)
        return _json(repos)

    async def list_deployments(self, request: Request) -> Response:
        try:
            q = parse_deployment_query(request.query_params)
        except ValidationFailed as exc:
            return _validation_error(exc)
        self._maybe_insert()
        # The service scopes records to the workspace named by X-Tenant-Id; without one, the
        # sandbox serves every workspace (a key whose default is the whole organisation).
        selected = self.listing.select(q, tenant_of(request.scope))
        faults = self.faults
        start = 0 if faults.ignore_offset else q.offset
        size = min(q.limit, faults.page_cap) if faults.page_cap else q.limit
        page = selected[start : start + size]
        next_offset = q.offset + len(page)
        if faults.stuck_offset:
            next_offset = q.offset
        elif faults.final_offset and next_offset >= len(selected):
            next_offset = _FINAL_OFFSETS[faults.final_offset](q.offset)
        # `offset` has no upper bound in the spec, and orjson refuses integers beyond
        # 64 bits, so the envelope is written by hand around the serialized page.
        body = b'{"resources":%b,"offset":%d}' % (json_bytes(page), next_offset)
        return Response(body, media_type="application/json")

    def _maybe_insert(self) -> None:
        n = self.faults.insert_while_paging
        if not n:
            return
        with self._lock:
            self._list_requests += 1
            due = self._list_requests == n + 1
        if due:
            record, kind = self.fleet.new_deployment()
            self.listing.insert_front(record, kind)
            self.stats.record_insert(record["id"])


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers) if exc.headers else None
    return _json({"detail": exc.detail}, exc.status_code, headers)


class _CountRequests:
    """Outermost layer: count every HTTP request by URL path, routed or not, and how many
    were in flight at once (latency and faults included).

    A request ends just before the last part of its answer is sent, not when the app
    returns: the inner layers return some loop turns after that part left, and a client
    that has its answer may meanwhile ask again, which would count as one more in flight
    than the client ever had."""

    def __init__(self, app: Callable[..., Any], stats: SandboxStats) -> None:
        self.app = app
        self.stats = stats

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.stats.count_request(scope["path"])
        self.stats.started()
        ended = False

        async def send_counted(message: dict[str, Any]) -> None:
            nonlocal ended
            last = message["type"] == "http.response.body" and not message.get("more_body")
            if last and not ended:
                ended = True
                self.stats.ended()
            await send(message)

        try:
            await self.app(scope, receive, send_counted)
        finally:
            if not ended:
                self.stats.ended()


def served_code_host(fleet: Fleet, code_host: str | None = None) -> str:
    """The repositories path's segment the sandbox serves: `code_host` when given, else the
    published service's (`github`) for a fleet spelled as it spells fields, else the spec's."""
    if code_host is None:
        return codehost.DEFAULT if fleet.names == "spec" else codehost.PUBLISHED
    return codehost.check(code_host, "the sandbox's code host (code_host / --code-host)")


def create_app(
    fleet: Fleet,
    *,
    faults: Faults | None = None,
    api_key: str | None = None,
    latency_ms: float = 0,
    stats: SandboxStats | None = None,
    code_host: str | None = None,
) -> Starlette:
    """The sandbox as an ASGI app; `app.state.stats` holds its counters.

    The repositories are served under `code_host` only (a ConfigurationError when it cannot
    be one path segment); by default the segment of the names the fleet speaks
    (`served_code_host`).

    `latency_ms` and `faults.latency_ms` are not added: the larger one applies. When the
    app runs under `run_sandbox`, the server sets `app.state.connection_aborter` so the
    reset fault can drop a connection without any response.
    """
    segment = served_code_host(fleet, code_host)
    faults = faults or Faults()
    stats = stats or SandboxStats()
    service = _Service(fleet, faults, stats)
    sequencer = Sequencer()
    tenants = frozenset(r["tenant_id"] for r in fleet.deployments if r.get("tenant_id"))
    tenants |= frozenset(fleet.also_listed)
    app = Starlette(exception_handlers={HTTPException: _http_error})

    def api(handler: Callable[[Request], Any]) -> FaultInjector:
        return FaultInjector(
            request_response(handler),
            faults=faults,
            stats=stats,
            sequencer=sequencer,
            api_key=api_key,
            latency_ms=latency_ms,
            aborter=lambda: getattr(app.state, "connection_aborter", None),
            tenants=tenants,
        )

    routes = [
        Route("/v2/auth/providers", api(service.list_providers), methods=["GET"]),
        Route("/v2/auth/providers/{provider_id}", api(service.get_provider), methods=["GET"]),
        Route(
            f"/v1/integrations/forge/{segment}/{{integration_id}}/repos",
            api(service.list_repositories),
            methods=["GET"],
        ),
        Route("/v2/deployments", api(service.list_deployments), methods=["GET"]),
    ]
    app.router.routes.extend(routes)
    # A trailing slash is a different (unknown) path, as in the real service; a redirect
    # would send clients to another operation.
    app.router.redirect_slashes = False
    app.add_middleware(_CountRequests, stats=stats)
    app.state.stats = stats
    app.state.fleet = fleet
    app.state.service = service
    return app
