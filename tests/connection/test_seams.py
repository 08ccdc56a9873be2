"""Where the connection layer meets what is above it: typed, and nothing private read.

The fetch layer picks the parser of a body per request (`with_decoder`) and reads what the
transport parsed (`decoded_json`), over a real server on loopback; the RetryTransport of a
client is the client's own field (`DimsClient.transport`), not read from the generated
client's private `_httpx_args`.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from hostile_servers import Connection, Handler, Request, serve

from dims import _fetch as fetch
from dims._connection import (
    Decoded,
    DimsClient,
    RetryTransport,
    connect,
    decoded_json,
    retry_transport,
    with_decoder,
)
from dims._errors import ConfigurationError, ResponseFormatError
from dims_client import Client


def answers(body: bytes, content_type: str = "application/json") -> Handler:
    """A 200 with `body`, whatever the request."""

    async def handler(request: Request, connection: Connection) -> None:
        headers = {"Content-Type": content_type}
        await connection.head(
            "200 OK", {**headers, "Content-Length": str(len(body)), "Connection": "close"}
        )
        await connection.send(body)

    return handler


def test_the_decoder_a_request_names_parses_its_body_once_and_the_response_carries_it():
    seen: list[bytes] = []

    def decoder(content: bytes) -> object:
        seen.append(content)
        return {"parsed by": "the request's decoder"}

    with serve(answers(b'{"a": 1}')) as server:
        http = connect(server.base_url).get_httpx_client()
        response = http.request(**with_decoder({"method": "GET", "url": "/x"}, decoder))
    assert decoded_json(response) == Decoded({"parsed by": "the request's decoder"})
    assert seen == [b'{"a": 1}']


def test_a_json_null_is_a_parsed_body_and_a_body_not_json_is_none():
    with serve(answers(b"null")) as server:
        http = connect(server.base_url).get_httpx_client()
        assert decoded_json(http.get("/x")) == Decoded(None)  # parsed: its value is None
    with serve(answers(b"hello", content_type="text/plain")) as server:
        http = connect(server.base_url).get_httpx_client()
        assert decoded_json(http.get("/x")) is None  # not JSON: the transport parsed nothing


def test_the_fetch_layer_reads_the_body_the_transport_parsed_sync_and_async():
    """A provider that is JSON `null` is parsed (once, by the transport) and refused by the
    fetch layer as not an object, the same through both clients."""
    with serve(answers(b"null")) as server:
        client = connect(server.base_url)
        with pytest.raises(ResponseFormatError, match="not an object"):
            fetch.get_provider(client, "github-local-dev")
        with pytest.raises(ResponseFormatError, match="not an object"):
            asyncio.run(fetch.aget_provider(client, "github-local-dev"))


def test_with_decoder_keeps_the_requests_other_extensions_and_changes_nothing_given():
    def trace(event: str, info: dict[str, object]) -> None:
        pass

    request = {"method": "GET", "url": "/x", "extensions": {"trace": trace}}
    asked = with_decoder(request, bytes.decode)
    assert asked["extensions"]["trace"] is trace and asked["url"] == "/x"
    assert request == {"method": "GET", "url": "/x", "extensions": {"trace": trace}}


def test_a_clients_retry_transport_is_its_own_and_kept_by_with_headers():
    transport = RetryTransport()
    client = connect("http://127.0.0.1:9", transport=transport)
    assert isinstance(client, DimsClient)
    assert retry_transport(client) is transport is client.transport
    assert retry_transport(client.with_headers({"X-Trace": "1"})) is transport
    made = connect("http://127.0.0.1:9")
    assert isinstance(retry_transport(made), RetryTransport)
    assert retry_transport(made) is not transport


def test_a_client_connect_did_not_make_has_no_retry_transport_to_give():
    plain = Client(base_url="http://127.0.0.1:9", httpx_args={"transport": httpx.HTTPTransport()})
    with pytest.raises(ConfigurationError, match=r"not made by dims\.connect"):
        retry_transport(plain)
