"""Every record from the service: auto-pagination, concurrency, dedupe, sync and async.

Requests are built by the generated client's endpoint modules (`_get_kwargs`), so URLs and
parameter encoding come from openapi.yaml; responses are read raw and parsed once with
orjson instead of through the generated models, because a single malformed record must be
kept aside by the tables layer rather than fail its whole page, and because `from_dict`
costs 2-3x the parse (see benchmarks/).

Paging is speculative: with a window of N requests in flight, offsets o, o+L, o+2L… are
asked for ahead of time, and every response is checked against the rule of the spec (the
response `offset` is the next request's offset). A response that disagrees re-aligns the
window on the offset the service gave; one that does not advance is a PaginationError.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import httpx
import orjson

from generated_client import Client
from generated_client.api.deployments import list_deployments
from generated_client.api.integrations import list_integration_repositories
from generated_client.api.oauth_providers import get_oauth_provider, list_oauth_providers

from . import spec
from .errors import (
    ConfigurationError,
    NotFoundError,
    PaginationError,
    ResponseFormatError,
    TransportError,
    describe,
    raise_for_status,
)
from .pages import Page
from .progress import Progress
from .transport import JSON_EXTENSION

log = logging.getLogger("dims.fetch")

DEFAULT_PAGE_SIZE = 100
DEFAULT_CONCURRENCY = 8


deployment_types = spec.deployment_types


def filter_names() -> tuple[str, ...]:
    """The list-deployments filters of the spec (every query parameter but limit/offset)."""
    params = spec.document()["paths"]["/v2/deployments"]["get"]["parameters"]
    return tuple(p["name"] for p in params if p["name"] not in ("limit", "offset"))


class ListingShiftedWarning(UserWarning):
    """The listing changed while it was paged: some records came twice and were dropped."""


# -- requests and responses ---------------------------------------------------------------


def _check_filters(filters: dict[str, Any]) -> dict[str, Any]:
    unknown = set(filters) - set(filter_names())
    if unknown:
        raise ConfigurationError(
            f"unknown deployment filter(s) {sorted(unknown)}; the spec names {list(filter_names())}"
        )
    return {k: v for k, v in filters.items() if v is not None}


def _listing_request(offset: int, limit: int, filters: dict[str, Any]) -> dict[str, Any]:
    if not 1 <= limit <= 100:
        raise ConfigurationError(f"page size (limit) must be within 1..100, got {limit}")
    return list_deployments._get_kwargs(limit=limit, offset=offset, **filters)


def _json(response: httpx.Response) -> Any:
    """The parsed body of a successful response, or a typed error."""
    raise_for_status(response)
    if JSON_EXTENSION in response.extensions:
        return response.extensions[JSON_EXTENSION]
    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError as exc:
        raise ResponseFormatError(
            f"{describe(response.request)} returned a body that is not JSON ({exc}); retry later"
        ) from None


def _as_page(
    response: httpx.Response, offset: int, deployment_type: str | None
) -> tuple[Page, int]:
    body = _json(response)
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("resources"), list)
        or not isinstance(body.get("offset"), int)
    ):
        raise ResponseFormatError(
            f"{describe(response.request)} returned JSON that is not a deployments page "
            "({resources: [...], offset: n}); check the base URL"
        )
    suffix = f" type={deployment_type}" if deployment_type else ""
    page = Page(
        records=body["resources"],
        source=f"page offset={offset}{suffix}",
        deployment_type=deployment_type,
        first_index=offset,
    )
    return page, body["offset"]


def _send(http: httpx.Client, kwargs: dict[str, Any]) -> httpx.Response:
    try:
        return http.request(**kwargs)
    except httpx.TransportError as exc:
        raise _transport_error(kwargs, exc) from None


async def _asend(http: httpx.AsyncClient, kwargs: dict[str, Any]) -> httpx.Response:
    try:
        return await http.request(**kwargs)
    except httpx.TransportError as exc:
        raise _transport_error(kwargs, exc) from None


def _transport_error(kwargs: dict[str, Any], exc: httpx.TransportError) -> TransportError:
    what = f"{kwargs['method'].upper()} {kwargs['url']}"
    return TransportError(
        f"{what} failed after retries: {type(exc).__name__}: {exc or 'no detail'} "
        "(is the service up at the base URL? check DIMS_BASE_URL / --base-url)"
    )


# -- the paging window ----------------------------------------------------------------------


class _Verdict(Enum):
    MORE = "more"
    DONE = "done"
    REALIGN = "realign"


@dataclass
class _Window:
    """Which offsets to ask for next, and what each answer means."""

    limit: int
    next_offset: int = 0

    def issue(self) -> int:
        offset = self.next_offset
        self.next_offset += self.limit
        return offset

    def judge(self, offset: int, page: Page, response_offset: int) -> _Verdict:
        count = len(page.records)
        if count == 0:
            return _Verdict.DONE
        if response_offset <= offset:
            raise PaginationError(
                f"the deployments listing did not advance: the page at offset {offset} "
                f"({page.source}) answered next offset {response_offset}; stopping instead "
                "of looping (a service bug: report it, or narrow the listing with filters)"
            )
        if count < self.limit:
            return _Verdict.DONE
        if response_offset != offset + self.limit:
            self.next_offset = response_offset
            return _Verdict.REALIGN
        return _Verdict.MORE


@dataclass
class _Listing:
    """One listing being paged: its filters, its window and its requests in flight."""

    filters: dict[str, Any]
    window: _Window
    label: str | None
    pending: deque[tuple[int, Any]] = field(default_factory=deque)
    done: bool = False


class _Scheduler:
    """Pages several listings at once under one budget of requests in flight.

    Shared by the sync and async drivers, which only differ in how a request is started
    and awaited. Pages of one listing come out in order; listings interleave.
    """

    def __init__(
        self,
        listings: list[dict[str, Any]],
        page_size: int,
        concurrency: int,
        start_offset: int = 0,
        progress: Progress | None = None,
    ) -> None:
        self.page_size = page_size
        self.concurrency = max(1, concurrency)
        self.progress = progress
        self.listings = []
        for filters in listings:
            filters = _check_filters(filters)
            _listing_request(start_offset, page_size, filters)  # validate before sending
            window = _Window(page_size, start_offset)
            self.listings.append(_Listing(filters, window, _type_label(filters)))

    def to_start(self) -> Iterator[tuple[_Listing, int, dict[str, Any]]]:
        """Requests to start now: the least-served open listing first, up to the budget."""
        while sum(len(item.pending) for item in self.listings) < self.concurrency:
            open_listings = [item for item in self.listings if not item.done]
            if not open_listings:
                return
            listing = min(open_listings, key=lambda item: len(item.pending))
            offset = listing.window.issue()
            yield listing, offset, _listing_request(offset, self.page_size, listing.filters)

    def heads(self) -> dict[Any, _Listing]:
        """The oldest request in flight of each listing (the only ones that may yield)."""
        return {item.pending[0][1]: item for item in self.listings if item.pending}

    def accept(self, listing: _Listing, response: httpx.Response) -> tuple[Page, list[Any]]:
        """Judge the answer to `listing`'s oldest request; return its page and requests to drop."""
        offset, _ = listing.pending.popleft()
        page, response_offset = _as_page(response, offset, listing.label)
        verdict = listing.window.judge(offset, page, response_offset)
        stale: list[Any] = []
        if verdict is not _Verdict.MORE:
            stale = [request for _, request in listing.pending]
            listing.pending.clear()
            listing.done = verdict is _Verdict.DONE
        if page.records and self.progress:
            self.progress.page(len(page.records))
        return page, stale

    def unfinished(self) -> list[Any]:
        return [request for item in self.listings for _, request in item.pending]


def _run_sync(client: Client, scheduler: _Scheduler) -> Iterator[Page]:
    http = client.get_httpx_client()
    pool = ThreadPoolExecutor(scheduler.concurrency, thread_name_prefix="dims-fetch")
    try:
        while True:
            for listing, _offset, kwargs in scheduler.to_start():
                listing.pending.append((_offset, pool.submit(_send, http, kwargs)))
            heads = scheduler.heads()
            if not heads:
                return
            finished, _ = wait(heads, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=list(heads).index):
                page, stale = scheduler.accept(heads[future], future.result())
                for request in stale:
                    request.cancel()
                if page.records:
                    yield page
    finally:
        for request in scheduler.unfinished():
            request.cancel()
        pool.shutdown(wait=False, cancel_futures=True)


async def _run_async(client: Client, scheduler: _Scheduler) -> AsyncIterator[Page]:
    http = client.get_async_httpx_client()
    try:
        while True:
            for listing, _offset, kwargs in scheduler.to_start():
                task = asyncio.ensure_future(_asend(http, kwargs))
                listing.pending.append((_offset, task))
            heads = scheduler.heads()
            if not heads:
                return
            finished, _ = await asyncio.wait(heads, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(finished, key=list(heads).index):
                page, stale = scheduler.accept(heads[task], task.result())
                for request in stale:
                    request.cancel()
                if page.records:
                    yield page
    finally:
        leftover = scheduler.unfinished()
        for task in leftover:
            task.cancel()
        if leftover:
            await asyncio.gather(*leftover, return_exceptions=True)


def iter_pages(
    client: Client,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    start_offset: int = 0,
    progress: Progress | None = None,
    **filters: Any,
) -> Iterator[Page]:
    """Every page of one listing, in order, with up to `concurrency` requests in flight."""
    scheduler = _Scheduler([filters], page_size, concurrency, start_offset, progress)
    return _run_sync(client, scheduler)


def aiter_pages(
    client: Client,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    start_offset: int = 0,
    progress: Progress | None = None,
    **filters: Any,
) -> AsyncIterator[Page]:
    """The async twin of `iter_pages`: same pages, same order, same errors."""
    scheduler = _Scheduler([filters], page_size, concurrency, start_offset, progress)
    return _run_async(client, scheduler)


def _type_label(filters: dict[str, Any]) -> str | None:
    value = filters.get("deployment_type")
    return getattr(value, "value", value)


def iter_deployments(client: Client, **options: Any) -> Iterator[dict[str, Any]]:
    """Every deployment record of one listing (raw dicts), following all pages."""
    for page in iter_pages(client, **options):
        yield from page.records


async def aiter_deployments(client: Client, **options: Any) -> AsyncIterator[dict[str, Any]]:
    async for page in aiter_pages(client, **options):
        for record in page.records:
            yield record


# -- a full fetch: every type, deduplicated -------------------------------------------------


@dataclass
class FetchStats:
    """What a full fetch saw, for the export summary and the tests."""

    listings: list[str | None] = field(default_factory=list)
    pages: int = 0
    records: int = 0
    duplicates: int = 0
    integration_ids: set[str] = field(default_factory=set)


def integration_of(record: Any) -> str | None:
    """The code-host integration a deployment record references, if it names one."""
    source_config = record.get("source_config") if isinstance(record, dict) else None
    if isinstance(source_config, dict):
        integration_id = source_config.get("integration_id")
        if isinstance(integration_id, str):
            return integration_id
    return None


class _Dedupe:
    """Drops records whose id was already seen (the listing shifted while paging)."""

    def __init__(self, stats: FetchStats) -> None:
        self.seen: set[str] = set()
        self.stats = stats

    def __call__(self, page: Page) -> Page:
        kept: list[Any] = []
        for record in page.records:
            record_id = record.get("id") if isinstance(record, dict) else None
            if isinstance(record_id, str):
                if record_id in self.seen:
                    self.stats.duplicates += 1
                    continue
                self.seen.add(record_id)
            kept.append(record)
            self._note_integration(record)
        self.stats.pages += 1
        self.stats.records += len(kept)
        if len(kept) == len(page.records):
            return page
        return Page(kept, page.source, page.deployment_type, page.first_index)

    def _note_integration(self, record: Any) -> None:
        integration_id = integration_of(record)
        if integration_id is not None:
            self.stats.integration_ids.add(integration_id)

    def finish(self) -> None:
        if self.stats.duplicates:
            warnings.warn(
                ListingShiftedWarning(
                    f"the deployments listing shifted while paging: {self.stats.duplicates} "
                    "record(s) came twice and were kept once"
                ),
                stacklevel=3,
            )


def _carries_type(records: Iterable[Any]) -> bool:
    """True when every record names its own type (source_config.deployment_type)."""
    records = list(records)
    return bool(records) and all(
        isinstance(r, dict)
        and isinstance(r.get("source_config"), dict)
        and isinstance(r["source_config"].get("deployment_type"), str)
        for r in records
    )


def _listings(probe: list[Any], filters: dict[str, Any], stats: FetchStats) -> list[dict[str, Any]]:
    """The listings a full fetch needs: one, or one per deployment type."""
    if filters.get("deployment_type") is not None or _carries_type(probe):
        stats.listings.append(_type_label(filters))
        return [filters]
    stats.listings.extend(deployment_types())
    return [{**filters, "deployment_type": t} for t in deployment_types()]


def fetch_deployments(
    client: Client,
    *,
    stats: FetchStats | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    **filters: Any,
) -> Iterator[Page]:
    """Every deployment, once, each page tagged with its deployment_type.

    The record does not carry its type, so unless the caller filters by type (or the
    service's records name it in `source_config.deployment_type`), each type is listed,
    the listings paged together under one budget of requests in flight, and each
    record is tagged with the type whose listing returned it.
    """
    stats = stats if stats is not None else FetchStats()
    filters = _check_filters(filters)
    probe = _as_page(
        _send(client.get_httpx_client(), _listing_request(0, page_size, filters)), 0, None
    )[0]
    scheduler = _Scheduler(
        _listings(probe.records, filters, stats), page_size, concurrency, 0, progress
    )
    dedupe = _Dedupe(stats)
    for page in _run_sync(client, scheduler):
        yield dedupe(page)
    dedupe.finish()


async def afetch_deployments(
    client: Client,
    *,
    stats: FetchStats | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    **filters: Any,
) -> AsyncIterator[Page]:
    """The async twin of `fetch_deployments`."""
    stats = stats if stats is not None else FetchStats()
    filters = _check_filters(filters)
    response = await _asend(
        client.get_async_httpx_client(), _listing_request(0, page_size, filters)
    )
    probe = _as_page(response, 0, None)[0]
    scheduler = _Scheduler(
        _listings(probe.records, filters, stats), page_size, concurrency, 0, progress
    )
    dedupe = _Dedupe(stats)
    async for page in _run_async(client, scheduler):
        yield dedupe(page)
    dedupe.finish()


# -- OAuth providers and repositories -------------------------------------------------------


def _get(client: Client, kwargs: dict[str, Any]) -> Any:
    return _json(_send(client.get_httpx_client(), kwargs))


async def _aget(client: Client, kwargs: dict[str, Any]) -> Any:
    return _json(await _asend(client.get_async_httpx_client(), kwargs))


def _expect_list(body: Any, what: str) -> list[Any]:
    if not isinstance(body, list):
        raise ResponseFormatError(f"{what} returned JSON that is not an array; check the base URL")
    return body


def list_providers(client: Client) -> list[dict[str, Any]]:
    """Every OAuth provider record (raw dicts)."""
    return _expect_list(_get(client, list_oauth_providers._get_kwargs()), "list providers")


async def alist_providers(client: Client) -> list[dict[str, Any]]:
    body = await _aget(client, list_oauth_providers._get_kwargs())
    return _expect_list(body, "list providers")


def get_provider(client: Client, provider_id: str) -> dict[str, Any]:
    """One OAuth provider by its provider_id slug (e.g. `github-local-dev`)."""
    return _get(client, get_oauth_provider._get_kwargs(provider_id))


async def aget_provider(client: Client, provider_id: str) -> dict[str, Any]:
    return await _aget(client, get_oauth_provider._get_kwargs(provider_id))


def _repos_request(integration_id: str) -> dict[str, Any]:
    return list_integration_repositories._get_kwargs(integration_id)


def list_repositories(client: Client, integration_id: str) -> list[dict[str, Any]]:
    """The repositories reachable through one code-host integration."""
    return _expect_list(_get(client, _repos_request(integration_id)), "list repositories")


async def alist_repositories(client: Client, integration_id: str) -> list[dict[str, Any]]:
    body = await _aget(client, _repos_request(integration_id))
    return _expect_list(body, "list repositories")


@dataclass
class Repositories:
    """Repositories per integration, and the integrations the service did not know."""

    by_integration: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


class RepositoryFetcher:
    """Lists the repositories of each integration once, in the background, as ids arrive.

    An export feeds it the integration ids it sees while deployments stream past, so the
    repositories cost almost no extra wall time. An integration the service answers 404
    for (deleted since) is listed in `missing` rather than failing the export.
    """

    def __init__(self, client: Client, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        self._client = client
        self._pool = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="dims-repos")
        self._futures: dict[str, Any] = {}

    def add(self, integration_id: str) -> None:
        if integration_id not in self._futures:
            self._futures[integration_id] = self._pool.submit(
                list_repositories, self._client, integration_id
            )

    def add_from(self, pages: Iterable[Page]) -> Iterator[Page]:
        """Pass pages through, starting a listing for each new integration they name."""
        for page in pages:
            for record in page.records:
                integration_id = integration_of(record)
                if integration_id is not None:
                    self.add(integration_id)
            yield page

    def result(self) -> Repositories:
        out = Repositories()
        try:
            for integration_id in sorted(self._futures):
                try:
                    out.by_integration[integration_id] = self._futures[integration_id].result()
                except NotFoundError:
                    out.missing.append(integration_id)
        finally:
            self.close()
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def fetch_repositories(
    client: Client, integration_ids: Iterable[str], *, concurrency: int = DEFAULT_CONCURRENCY
) -> Repositories:
    """The repositories of every integration, fetched concurrently."""
    fetcher = RepositoryFetcher(client, concurrency)
    for integration_id in integration_ids:
        fetcher.add(integration_id)
    return fetcher.result()


async def afetch_repositories(
    client: Client, integration_ids: Iterable[str], *, concurrency: int = DEFAULT_CONCURRENCY
) -> Repositories:
    ids = sorted(set(integration_ids))
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(integration_id: str) -> list[dict[str, Any]] | None:
        async with gate:
            try:
                return await alist_repositories(client, integration_id)
            except NotFoundError:
                return None

    lists = await asyncio.gather(*(one(i) for i in ids))
    result = Repositories()
    for integration_id, repos in zip(ids, lists, strict=True):
        if repos is None:
            result.missing.append(integration_id)
        else:
            result.by_integration[integration_id] = repos
    return result
