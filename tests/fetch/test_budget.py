"""`--concurrency N` is N requests in flight in all: listings and repositories share them."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest
from hostile_servers import GENEROUS_S, JSON, Connection, Handler, Request, serve

from dims import _fetch as fetch
from dims._connection import connect
from dims._fetch import RequestBudget
from dims._snapshot import take_snapshot
from dims.sandbox import run_sandbox


@pytest.mark.parametrize("concurrency", [1, 3])
def test_an_export_keeps_its_requests_within_one_budget(tmp_path, concurrency):
    # Untyped records start the typed listings; one integration per 20 deployments gives
    # repository requests to list while the fleet is paged; latency makes them overlap.
    with run_sandbox(deployments=240, seed=4, untyped_every=5, latency_ms=40) as sandbox:
        result = take_snapshot(
            connect(sandbox.base_url), tmp_path, concurrency=concurrency, page_size=20, workers=0
        )
        stats = sandbox.stats
    paths = stats.requests
    assert any("/repos" in path for path in paths), paths  # repositories were listed
    assert sum(n for path, n in paths.items() if path == "/v2/deployments") > 12
    assert stats.peak_in_flight == concurrency  # used, and never more
    deployments = pq.read_table(result.paths["deployments"])
    assert deployments.num_rows == 240


class CountingBudget(RequestBudget):
    """A budget that counts the slots it has handed out (its own peak), and the exchanges
    given up while the service was still serving them (a task cancelled as its loop closed):
    the service may count such a request a little longer than the client does."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self._counts = threading.Lock()
        self.held = self.peak = self.abandoned = 0

    def _took(self) -> None:
        with self._counts:
            self.held += 1
            self.peak = max(self.peak, self.held)

    def _acquire(self) -> None:
        super()._acquire()
        self._took()

    async def _aacquire(self) -> None:
        await super()._aacquire()
        self._took()

    def _release(self) -> None:
        with self._counts:
            self.held -= 1
        super()._release()

    def _release_after(self, exchange: asyncio.Future[Any]) -> None:
        if exchange.cancelled():
            with self._counts:
                self.abandoned += 1
        super()._release_after(exchange)


def test_async_and_threaded_fetches_keep_their_requests_within_one_shared_budget():
    """The async fetch takes a budget as the sync one does, and one budget counts both: an
    async fleet fetch listing repositories as integrations arrive, beside a sync fetch in a
    thread, never have more than its size in flight together."""
    budget = CountingBudget(3)
    with run_sandbox(deployments=240, seed=4, untyped_every=5, latency_ms=40) as sandbox:
        client = connect(sandbox.base_url)

        async def run() -> tuple[set[str], set[str], list[list[dict]]]:
            listed: list[asyncio.Task[list[dict]]] = []

            def on_integration(integration_id: str) -> None:
                repos = fetch.alist_repositories(client, integration_id, budget=budget)
                listed.append(asyncio.ensure_future(repos))

            async def fleet() -> set[str]:
                pages = fetch.afetch_deployments(
                    client, page_size=20, concurrency=4, on_integration=on_integration,
                    budget=budget,
                )  # fmt: skip
                return {record["id"] async for page in pages for record in page.records}

            def threaded() -> set[str]:
                pages = fetch.fetch_deployments(client, page_size=20, concurrency=4, budget=budget)
                return {record["id"] for page in pages for record in page.records}

            async_ids, sync_ids = await asyncio.gather(fleet(), asyncio.to_thread(threaded))
            return async_ids, sync_ids, await asyncio.gather(*listed)

        async_ids, sync_ids, repositories = asyncio.run(run())
        stats = sandbox.stats
    assert len(async_ids) == 240 and sync_ids == async_ids
    assert repositories and all(isinstance(repos, list) for repos in repositories)
    assert budget.peak == 3  # used, and never more
    # the service saw no more, but for a request given up while it still served it
    assert 3 <= stats.peak_in_flight <= 3 + budget.abandoned


def test_a_task_cancelled_while_it_waits_for_the_budget_takes_no_slot_with_it():
    """A task that gives up waiting leaves the queue: the slot freed later goes to the next
    request, which is served (it would wait forever on a slot handed to the cancelled one)."""
    budget = RequestBudget(1)
    answer = threading.Event()
    with serve(answers_when(answer)) as server:
        url = f"{server.base_url}/anything"

        async def run() -> int:
            async with httpx.AsyncClient() as http:
                request = {"method": "GET", "url": url}
                first = asyncio.ensure_future(budget.asend(http, request))
                while not server.requests:  # the first holds the one slot, unanswered
                    await asyncio.sleep(0.01)
                waiting = asyncio.ensure_future(budget.asend(http, request))
                await asyncio.sleep(0)  # it queues for the slot
                waiting.cancel()
                await asyncio.gather(waiting, return_exceptions=True)
                answer.set()
                await first
                after = await asyncio.wait_for(budget.asend(http, request), GENEROUS_S)
                return after.status_code

        assert asyncio.run(asyncio.wait_for(run(), GENEROUS_S)) == 200
    assert len(server.requests) == 2  # the cancelled one never sent its request


def answers_when(answer: threading.Event) -> Handler:
    """A 200 `[]` once `answer` is set: until then, the request stays in flight."""

    async def handler(request: Request, connection: Connection) -> None:
        await asyncio.get_running_loop().run_in_executor(None, answer.wait, GENEROUS_S)
        await connection.head("200 OK", {**JSON, "Content-Length": "2", "Connection": "close"})
        await connection.send(b"[]")

    return handler
