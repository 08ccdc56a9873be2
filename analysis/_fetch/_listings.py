"""Every record from the service: auto-pagination, concurrency, dedupe, sync and async.

The layer under the SDK (`dims.Client`, whose listings are these functions' pages as
typed models), public and kept: it takes a client from `connect()` and yields raw records,
for who wants them as the service sent them, or the page and listing statistics.

Requests are built by the generated client (`<operation>_request_kwargs`), so URLs and
parameter encoding come from openapi.yaml; responses are read raw and parsed once with
orjson instead of through the generated models, because a single malformed record must be
kept aside by the tables layer rather than fail its whole page, and because `from_dict`
costs several times the parse (docs/benchmarks.md, the generated models' row).

Paging follows rules that real services need, not only the spec's one rule (the response
`offset` is the next request's offset):
- a listing ends on an empty page, never on a short one: services cap pages below `limit`;
- the next offset is the response's when it advances; otherwise request offset + records
  received, with one PagingWarning;
- pages that bring no id not already seen, while the listing has not ended, mean the
  service ignores `offset`: a PaginationError, as is passing `FetchLimits`;
- the unfiltered listing is the fleet; the per-type listings only tag (see `_Scheduler`).
It is speculative: offsets o, o+step, o+2·step… are asked for ahead of time, `step`
learnt from the service's answers, and an answer that disagrees re-aligns the window.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
import warnings
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sized
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx
import msgspec
import orjson

from dims_client import Client
from dims_client.api.deployments import list_deployments_request_kwargs
from dims_client.api.integrations import list_integration_repositories_request_kwargs
from dims_client.api.oauth_providers import (
    get_oauth_provider_request_kwargs,
    list_oauth_providers_request_kwargs,
)
from dims_client.models import Deployment

from .. import _codehost as codehost
from .. import _defaults as defaults
from .. import _rawjson as rawjson
from .. import _spec as spec
from .._connection import code_host_of, decoded_json, with_decoder
from .._errors import (
    APIConnectionError,
    ConfigurationError,
    ListingShiftedWarning,
    NotFoundError,
    PaginationError,
    PagingWarning,
    ResponseFormatError,
)
from .._evidence import FetchEvidence, Integrations, ListingStats, TypeSources
from .._http_errors import connection_error, describe, raise_for_status
from .._options import FetchLimits, Filters
from .._pages import Page, RecordKeys, keys_of
from .._progress import Progress

log = logging.getLogger("dims.fetch")

DEFAULT_PAGE_SIZE = defaults.PAGE_SIZE
DEFAULT_CONCURRENCY = defaults.CONCURRENCY


deployment_types = spec.deployment_types


# -- requests and responses ---------------------------------------------------------------


def _listing_request(offset: int, limit: int, filters: dict[str, Any]) -> dict[str, Any]:
    low, high = spec.page_size_range()
    if not low <= limit <= high:
        raise ConfigurationError(f"page size (limit) must be within {low}..{high}, got {limit}")
    return list_deployments_request_kwargs(limit=limit, offset=offset, **filters)


def _json(response: httpx.Response, decode: Callable[[bytes], Any] = orjson.loads) -> Any:
    """The parsed body of a successful response (parsed by the transport, else `decode`),
    or a typed error."""
    raise_for_status(response)
    decoded = decoded_json(response)
    if decoded is not None:
        return decoded.value
    try:
        return decode(response.content)
    except orjson.JSONDecodeError as exc:
        raise ResponseFormatError(
            f"{describe(response.request)} returned a body that is not JSON ({exc}); retry later"
        ) from None


def _send(http: httpx.Client, kwargs: dict[str, Any]) -> httpx.Response:
    try:
        return http.request(**kwargs)
    except httpx.TransportError as exc:
        raise _transport_error(http.base_url, kwargs, exc) from None


class RequestBudget:
    """At most `size` requests in flight across everything that shares it.

    An export shares one between the listings and the repositories, so `--concurrency N`
    means N requests in flight in all: what a service's rate limits count, and what the
    network ideal of an export (requests ÷ N round trips) assumes.

    Threads (`send`) and asyncio tasks (`asend`) take from the same count, so the sync and
    async fetches honour one budget alike. A freed slot goes to whoever has waited longest:
    a thread is woken by its event; a task by its own loop (`call_soon_threadsafe`), so a
    task waiting for a slot never blocks its loop. A waiter that gives up (a cancelled
    task, an interrupted thread) leaves the queue, or hands on the slot it was just given.
    """

    def __init__(self, size: int = DEFAULT_CONCURRENCY) -> None:
        self.size = max(1, size)
        self._lock = threading.Lock()
        self._free = self.size
        #: Each waiter's hand-over: True when the slot reached it (a closed loop refuses).
        self._waiting: deque[Callable[[], bool]] = deque()

    def send(self, http: httpx.Client, kwargs: dict[str, Any]) -> httpx.Response:
        self._acquire()
        try:
            return _send(http, kwargs)
        finally:
            self._release()

    async def asend(self, http: httpx.AsyncClient, kwargs: dict[str, Any]) -> httpx.Response:
        await self._aacquire()
        exchange = asyncio.ensure_future(_asend(http, kwargs))
        exchange.add_done_callback(self._release_after)
        return await asyncio.shield(exchange)

    def _release_after(self, exchange: asyncio.Future[httpx.Response]) -> None:
        """An exchange's slot is free once it ends, though the task that asked for it was
        cancelled (a speculative page the listing no longer needs): the service serves a
        request whose asker went away until it has answered, and a slot freed at once would
        let one more in flight than the service should see. A thread's request, which
        cannot be cancelled, ends the same way."""
        if not exchange.cancelled():
            exchange.exception()  # retrieved here, whether or not its asker is still there
        self._release()

    def _take_or_wait(self, hand_over: Callable[[], bool]) -> bool:
        """Take a free slot (True), or join the queue with `hand_over` (False)."""
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return True
            self._waiting.append(hand_over)
            return False

    def _give_up(self, hand_over: Callable[[], bool]) -> None:
        """A waiter stops waiting: out of the queue, or, if its slot came, the slot passed on."""
        with self._lock:
            if hand_over in self._waiting:
                self._waiting.remove(hand_over)
                return
        self._release()

    def _release(self) -> None:
        with self._lock:
            while self._waiting:
                if self._waiting.popleft()():
                    return
            self._free += 1

    def _acquire(self) -> None:
        woken = threading.Event()

        def hand_over() -> bool:
            woken.set()
            return True

        if self._take_or_wait(hand_over):
            return
        try:
            woken.wait()
        except BaseException:  # KeyboardInterrupt while waiting
            self._give_up(hand_over)
            raise

    async def _aacquire(self) -> None:
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def hand_over() -> bool:
            try:
                loop.call_soon_threadsafe(_wake, woken)
            except RuntimeError:  # its loop has closed: nobody is left to take the slot
                return False
            return True

        if self._take_or_wait(hand_over):
            return
        try:
            await woken
        except BaseException:  # cancelled while waiting, or just after the slot came
            self._give_up(hand_over)
            raise


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _asend(http: httpx.AsyncClient, kwargs: dict[str, Any]) -> httpx.Response:
    try:
        return await http.request(**kwargs)
    except httpx.TransportError as exc:
        raise _transport_error(http.base_url, kwargs, exc) from None


def _transport_error(
    base_url: httpx.URL, kwargs: dict[str, Any], exc: httpx.TransportError
) -> APIConnectionError:
    return connection_error(base_url, kwargs["method"], kwargs["url"], exc)


# -- paging ---------------------------------------------------------------------------------


@dataclass
class FetchStats:
    """What a full fetch saw: the export's evidence of completeness."""

    listings: list[ListingStats] = field(default_factory=list)
    #: Deployments yielded: each id once, from the listing that defines the fleet.
    records: int = 0
    #: Deployments whose type came from the record, from a typed listing, or from neither.
    typed_by_record: int = 0
    typed_by_listing: int = 0
    untyped: int = 0
    #: Ids a typed listing returned that the fleet listing did not (the fleet changed).
    in_typed_listing_only: int = 0
    integration_ids: set[str] = field(default_factory=set)

    @property
    def pages(self) -> int:
        return sum(listing.pages for listing in self.listings)

    @property
    def duplicates(self) -> int:
        return sum(listing.duplicates for listing in self.listings if listing.role == "fleet")

    @property
    def complete(self) -> bool:
        """Whether every listing ended on an empty page."""
        return all(listing.ended_on_empty_page for listing in self.listings)


@dataclass
class _Listing:
    """One listing being paged: its filters, where to ask next, its requests in flight.

    Offsets are asked for ahead of time (o, o+step, o+2·step…). `step` starts at the page
    size asked for and becomes what the service really advances by, so a service that caps
    pages below `limit` is paged just as concurrently after its first answer.
    """

    filters: dict[str, Any]
    stats: ListingStats
    step: int
    next_offset: int
    tags_only: bool = False
    pending: deque[tuple[int, Any]] = field(default_factory=deque)
    done: bool = False
    #: Pages in a row that brought no record not already seen.
    stale_pages: int = 0

    @property
    def label(self) -> str | None:
        return _type_label(self.filters)

    def issue(self) -> int:
        offset = self.next_offset
        self.next_offset += self.step
        return offset

    def realign(self, offset: int, next_offset: int) -> list[Any]:
        """Ask from `next_offset` on; the requests already in flight are stale."""
        self.step = max(1, next_offset - offset)
        self.next_offset = next_offset
        stale = [request for _, request in self.pending]
        self.pending.clear()
        return stale


def _page_body(response: httpx.Response) -> tuple[list[Any], int]:
    body = _json(response, _decode_page)
    if isinstance(body, _RawPage):
        return body.resources, body.offset
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("resources"), list)
        or not isinstance(body.get("offset"), int)
        or isinstance(body.get("offset"), bool)
    ):
        raise ResponseFormatError(
            f"{describe(response.request)} returned JSON that is not a deployments page "
            "({resources: [...], offset: n}); check the base URL"
        )
    return body["resources"], body["offset"]


class _RawPage(msgspec.Struct, gc=False):
    resources: list[msgspec.Raw]
    offset: int


_RAW_PAGE = msgspec.json.Decoder(_RawPage)


def _decode_raw_page(content: bytes) -> _RawPage | None:
    """A list-deployments body with its records left as raw JSON text (checked to be JSON,
    in C); None for JSON that is not a page. Raises ValueError for text that is not JSON,
    so the transport retries it like any cut body.

    A record holding a value msgspec refuses though the grammar allows it (a lone surrogate,
    bytes that are not UTF-8) is no cut body: the page is read record by record
    (`rawjson.raw_page`) and the tables reject that record alone."""
    try:
        return _RAW_PAGE.decode(content)
    except msgspec.ValidationError:
        return None
    except msgspec.DecodeError:
        body = rawjson.raw_page(content)  # ValueError: not JSON by the grammar either
    try:
        return msgspec.convert(body, _RawPage)
    except msgspec.ValidationError:
        return None


def _decode_page(content: bytes) -> Any:
    """A list-deployments body parsed by orjson; a record orjson refuses though the grammar
    allows it stays raw JSON text, which the tables reject alone (`rawjson.loads`)."""
    return rawjson.loads(content)


@dataclass
class _Batch:
    """A page's records not seen before, with what the fetch needs of each."""

    records: list[Any] = field(default_factory=list)
    keys: list[RecordKeys] = field(default_factory=list)


class _Scheduler:
    """Pages the fleet listing, and the per-type listings that tag it, under one budget.

    Shared by the sync and async drivers, which only differ in how a request is started
    and awaited. The unfiltered listing (with the caller's filters) is the fleet: only its
    records are yielded, each id once, in its order. When `tag` is set and a record that
    does not name its own type arrives, one listing per deployment_type starts; they take
    the budget first, and the fleet's pages wait (`held`) until every typed listing has
    ended, so each record leaves tagged with the type whose listing returned it, or none.
    """

    def __init__(
        self,
        filters: dict[str, Any],
        *,
        page_size: int,
        concurrency: int,
        stats: FetchStats,
        limits: FetchLimits,
        tag: bool = False,
        raw: bool = False,
        start_offset: int = 0,
        progress: Progress | None = None,
        on_integration: Callable[[str], None] | None = None,
    ) -> None:
        self.filters = Filters.of(filters).query()
        self.on_integration = on_integration
        #: Read the fleet's records as raw JSON text (the tables' fast reader takes them).
        self.raw = raw
        _listing_request(start_offset, page_size, self.filters)  # validate before sending
        self.page_size = page_size
        self.concurrency = max(1, concurrency)
        self.stats = stats
        self.limits = limits
        self.progress = progress
        self.fleet = self._add(self.filters, start_offset, tags_only=False)
        self.seen: set[str] = set()
        #: id -> type from the typed listings; None when this fetch does not tag.
        self.tags: dict[str, str] | None = {} if tag else None
        self.tag_listings: list[_Listing] = []
        self.held: deque[tuple[Page, list[RecordKeys]]] = deque()

    def _add(self, filters: dict[str, Any], offset: int, *, tags_only: bool) -> _Listing:
        label = _type_label(filters)
        listing_stats = ListingStats(
            listing=label or "all",
            role="tags" if tags_only else "fleet",
            filters={k: getattr(v, "value", v) for k, v in filters.items()},
            page_size=self.page_size,
        )
        self.stats.listings.append(listing_stats)
        return _Listing(filters, listing_stats, self.page_size, offset, tags_only)

    @property
    def listings(self) -> list[_Listing]:
        return [self.fleet, *self.tag_listings]

    def _tagging_done(self) -> bool:
        return bool(self.tag_listings) and all(item.done for item in self.tag_listings)

    def to_start(self) -> Iterator[tuple[_Listing, int, dict[str, Any]]]:
        """Requests to start now, up to the budget: typed listings first (the fleet's held
        pages wait for them), then the least-served listing."""
        while sum(len(item.pending) for item in self.listings) < self.concurrency:
            # The fleet listing gets one request until its first answer, which tells the
            # real page size before speculating (a persistent fault is met once, not N
            # times); the typed listings start later and take the step it learnt.
            open_listings = [
                item
                for item in self.listings
                if not item.done and (item.stats.pages or item.tags_only or not item.pending)
            ]
            if not open_listings:
                return
            listing = min(open_listings, key=lambda item: (not item.tags_only, len(item.pending)))
            offset = listing.issue()
            request = _listing_request(offset, self.page_size, listing.filters)
            raw = self.raw or listing.tags_only  # typed listings only give ids: never parsed
            yield listing, offset, with_decoder(request, _decode_raw_page if raw else _decode_page)

    def heads(self) -> dict[Any, _Listing]:
        """The oldest request in flight of each listing (the only ones that may yield)."""
        return {item.pending[0][1]: item for item in self.listings if item.pending}

    def accept(self, listing: _Listing, response: httpx.Response) -> tuple[list[Page], list[Any]]:
        """Judge the answer to `listing`'s oldest request.

        Returns the fleet pages now ready to yield and the requests made stale.
        """
        offset, _ = listing.pending.popleft()
        records, response_offset = _page_body(response)
        stats = listing.stats
        stats.pages += 1
        stats.records += len(records)
        stats.largest_page = max(stats.largest_page, len(records))
        self._check_ceilings(listing)
        if not records:  # the one way a listing ends
            listing.done = stats.ended_on_empty_page = True
            stale = listing.realign(offset, offset + 1)
            if listing.tags_only and self._tagging_done():
                return self._release(), stale
            return [], stale
        kept = self._new_records(listing, offset, records)
        next_offset = response_offset
        if response_offset <= offset:
            next_offset = offset + len(records)
            self._fall_back(listing, offset, response_offset, next_offset)
        stale = []
        if next_offset != offset + listing.step:
            stale = listing.realign(offset, next_offset)
        if listing.tags_only:
            return [], stale
        if self.progress:
            self.progress.page(len(kept.records))
        if not kept.records:
            return [], stale
        page = Page(
            records=kept.records,
            source=f"page offset={offset}",
            deployment_type=listing.label,
            first_index=offset,
            tags=self.tags,
        )
        return self._route(page, kept.keys), stale

    def _check_ceilings(self, listing: _Listing) -> None:
        stats, limits = listing.stats, self.limits
        if stats.pages > limits.max_pages or stats.records > limits.max_records:
            raise PaginationError(
                f"the deployments listing ({stats.listing}) went past {limits.max_pages:,} "
                f"pages or {limits.max_records:,} records ({stats.pages:,} pages, "
                f"{stats.records:,} records) without an empty page; stopping: the service "
                "does not end the listing (raise FetchLimits if the fleet is really larger)"
            )

    def _new_records(self, listing: _Listing, offset: int, records: list[Any]) -> _Batch:
        """The records not seen before in this listing; pages with none are an error."""
        kept = _Batch()
        judged = fresh = 0
        tags, label = self.tags, listing.label or ""
        for record in records:
            keys = keys_of(record)
            record_id = keys.id
            if record_id is None:  # cannot be judged; the tables reject it
                if not listing.tags_only:
                    kept.records.append(record)
                    kept.keys.append(keys)
                continue
            judged += 1
            if listing.tags_only and tags is not None:
                if tags.get(record_id) == label:
                    listing.stats.duplicates += 1
                    continue
                tags[record_id] = label
            elif record_id in self.seen:
                listing.stats.duplicates += 1
                continue
            else:
                self.seen.add(record_id)
            fresh += 1
            if not listing.tags_only:
                kept.records.append(record)
                kept.keys.append(keys)
                self._note_integration(keys.integration_id)
        # One page of records already seen is what an insertion while paging leaves at the
        # tail (the next page is empty); two in a row mean the service ignores `offset`.
        listing.stale_pages = listing.stale_pages + 1 if judged and not fresh else 0
        if listing.stale_pages >= 2:
            raise PaginationError(
                f"the deployments listing ({listing.stats.listing}) at offset {offset} "
                f"brought only records already seen, {listing.stale_pages} pages in a row: "
                "the service seems to ignore `offset`; stopping instead of looping (nothing "
                "was written; report it to the service, or narrow the listing with filters)"
            )
        return kept

    def _note_integration(self, integration_id: str | None) -> None:
        """A new integration is named: say so at once (its repositories can be listed
        while the fleet is still paged, even while its pages wait for their tags)."""
        known = self.stats.integration_ids
        if integration_id is not None and integration_id not in known:
            known.add(integration_id)
            if self.on_integration is not None:
                self.on_integration(integration_id)

    def _fall_back(self, listing: _Listing, offset: int, answered: int, next_offset: int) -> None:
        listing.stats.offset_fallbacks += 1
        if listing.stats.offset_fallbacks == 1:
            warnings.warn(
                PagingWarning(
                    f"the deployments listing ({listing.stats.listing}) answered offset "
                    f"{answered} for the page at offset {offset}, which does not advance; "
                    f"carrying on from offset {next_offset} (request offset + records received)"
                ),
                stacklevel=2,
            )

    def _route(self, page: Page, keys: list[RecordKeys]) -> list[Page]:
        """Yield the page now, or hold it until the typed listings have tagged its records."""
        if self.tags is None or self._tagging_done():
            return self._count(page, keys)
        if not self.held and all(self._typed(k) for k in keys):
            return self._count(page, keys)
        if not self.tag_listings:
            self.tag_listings = [
                self._add({**self.filters, "deployment_type": t}, 0, tags_only=True)
                for t in deployment_types()
            ]
            for listing in self.tag_listings:
                listing.step = self.fleet.step
        self.held.append((page, keys))
        return []

    def _typed(self, keys: RecordKeys) -> bool:
        """Whether the record's type is settled now (its own, already tagged, or no id)."""
        return (
            keys.id is None
            or keys.own_type is not None
            or (self.tags is not None and keys.id in self.tags)
        )

    def _release(self) -> list[Page]:
        out = [page for held, keys in self.held for page in self._count(held, keys)]
        self.held.clear()
        return out

    def _count(self, page: Page, keys: list[RecordKeys]) -> list[Page]:
        stats = self.stats
        for record_keys in keys:
            if record_keys.id is None:
                continue
            stats.records += 1
            if record_keys.own_type is not None:
                stats.typed_by_record += 1
            elif page.listed_type(record_keys.id) is not None:
                stats.typed_by_listing += 1
            else:
                stats.untyped += 1
        return [page]

    def finish(self) -> None:
        """After the last page: the counts only the whole fetch can give, and its warnings."""
        if self.tags is not None:
            self.stats.in_typed_listing_only = sum(1 for i in self.tags if i not in self.seen)
        duplicates = self.fleet.stats.duplicates
        if duplicates:
            warnings.warn(
                ListingShiftedWarning(
                    f"the deployments listing shifted while paging: {duplicates} "
                    "record(s) came twice and were kept once"
                ),
                stacklevel=3,
            )

    def unfinished(self) -> list[Any]:
        return [request for item in self.listings for _, request in item.pending]


def _run_sync(
    client: Client, scheduler: _Scheduler, budget: RequestBudget | None = None
) -> Iterator[Page]:
    http = client.get_httpx_client()
    send = _send if budget is None else budget.send
    pool = ThreadPoolExecutor(scheduler.concurrency, thread_name_prefix="dims-fetch")
    try:
        while True:
            for listing, offset, kwargs in scheduler.to_start():
                listing.pending.append((offset, pool.submit(send, http, kwargs)))
            heads = scheduler.heads()
            if not heads:
                break
            finished, _ = wait(heads, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=list(heads).index):
                pages, stale = scheduler.accept(heads[future], future.result())
                for request in stale:
                    request.cancel()
                yield from pages
    finally:
        for request in scheduler.unfinished():
            request.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
    scheduler.finish()


async def _run_async(
    client: Client, scheduler: _Scheduler, budget: RequestBudget | None = None
) -> AsyncIterator[Page]:
    http = client.get_async_httpx_client()
    send = _asend if budget is None else budget.asend
    try:
        while True:
            for listing, offset, kwargs in scheduler.to_start():
                task = asyncio.ensure_future(send(http, kwargs))
                listing.pending.append((offset, task))
            heads = scheduler.heads()
            if not heads:
                break
            finished, _ = await asyncio.wait(heads, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(finished, key=list(heads).index):
                pages, stale = scheduler.accept(heads[task], task.result())
                for request in stale:
                    request.cancel()
                for page in pages:
                    yield page
    finally:
        leftover = scheduler.unfinished()
        for task in leftover:
            task.cancel()
        if leftover:
            await asyncio.gather(*leftover, return_exceptions=True)
    scheduler.finish()


def _type_label(filters: dict[str, Any]) -> str | None:
    value = filters.get("deployment_type")
    return getattr(value, "value", value)


def iter_pages(
    client: Client,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    start_offset: int = 0,
    progress: Progress | None = None,
    limits: FetchLimits | None = None,
    stats: FetchStats | None = None,
    **filters: Any,
) -> Iterator[Page]:
    """Every page of one listing, in order, each id once, up to `concurrency` requests in
    flight. The listing ends on an empty page (never on a short one)."""
    scheduler = _Scheduler(
        filters,
        **_common(page_size, concurrency, stats, limits, progress),
        start_offset=start_offset,
    )
    return _run_sync(client, scheduler)


def aiter_pages(
    client: Client,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    start_offset: int = 0,
    progress: Progress | None = None,
    limits: FetchLimits | None = None,
    stats: FetchStats | None = None,
    **filters: Any,
) -> AsyncIterator[Page]:
    """The async twin of `iter_pages`: same pages, same order, same errors."""
    scheduler = _Scheduler(
        filters,
        **_common(page_size, concurrency, stats, limits, progress),
        start_offset=start_offset,
    )
    return _run_async(client, scheduler)


def iter_deployments(client: Client, **options: Any) -> Iterator[dict[str, Any]]:
    """Every deployment record of one listing (raw dicts), following all pages."""
    for page in iter_pages(client, **options):
        yield from page.records


async def aiter_deployments(client: Client, **options: Any) -> AsyncIterator[dict[str, Any]]:
    async for page in aiter_pages(client, **options):
        for record in page.records:
            yield record


# -- a full fetch: the fleet, each record with its type -------------------------------------


def _common(
    page_size: int,
    concurrency: int,
    stats: FetchStats | None,
    limits: FetchLimits | None,
    progress: Progress | None,
) -> dict[str, Any]:
    """The scheduler options every listing function shares, defaults filled in."""
    return {
        "page_size": page_size,
        "concurrency": concurrency,
        "stats": stats if stats is not None else FetchStats(),
        "limits": limits or FetchLimits(),
        "progress": progress,
    }


def _fleet_scheduler(
    stats: FetchStats | None,
    page_size: int,
    concurrency: int,
    progress: Progress | None,
    limits: FetchLimits | None,
    raw: bool,
    on_integration: Callable[[str], None] | None,
    filters: dict[str, Any],
) -> _Scheduler:
    return _Scheduler(
        filters,
        **_common(page_size, concurrency, stats, limits, progress),
        tag=filters.get("deployment_type") is None,
        raw=raw,
        on_integration=on_integration,
    )


def fetch_deployments(
    client: Client,
    *,
    stats: FetchStats | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    limits: FetchLimits | None = None,
    raw: bool = False,
    on_integration: Callable[[str], None] | None = None,
    budget: RequestBudget | None = None,
    **filters: Any,
) -> Iterator[Page]:
    """Every deployment of the fleet, once, each page able to tell each record's type.

    The unfiltered listing (with the caller's filters) is the fleet. A record that names
    its type (`source_config.deployment_type`) keeps it; for the others the per-type
    listings run too, concurrently, and only tag (`Page.listed_type`): a deployment no
    typed listing returns keeps no type. With a `deployment_type` filter, that listing is
    the fleet and its type the tag. `stats` gets the evidence of completeness.

    With `raw`, records are raw JSON text (`msgspec.Raw`): never parsed into dicts here,
    they go to the tables' compiled lane (what `take_snapshot` uses).
    `on_integration(id)` is called for each integration the fleet names, as soon as a page
    names it (a `RepositoryFetcher.add` lists its repositories meanwhile); sharing a
    `budget` with it keeps the requests of both within one limit.
    """
    scheduler = _fleet_scheduler(
        stats, page_size, concurrency, progress, limits, raw, on_integration, filters
    )
    return _run_sync(client, scheduler, budget)


def afetch_deployments(
    client: Client,
    *,
    stats: FetchStats | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    limits: FetchLimits | None = None,
    raw: bool = False,
    on_integration: Callable[[str], None] | None = None,
    budget: RequestBudget | None = None,
    **filters: Any,
) -> AsyncIterator[Page]:
    """The async twin of `fetch_deployments`; a `budget` shared with `alist_repositories`
    (or with threads) keeps the requests of all within one limit."""
    scheduler = _fleet_scheduler(
        stats, page_size, concurrency, progress, limits, raw, on_integration, filters
    )
    return _run_async(client, scheduler, budget)


# -- the same fleet as the generated models ------------------------------------------------


def iter_deployment_models(client: Client, **options: Any) -> Iterator[Deployment]:
    """Every deployment of the fleet as the generated `Deployment` model, auto-paginated.

    For users who want typed attributes rather than dicts; it takes the options of
    `fetch_deployments`. A record the model cannot hold is a ResponseFormatError naming
    where it came from (`fetch_deployments` keeps such records aside instead).
    """
    for page in fetch_deployments(client, **options):
        for index, record in enumerate(page.records):
            yield _model(record, page, index)


async def aiter_deployment_models(client: Client, **options: Any) -> AsyncIterator[Deployment]:
    """The async twin of `iter_deployment_models`."""
    async for page in afetch_deployments(client, **options):
        for index, record in enumerate(page.records):
            yield _model(record, page, index)


def _model(record: Any, page: Page, index: int) -> Deployment:
    try:
        return Deployment.from_dict(record)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResponseFormatError(
            f"{page.source} record {index}: not a deployment as openapi.yaml describes it "
            f"({type(exc).__name__}: {str(exc)[:80]}); fetch_deployments yields raw records "
            "and the export keeps such ones aside in rejected_records"
        ) from None


# -- OAuth providers and repositories -------------------------------------------------------


def _get(client: Client, kwargs: dict[str, Any], budget: RequestBudget | None = None) -> Any:
    send = _send if budget is None else budget.send
    return _json(send(client.get_httpx_client(), kwargs))


async def _aget(client: Client, kwargs: dict[str, Any], budget: RequestBudget | None = None) -> Any:
    send = _asend if budget is None else budget.asend
    return _json(await send(client.get_async_httpx_client(), kwargs))


def _expect_list(body: Any, what: str) -> list[Any]:
    if not isinstance(body, list):
        raise ResponseFormatError(f"{what} returned JSON that is not an array; check the base URL")
    return body


def list_providers(client: Client) -> list[dict[str, Any]]:
    """Every OAuth provider record (raw dicts)."""
    return _expect_list(_get(client, list_oauth_providers_request_kwargs()), "list providers")


async def alist_providers(client: Client) -> list[dict[str, Any]]:
    body = await _aget(client, list_oauth_providers_request_kwargs())
    return _expect_list(body, "list providers")


def get_provider(client: Client, provider_id: str) -> dict[str, Any]:
    """One OAuth provider by its provider_id slug (e.g. `github-local-dev`)."""
    return _expect_object(_get(client, get_oauth_provider_request_kwargs(provider_id)))


async def aget_provider(client: Client, provider_id: str) -> dict[str, Any]:
    body = await _aget(client, get_oauth_provider_request_kwargs(provider_id))
    return _expect_object(body)


def _expect_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ResponseFormatError("get provider returned JSON that is not an object")
    return body


def _is_uuid(text: str) -> bool:
    try:
        UUID(text)
    except ValueError:
        return False
    return True


def repositories_request(client: Client, integration_id: str) -> dict[str, Any]:
    """The request listing an integration's repositories, under the client's code host; the
    id must be a UUID."""
    try:
        uuid = UUID(integration_id)
    except ValueError:
        raise ConfigurationError(
            f"integration id {integration_id[:80]!r} is not a UUID; the repositories of an "
            "integration are listed by its UUID"
        ) from None
    return list_integration_repositories_request_kwargs(code_host_of(client), uuid)


def list_repositories(
    client: Client, integration_id: str, *, budget: RequestBudget | None = None
) -> list[dict[str, Any]]:
    """The repositories reachable through one code-host integration."""
    body = _get(client, repositories_request(client, integration_id), budget)
    return _expect_list(body, "list repositories")


async def alist_repositories(
    client: Client, integration_id: str, *, budget: RequestBudget | None = None
) -> list[dict[str, Any]]:
    body = await _aget(client, repositories_request(client, integration_id), budget)
    return _expect_list(body, "list repositories")


@dataclass
class Repositories:
    """Repositories per integration, and the integrations the service did not know."""

    by_integration: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    #: Integration ids that are not UUIDs: no request can name them.
    malformed: list[str] = field(default_factory=list)
    #: The code-host segment the requests named.
    code_host: str = codehost.DEFAULT

    @property
    def all_not_found(self) -> bool:
        """Whether there were requests and every one answered 404: then the segment, not
        each integration, is almost surely what the service does not know."""
        return bool(self.missing) and not self.by_integration


def export_evidence(
    filters: Filters,
    stats: FetchStats,
    providers: Sized,
    repositories: Repositories,
) -> FetchEvidence:
    """What an export asked for and what came back: its manifest's `fetch` section (one
    workspace's, when it fetched several)."""
    return FetchEvidence(
        filters=dict(filters),
        deployments=stats.records,
        duplicates_dropped=stats.duplicates,
        deployment_type_from=TypeSources(
            stats.typed_by_record, stats.typed_by_listing, stats.untyped
        ),
        in_typed_listing_only=stats.in_typed_listing_only,
        complete=stats.complete,
        listings=[copy.copy(listing) for listing in stats.listings],
        oauth_providers=len(providers),
        integrations=Integrations(
            listed=len(repositories.by_integration),
            unknown_to_service=list(repositories.missing),
            not_uuid=list(repositories.malformed),
            code_host=repositories.code_host,
            all_not_found=repositories.all_not_found,
        ),
    )


class RepositoryFetcher:
    """Lists the repositories of each integration once, in the background, as ids arrive.

    An export feeds it the integration ids it sees while deployments stream past, so the
    repositories cost almost no extra wall time. An integration the service answers 404
    for (deleted since) is listed in `missing` rather than failing the export; when every
    one does, `Repositories.all_not_found` says so.
    """

    def __init__(
        self,
        client: Client,
        concurrency: int = DEFAULT_CONCURRENCY,
        *,
        budget: RequestBudget | None = None,
    ) -> None:
        self._client = client
        self._budget = budget
        self._pool = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="dims-repos")
        self._futures: dict[str, Any] = {}
        self._malformed: set[str] = set()

    def add(self, integration_id: str) -> None:
        """List the integration's repositories in the background (once)."""
        if not _is_uuid(integration_id):
            self._malformed.add(integration_id)
            return
        if integration_id not in self._futures:
            self._futures[integration_id] = self._pool.submit(
                list_repositories, self._client, integration_id, budget=self._budget
            )

    def result(self) -> Repositories:
        out = Repositories(malformed=sorted(self._malformed), code_host=code_host_of(self._client))
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
    given = set(integration_ids)
    ids = sorted(i for i in given if _is_uuid(i))
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(integration_id: str) -> list[dict[str, Any]] | None:
        async with gate:
            try:
                return await alist_repositories(client, integration_id)
            except NotFoundError:
                return None

    lists = await asyncio.gather(*(one(i) for i in ids))
    result = Repositories(malformed=sorted(given - set(ids)), code_host=code_host_of(client))
    for integration_id, repos in zip(ids, lists, strict=True):
        if repos is None:
            result.missing.append(integration_id)
        else:
            result.by_integration[integration_id] = repos
    return result
