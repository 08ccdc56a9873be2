"""Run the sandbox as a real HTTP server on loopback.

Tests, notebooks and `make demo` talk to the sandbox over a real socket so that the whole
client stack (httpx transport, timeouts, retries, connection handling) is exercised the
way it is against the real service. The server runs uvicorn in a background thread with
its own event loop, so any number of sandboxes can run in one process.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import uvicorn
from starlette.applications import Starlette

from .. import _codehost as codehost
from .._errors import ConfigurationError
from ._app import create_app, served_code_host
from ._faults import Faults, SandboxStats
from ._fleet import Fleet, generate_fleet, second_day

_STARTUP_TIMEOUT_S = 15.0
_SHUTDOWN_TIMEOUT_S = 10.0


@dataclass
class SandboxHandle:
    """A running sandbox: where it listens, what it serves, and what it has seen."""

    base_url: str
    host: str
    port: int
    fleet: Fleet
    stats: SandboxStats
    faults: Faults
    api_key: str | None = field(default=None, repr=False)
    #: The segment its repositories path has (`/v1/integrations/forge/<code_host>/…`).
    code_host: str = codehost.DEFAULT

    @property
    def headers(self) -> dict[str, str]:
        """Headers a client needs to be let in (the API key, when one is required)."""
        return {"X-Api-Key": self.api_key} if self.api_key is not None else {}


def _bind(host: str, port: int) -> socket.socket:
    """Bind before starting uvicorn, so the port (also an ephemeral one) is known up front."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio sets TCP_NODELAY on accepted connections only then, and
    # without it every small response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if port and sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigurationError(
                f"port {port} on {host} is already in use (another dims sandbox?): choose "
                "another with --port, or --port 0 for any free one"
            ) from None
        raise
    return sock


def _connection_aborter(server: uvicorn.Server) -> Callable[[dict[str, Any]], bool]:
    """Drop the TCP connection that carries an ASGI request, with a reset and no response.

    ASGI has no way to say "close without answering", so this finds the uvicorn protocol
    of the request by its client address and aborts its transport with SO_LINGER 0 (RST).
    """

    def abort(scope: dict[str, Any]) -> bool:
        client = scope.get("client")
        for connection in list(server.server_state.connections):
            if tuple(getattr(connection, "client", None) or ()) != tuple(client or ("",)):
                continue
            transport = connection.transport
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
            return True
        return False

    return abort


@contextlib.contextmanager
def run_sandbox(
    deployments: int = 500,
    seed: int = 0,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    faults: Faults | None = None,
    api_key: str | None = None,
    latency_ms: float = 0,
    fleet: Fleet | None = None,
    code_host: str | None = None,
    **fleet_kwargs: Any,
) -> Iterator[SandboxHandle]:
    """Serve a fleet on `host:port` (0 = a free port) for the duration of the `with` block.

    `fleet` is served as given; otherwise one is generated from `deployments`, `seed` and
    `fleet_kwargs` (see generate_fleet). The repositories are served under `code_host` only
    (default: the segment of the names the fleet speaks, `app.served_code_host`).
    The server is stopped and its thread joined on exit.
    """
    fleet = _fleet_to_serve(fleet, deployments, seed, fleet_kwargs)
    code_host = served_code_host(fleet, code_host)
    faults = faults or Faults()
    stats = SandboxStats()
    app = create_app(
        fleet,
        faults=faults,
        api_key=api_key,
        latency_ms=latency_ms,
        stats=stats,
        code_host=code_host,
    )
    server = _server(app)
    sock = _bind(host, port)
    with _serving(server, sock):
        bound_host, bound_port = sock.getsockname()[:2]
        url_host = f"[{bound_host}]" if ":" in bound_host else bound_host
        yield SandboxHandle(
            base_url=f"http://{url_host}:{bound_port}",
            host=bound_host,
            port=bound_port,
            fleet=fleet,
            stats=stats,
            faults=faults,
            api_key=api_key,
            code_host=code_host,
        )


def _fleet_to_serve(
    fleet: Fleet | None, deployments: int, seed: int, fleet_kwargs: dict[str, Any]
) -> Fleet:
    """The fleet given, else one generated; both at once is a mistake worth naming."""
    if fleet is None:
        return generate_fleet(deployments, seed, **fleet_kwargs)
    if fleet_kwargs:
        raise TypeError(
            f"fleet given, so these generate_fleet arguments make no sense: {sorted(fleet_kwargs)}"
        )
    return fleet


def _server(app: Starlette) -> uvicorn.Server:
    """A quiet uvicorn server for `app` that can reset the connection of a request."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        proxy_headers=False,  # scope["client"] must be the socket peer (see _connection_aborter)
        server_header=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    app.state.connection_aborter = _connection_aborter(server)
    return server


@contextlib.contextmanager
def _serving(server: uvicorn.Server, sock: socket.socket) -> Iterator[None]:
    """Run `server` on `sock` in a thread of its own, from started to stopped and joined."""
    port = sock.getsockname()[1]
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # SystemExit from a failed startup included
            failure.append(exc)

    thread = threading.Thread(target=run, name=f"dims-sandbox-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                host = sock.getsockname()[0]
                raise RuntimeError(
                    f"sandbox did not start on {host}:{port}: {failure or 'timeout'}"
                )
            time.sleep(0.005)  # readiness polling, not synchronization by sleeping
        yield
    finally:
        server.should_exit = True
        thread.join(_SHUTDOWN_TIMEOUT_S)
        if thread.is_alive():
            server.force_exit = True
            thread.join(_SHUTDOWN_TIMEOUT_S)
        sock.close()


def _announce(
    handle: SandboxHandle, deployments: int, seed: int, spec_records: bool, out: TextIO
) -> None:
    """What `dims sandbox` prints on start: where it listens and what it serves (never the
    API key itself)."""
    fleet, code_host = handle.fleet, handle.code_host
    print(f"dims sandbox: {deployments} deployments (seed {seed}) at {handle.base_url}", file=out)
    print(f"dims sandbox: workspaces (X-Tenant-Id): {', '.join(fleet.tenant_ids())}", file=out)
    hint = "" if code_host == codehost.DEFAULT else f" (dims export --code-host {code_host})"
    path = f"/v1/integrations/forge/{code_host}/{{integration_id}}/repos"
    print(f"dims sandbox: repositories at {path}{hint}", file=out)
    if spec_records:
        print(
            "dims sandbox: records drawn the spec's way (anything openapi.yaml admits: "
            "nulls, numbers no cluster runs, control characters in text)",
            file=out,
        )
    if fleet.names != "spec":
        print(
            f"dims sandbox: records spell fields as the published service does ({fleet.names})",
            file=out,
        )
    if handle.api_key is not None:
        print("dims sandbox: requests must carry the configured key in header X-Api-Key", file=out)


def serve(
    port: int = 8765,
    deployments: int = 500,
    seed: int = 0,
    latency_ms: float = 0,
    faults: Faults | None = None,
    api_key: str | None = None,
    *,
    host: str = "127.0.0.1",
    out: TextIO | None = None,
    rollout: tuple[str, float] | None = None,
    code_host: str | None = None,
    **fleet_kwargs: Any,
) -> None:
    """Run the sandbox in the foreground until Ctrl-C (the `dims sandbox` command).

    Prints the base URL, never the API key. `fleet_kwargs` go to generate_fleet;
    `rollout=(version, share)` makes the fleet's second day first (`second_day`: that share
    moved to the version, some scales and requests changed, a few deployments replaced; the
    same seed with and without it gives the demo's two days to export and diff). The
    repositories are served under `code_host` only (`github`: the published service's path).
    """
    out = out or sys.stdout
    fleet = generate_fleet(deployments, seed, **fleet_kwargs)
    if rollout is not None:
        second_day(fleet, *rollout)
    with run_sandbox(
        port=port,
        host=host,
        faults=faults,
        api_key=api_key,
        latency_ms=latency_ms,
        fleet=fleet,
        code_host=code_host,
    ) as handle:
        _announce(handle, deployments, seed, bool(fleet_kwargs.get("spec_records")), out)
        print("dims sandbox: press Ctrl-C to stop", file=out, flush=True)
        stop = threading.Event()
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            print("dims sandbox: stopped", file=out)
