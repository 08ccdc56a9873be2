"""Small hostile HTTP servers on loopback, for the tests of a service that misbehaves.

Each server is raw asyncio in a background thread, so it can do what no well-behaved
framework would: drip a body or its headers a byte at a time, announce or send an endless
body, stream a gzip bomb, echo the key it was sent. A server counts the bytes it managed
to send, so a test can show the client stopped reading instead of swallowing everything.

`within(seconds, fn)` runs a call under a generous test-side deadline: a hang fails the
test instead of stalling the suite (nothing here measures speed).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import threading
import zlib
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest

#: A generous bound for anything that must finish: far above the limits under test.
GENEROUS_S = 60.0
CHUNK = 64 * 1024


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]


class Connection:
    """One accepted connection: what the handler writes is counted."""

    def __init__(self, server: HostileServer, writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.writer = writer

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()
        self.server.sent += len(data)

    async def head(self, status: str, headers: dict[str, str]) -> None:
        lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
        await self.send("\r\n".join(lines).encode("latin-1"))


Handler = Callable[[Request, Connection], Awaitable[None]]


@dataclass
class HostileServer:
    handler: Handler
    base_url: str = ""
    #: Body and head bytes sent over every connection so far.
    sent: int = 0
    requests: list[Request] = field(default_factory=list)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = Connection(self, writer)
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, _ = line.split(" ", 2)
            headers = {}
            for header in filter(None, header_lines):
                name, _, value = header.partition(":")
                headers[name.strip().lower()] = value.strip()
            request = Request(method, target, headers)
            self.requests.append(request)
            await self.handler(request, connection)
        with contextlib.suppress(ConnectionError):
            writer.close()


@contextlib.contextmanager
def serve(handler: Handler) -> Iterator[HostileServer]:
    """Run `handler` for every request on 127.0.0.1 (a free port) until the block ends."""
    server = HostileServer(handler)
    loop = asyncio.new_event_loop()
    ready: Future[Any] = Future()

    async def start() -> asyncio.base_events.Server:
        return await asyncio.start_server(server._serve, "127.0.0.1", 0)

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            listener = loop.run_until_complete(start())
        except BaseException as exc:  # surface a failed start to the test
            ready.set_exception(exc)
            return
        ready.set_result(listener)
        loop.run_forever()

    thread = threading.Thread(target=run, name="hostile-server", daemon=True)
    thread.start()
    listener = ready.result(timeout=GENEROUS_S)
    host, port = listener.sockets[0].getsockname()[:2]
    server.base_url = f"http://{host}:{port}"
    try:
        yield server
    finally:

        async def stop() -> None:
            listener.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=GENEROUS_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=GENEROUS_S)
        loop.close()


def within(fn: Callable[[], Any], seconds: float = GENEROUS_S) -> Any:
    """fn()'s result (or its exception), or a test failure if it has not ended by then."""
    done: Future[Any] = Future()

    def run() -> None:
        try:
            done.set_result(fn())
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, name="within", daemon=True).start()
    try:
        return done.result(timeout=seconds)
    except TimeoutError:
        pytest.fail(f"did not finish within {seconds:g} s: unbounded")


# --- misbehaviours ------------------------------------------------------------------------------

JSON = {"Content-Type": "application/json"}


def drip(interval_s: float) -> Handler:
    """A 200 that announces a large JSON body and sends it one byte per `interval_s`."""

    async def handler(request: Request, connection: Connection) -> None:
        await connection.head("200 OK", {**JSON, "Content-Length": "1000000"})
        await connection.send(b"[")
        while True:
            await asyncio.sleep(interval_s)
            await connection.send(b" ")

    return handler


def drip_headers(interval_s: float) -> Handler:
    """A response whose head never ends: one byte of a header per `interval_s`, for ever
    (h11 would wait for 16 KiB of head, hours at this pace)."""

    async def handler(request: Request, connection: Connection) -> None:
        await connection.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: ")
        while True:
            await asyncio.sleep(interval_s)
            await connection.send(b"a")

    return handler


def endless_body() -> Handler:
    """A 200 whose body never ends (no length; it would be read until the socket closes)."""

    async def handler(request: Request, connection: Connection) -> None:
        await connection.head("200 OK", {**JSON, "Connection": "close"})
        await connection.send(b"[")
        block = b"0," * (CHUNK // 2)
        while True:
            await connection.send(block)

    return handler


def exact_size(size: int, *, announced: bool = True, coding: str = "identity") -> Handler:
    """A 200 whose JSON body is exactly `size` bytes once decoded (an empty page for the
    deployments listing, an empty list elsewhere, padded with spaces), announced by its
    Content-Length or ended by closing the connection; gzip-compressed if asked."""

    async def handler(request: Request, connection: Connection) -> None:
        empty = b'{"resources":[],"offset":0}' if "/deployments" in request.target else b"[]"
        body = empty[:-1] + b" " * (size - len(empty)) + empty[-1:]
        if coding == "gzip":
            body = gzip.compress(body)
        headers = {**JSON, "Connection": "close", "Content-Encoding": coding}
        if announced:
            headers["Content-Length"] = str(len(body))
        await connection.head("200 OK", headers)
        await connection.send(body)

    return handler


def announces(size: int) -> Handler:
    """A 200 announcing `size` bytes of body, then sending nothing more (never needed)."""

    async def handler(request: Request, connection: Connection) -> None:
        await connection.head("200 OK", {**JSON, "Content-Length": str(size)})
        await asyncio.sleep(GENEROUS_S)

    return handler


def gzip_bomb(coding: str = "gzip") -> Handler:
    """A 200 streaming compressed zeros forever (a few KB on the wire per expanded MiB)."""

    async def handler(request: Request, connection: Connection) -> None:
        await connection.head("200 OK", {**JSON, "Content-Encoding": coding})
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31 if coding == "gzip" else 15)
        await connection.send(compressor.compress(b"[") + compressor.flush(zlib.Z_SYNC_FLUSH))
        zeros = b"0," * (512 * 1024)
        while True:
            await connection.send(compressor.compress(zeros) + compressor.flush(zlib.Z_SYNC_FLUSH))

    return handler


def echoes_key(header: str = "x-api-key") -> Handler:
    """A 401 that echoes the key it was sent in its body, a header and its reason phrase."""

    async def handler(request: Request, connection: Connection) -> None:
        key = request.headers.get(header, "")
        body = json.dumps({"detail": f"bad key {key}: not valid for this tenant"}).encode()
        await connection.head(
            f"401 Unauthorized {key}",
            {**JSON, "X-Rejected-Key": key, "Content-Length": str(len(body))},
        )
        await connection.send(body)

    return handler


def garbles_key(header: str = "x-api-key") -> Handler:
    """A response whose head holds the key in a line that is no header: the client's HTTP
    stack fails (a transport-level error) with that line, escaped, in its message."""

    async def handler(request: Request, connection: Connection) -> None:
        key = request.headers.get(header, "")
        await connection.send(f"HTTP/1.1 401 Unauthorized\r\nRejected {key}\r\n\r\n".encode())

    return handler


def lists_records(records: list[bytes]) -> Handler:
    """A deployments listing of `records`, each given as its exact JSON text (so it may hold
    what no JSON encoder writes: a lone surrogate, 1e400), paged by the request's
    `offset` and `limit`; the per-type listings and every other route are empty."""

    async def handler(request: Request, connection: Connection) -> None:
        path, _, query = request.target.partition("?")
        params = dict(item.partition("=")[::2] for item in query.split("&") if item)
        body = b"[]"
        if path == "/v2/deployments":
            offset, limit = int(params.get("offset", 0)), int(params.get("limit", 100))
            page = [] if "deployment_type" in params else records[offset : offset + limit]
            body = b'{"resources":[%s],"offset":%d}' % (b",".join(page), offset + len(page))
        # The server closes each connection after one answer: saying so keeps the client
        # from sending its next request down a connection being closed (a reset).
        headers = {**JSON, "Content-Length": str(len(body)), "Connection": "close"}
        await connection.head("200 OK", headers)
        await connection.send(body)

    return handler
