"""A hostile service (issue 13, rows 7-9): bounded time, bounded memory, the key never shown.

Each test points dims at a small raw server on loopback (tests/hostile_servers.py) that
misbehaves on purpose: drips its body, sends without end, announces 2 GiB, streams a gzip
bomb, echoes the key it rejected. Each breach must end in its own one-line error that says
what the service did, both through the sync fetch (threads) and the async one; the server's
byte count shows the client stopped reading at the limit instead of reading everything.
Bounded time is shown by the call ending under a generous test-side deadline (`within`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_servers import (
    GENEROUS_S,
    announces,
    drip,
    drip_headers,
    echoes_key,
    endless_body,
    exact_size,
    garbles_key,
    gzip_bomb,
    serve,
    within,
)

from dims import _fetch as fetch
from dims._connection import MIB, ResponseLimits, RetryPolicy, connect
from dims._errors import (
    APIConnectionError,
    AuthenticationError,
    DeadlineExceededError,
    ResponseFormatError,
    ResponseTooLargeError,
)

DIMS = Path(sys.executable).parent / "dims"
FAST = RetryPolicy(retries=2, initial_backoff=0.005, max_backoff=0.01, jitter=0.0)
SMALL = ResponseLimits(deadline=30.0, max_body_bytes=1 * MIB, max_decoded_bytes=2 * MIB)
KEY = "dims-key-CANARY-hostile-4c1e9a"


def providers(base_url: str, *, mode: str, limits: ResponseLimits, **options) -> list:
    """list_providers through the sync or the async client, under the test-side deadline."""
    client = connect(base_url, retry=FAST, limits=limits, **options)
    if mode == "sync":
        return within(lambda: fetch.list_providers(client))
    return within(lambda: asyncio.run(fetch.alist_providers(client)))


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


def assert_one_line(error: BaseException, *names: str) -> None:
    text = str(error)
    assert text and "\n" not in text, text
    for name in names:
        assert name in text, (name, text)
    assert "proxy" not in text  # it says what the service did; it does not guess at proxies


# --- row 7: a body that drips -------------------------------------------------------------------


@MODES
def test_row07_a_dripping_body_ends_at_the_deadline(mode):
    """Every read gets a byte in time, so only a deadline for the whole request ends it."""
    with serve(drip(0.05)) as server:
        limits = ResponseLimits(deadline=1.0)
        with pytest.raises(DeadlineExceededError) as info:
            providers(server.base_url, mode=mode, limits=limits)
        assert len(server.requests) == 1  # a deadline is not retried
    assert_one_line(info.value, "GET", "/v2/auth/providers", "did not finish within 1 s")
    assert "still sending after" in str(info.value)


@MODES
def test_row07_the_deadline_covers_every_attempt(mode):
    """A service that never answers within the read timeout: retries stop at the deadline."""
    with serve(announces(100)) as server:
        policy = RetryPolicy(retries=49, initial_backoff=0.01, max_backoff=0.01, jitter=0.0)
        client = connect(
            server.base_url, retry=policy, timeout=0.3, limits=ResponseLimits(deadline=1.0)
        )
        call = (
            (lambda: fetch.list_providers(client))
            if mode == "sync"
            else (lambda: asyncio.run(fetch.alist_providers(client)))
        )
        with pytest.raises(DeadlineExceededError, match="did not finish within 1 s"):
            within(call)
        assert len(server.requests) < 50  # the deadline ended it, not the attempts


@MODES
def test_headers_that_drip_end_at_the_deadline(mode):
    """Issue 27 item 6: every read gets a byte in time but the response head never ends.
    httpx's timeouts are per read, so only the deadline ends it, in the sync fetch too."""
    with serve(drip_headers(0.2)) as server:
        with pytest.raises(DeadlineExceededError) as info:
            providers(server.base_url, mode=mode, limits=ResponseLimits(deadline=1.0))
        assert len(server.requests) == 1  # a deadline is not retried
        assert server.sent > 60  # the head was really dripping when the deadline came
    assert_one_line(info.value, "GET", "/v2/auth/providers", "did not finish within 1 s")


def test_the_cli_ends_an_export_whose_headers_drip_at_its_deadline(tmp_path):
    """As reported: `dims export --deadline` against a service dripping its headers."""
    with serve(drip_headers(0.2)) as server:
        options = ["--base-url", server.base_url, "--out", str(tmp_path / "o")]
        done = subprocess.run(
            [str(DIMS), "export", *options, "--deadline", "2", "--retries", "0"],
            capture_output=True,
            text=True,
            timeout=GENEROUS_S,
        )
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "did not finish within 2 s" in line, line
    assert not (tmp_path / "o" / "deployments").exists()


# --- row 8: bodies too large --------------------------------------------------------------------


@MODES
def test_row08_an_endless_body_stops_at_the_size_limit(mode):
    with serve(endless_body()) as server:
        with pytest.raises(ResponseTooLargeError) as info:
            providers(server.base_url, mode=mode, limits=SMALL)
        assert len(server.requests) == 1  # not retried
    assert_one_line(info.value, "/v2/auth/providers", "sent more than 1 MiB", "--max-body-mib")
    # memory stays bounded: reading stopped near the limit (plus what socket buffers hold)
    assert server.sent < 64 * MIB


@MODES
def test_row08_an_announced_2_gib_body_is_refused_before_reading(mode):
    with serve(announces(2 * 1024 * MIB)) as server, pytest.raises(ResponseTooLargeError) as info:
        providers(server.base_url, mode=mode, limits=ResponseLimits())
    assert_one_line(info.value, "sent more than 256 MiB", "2,147,483,648 bytes")


@MODES
@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_row08_a_compression_bomb_stops_at_the_decompressed_limit(mode, coding):
    with serve(gzip_bomb(coding)) as server:
        with pytest.raises(ResponseTooLargeError) as info:
            providers(server.base_url, mode=mode, limits=SMALL)
        sent = server.sent
    assert_one_line(info.value, f"{coding} body that expands beyond 2 MiB", "--max-decoded-mib")
    assert sent < 64 * MIB


@MODES
@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "until-close"])
def test_a_body_of_exactly_the_limit_is_accepted_and_one_byte_more_refused(mode, announced):
    """The limit is the largest body allowed, not the first refused, whether the service
    announces the length or not."""
    limits = ResponseLimits(max_body_bytes=MIB, max_decoded_bytes=4 * MIB)
    with serve(exact_size(MIB, announced=announced)) as server:
        assert providers(server.base_url, mode=mode, limits=limits) == []
    with (
        serve(exact_size(MIB + 1, announced=announced)) as server,
        pytest.raises(ResponseTooLargeError) as info,
    ):
        providers(server.base_url, mode=mode, limits=limits)
    assert_one_line(info.value, "sent more than 1 MiB", "--max-body-mib")


@MODES
def test_a_body_decoded_to_exactly_the_limit_is_accepted_and_one_byte_more_refused(mode):
    limits = ResponseLimits(max_body_bytes=MIB, max_decoded_bytes=2 * MIB)
    with serve(exact_size(2 * MIB, coding="gzip")) as server:
        assert providers(server.base_url, mode=mode, limits=limits) == []
    with (
        serve(exact_size(2 * MIB + 1, coding="gzip")) as server,
        pytest.raises(ResponseTooLargeError) as info,
    ):
        providers(server.base_url, mode=mode, limits=limits)
    assert_one_line(info.value, "gzip body that expands beyond 2 MiB", "--max-decoded-mib")


@pytest.mark.parametrize("extra", [0, 1])
def test_the_cli_takes_a_body_of_exactly_max_body_mib(tmp_path, extra):
    """`dims export --max-body-mib 1` against a service whose every answer is 1 MiB (+1)."""
    with serve(exact_size(MIB + extra)) as server:
        options = ["--base-url", server.base_url, "--out", str(tmp_path / "o"), "--allow-empty"]
        done = subprocess.run(
            [str(DIMS), "export", *options, "--max-body-mib", "1", "--retries", "0"],
            capture_output=True,
            text=True,
            timeout=GENEROUS_S,
        )
        assert server.requests, "the service was asked"
    if extra:
        assert done.returncode == 1 and "sent more than 1 MiB" in done.stderr, done.stderr
    else:
        assert done.returncode == 0, done.stderr


def test_row08_a_coding_dims_did_not_ask_for_is_refused():
    """Only gzip and deflate are asked for and decoded here, so every body is bounded."""

    async def handler(request, connection):
        await connection.head("200 OK", {"Content-Encoding": "br", "Content-Length": "2"})
        await connection.send(b"[]")

    with serve(handler) as server:
        with pytest.raises(ResponseFormatError, match="content-encoding 'br'") as info:
            providers(server.base_url, mode="sync", limits=SMALL)
        assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"
    assert_one_line(info.value)


def test_row08_bodies_within_the_limits_arrive_whole_and_decoded():
    """The bounded reader is also a correct one: gzip, deflate and plain bodies decode."""
    import gzip
    import zlib

    body = b'[{"id": "p1", "name": "github"}]'
    encoded = {"gzip": gzip.compress(body), "deflate": zlib.compress(body), "identity": body}
    for coding, data in encoded.items():

        async def handler(request, connection, coding=coding, data=data):
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
            await connection.head("200 OK", {**headers, "Content-Encoding": coding})
            await connection.send(data)

        with serve(handler) as server:
            for mode in ("sync", "async"):
                got = providers(server.base_url, mode=mode, limits=SMALL)
                assert got == [{"id": "p1", "name": "github"}], (coding, mode)


# --- row 9: a service that echoes the key ----------------------------------------------------


def leaks(text: str) -> bool:
    return KEY in text


@MODES
def test_row09_a_401_echoing_the_key_does_not_show_it(mode, caplog):
    caplog.set_level(logging.DEBUG)
    with serve(echoes_key()) as server:
        with pytest.raises(AuthenticationError) as info:
            providers(server.base_url, mode=mode, limits=SMALL, api_key=KEY)
        assert server.requests[0].headers["x-api-key"] == KEY  # the key was really sent...
    assert_one_line(info.value, "401", "bad key ***REDACTED***")  # ...and echoed, scrubbed
    assert not leaks(str(info.value)) and not leaks(repr(info.value))
    # httpx logs the reason phrase, httpcore the response headers: both echo the key
    assert "Unauthorized ***REDACTED***" in caplog.text
    assert "x-rejected-key" in caplog.text.lower() and not leaks(caplog.text)


def test_row09_the_cli_at_debug_level_does_not_show_an_echoed_key(tmp_path):
    """The key echoed in the body, a header (httpcore logs it at DEBUG) and the reason
    phrase (httpx logs it): stderr with --debug, traceback and all, never shows it."""
    with serve(echoes_key()) as server:
        env = {**os.environ, "DIMS_API_KEY": KEY}
        options = ["--base-url", server.base_url, "--retries", "0", "--out", str(tmp_path / "o")]
        for debug in ([], ["--debug"]):
            done = subprocess.run(
                [str(DIMS), *debug, "export", *options],
                capture_output=True,
                text=True,
                env=env,
                timeout=GENEROUS_S,
            )
            assert done.returncode == 1
            assert "401" in done.stderr and "REDACTED" in done.stderr
            assert ("DEBUG httpcore" in done.stderr) == bool(debug)  # headers were logged
            assert not leaks(done.stdout + done.stderr), done.stderr


# --- issue 27 item 10: keys that log lines escape ------------------------------------------------

#: Keys a log line cannot show as they are: repr, JSON and bytes escape `\\`, `"` and `'`, and
#: text that looks like an escape (`\\xff`, `\\u00e9`) gains a backslash. Each is made of
#: pieces (zqK1…) none of which may show anywhere.
PIECES = ("zqK1", "zqK2", "zqK3")
HARD_KEYS = {
    name: sep.join(PIECES)
    for name, sep in {
        "backslash": "\\",
        "double-quote": '"',
        "single-quote": "'",
        "both-quotes": "'\"",
        "looks-like-bytes": "\\xff",
        "looks-like-unicode": "\\u00e9",
        "all": "\\\"'\\xe9",
    }.items()
}


def pieces_in(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


@MODES
@pytest.mark.parametrize("key", HARD_KEYS.values(), ids=HARD_KEYS.keys())
def test_an_echoed_key_that_logs_escape_does_not_show(mode, key, caplog):
    """httpcore logs the headers and reason phrase as bytes reprs (`CAN\\\\ARY`), the body is
    JSON: at DEBUG, no escaped form of the key shows, nor in the error."""
    caplog.set_level(logging.DEBUG)
    with serve(echoes_key()) as server:
        with pytest.raises(AuthenticationError) as info:
            providers(server.base_url, mode=mode, limits=SMALL, api_key=key)
        assert server.requests[0].headers["x-api-key"] == key
    assert_one_line(info.value, "401", "bad key ***REDACTED***")
    assert "x-rejected-key" in caplog.text.lower()  # the headers were logged...
    assert not pieces_in(str(info.value) + repr(info.value) + caplog.text), caplog.text  # ...clean


@MODES
@pytest.mark.parametrize("key", [KEY, HARD_KEYS["all"], HARD_KEYS["both-quotes"]])
def test_a_transport_error_quoting_the_key_does_not_show_it(mode, key, caplog):
    """The HTTP stack's own error quotes the line it could not read, escaped (h11:
    `illegal header line: bytearray(b'Rejected zqK1\\\\zqK2')`): neither the error nor the
    log shows the key."""
    caplog.set_level(logging.DEBUG)
    with serve(garbles_key()) as server:
        with pytest.raises(APIConnectionError) as info:
            providers(server.base_url, mode=mode, limits=SMALL, api_key=key)
        assert server.requests[0].headers["x-api-key"] == key
    assert_one_line(info.value, "RemoteProtocolError", "illegal header line")
    assert "REDACTED" in str(info.value)  # the key was in it, and was replaced
    shown = str(info.value) + repr(info.value) + caplog.text
    assert not pieces_in(shown) and key not in shown, shown


@pytest.mark.parametrize("handler", [echoes_key, garbles_key])
def test_the_cli_at_debug_level_does_not_show_an_escaped_key(tmp_path, handler):
    key = HARD_KEYS["all"]
    with serve(handler()) as server:
        env = {**os.environ, "DIMS_API_KEY": key}
        options = ["--base-url", server.base_url, "--retries", "0", "--out", str(tmp_path / "o")]
        done = subprocess.run(
            [str(DIMS), "--debug", "export", *options],
            capture_output=True,
            text=True,
            env=env,
            timeout=GENEROUS_S,
        )
    assert done.returncode == 1
    assert "DEBUG httpcore" in done.stderr and "REDACTED" in done.stderr
    assert not pieces_in(done.stdout + done.stderr), done.stderr


@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_a_key_where_a_long_detail_is_cut_leaves_no_piece(content_type):
    """The error shows 300 characters of the service's detail: the key is replaced before
    the cut, or the cut would leave a piece of it that no longer matches."""
    key = HARD_KEYS["backslash"]

    async def handler(request, connection):
        detail = "x" * 290 + request.headers["x-api-key"] + " was rejected"  # cut at 299
        body = json.dumps({"detail": detail}) if "json" in content_type else detail
        data = body.encode()
        headers = {"Content-Type": content_type, "Content-Length": str(len(data))}
        await connection.head("401 Unauthorized", headers)
        await connection.send(data)

    with serve(handler) as server, pytest.raises(AuthenticationError) as info:
        providers(server.base_url, mode="sync", limits=SMALL, api_key=key)
    assert_one_line(info.value, "401", "xxx***RED")  # cut within the REDACTED, not the key
    assert not pieces_in(str(info.value)), str(info.value)
