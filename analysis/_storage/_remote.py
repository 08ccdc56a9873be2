"""A dataset root on object storage (`--out s3://bucket/prefix`, gs://, abfs://…).

The filesystem layer is `pyarrow.fs` (`FileSystem.from_uri`): already a dependency, native
(no Python callbacks on the read path), and it reads each cloud's standard credentials
itself: for S3 the AWS SDK's chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/
`AWS_SESSION_TOKEN`, `AWS_PROFILE` and `~/.aws/credentials`, instance and container roles),
`AWS_REGION`, and an S3-compatible store's endpoint from the standard `AWS_ENDPOINT_URL`
(honoured by pyarrow since 15; the pinned version is tested against a real S3 server).
gs:// and abfs:// come the same way with Google's and Azure's standard variables; only S3
is tested here.

Credentials are never shown: the secret values found in the environment are registered
with `dims._secrets.add_secret` (so every error line, log record and `--debug` traceback
is scrubbed), and a URI carrying credentials or options (`s3://key:secret@bucket`,
`?secret_key=…`, which pyarrow would accept) is refused, since URIs are printed in
summaries: `Store.uri` is always safe to show.
Every failure of the store is one ObjectStoreError line naming the key and what to check.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ObjectStoreError as ObjectStoreError
from .._errors import scrubbed_line
from .._secrets import add_secret
from . import paths

if TYPE_CHECKING:
    import pyarrow.fs as pafs

#: Environment variables whose values are credentials in one cloud or another.
_SECRET_VARIABLES = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_CLIENT_SECRET",
)
#: `scheme://user:secret@rest`: the user part, which pyarrow accepts as credentials.
_USER_PART = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^@/?#]*)@")


def public_uri(uri: str) -> str:
    """`uri` as it may be shown: no user part (credentials) and no query (options)."""
    return _USER_PART.sub(r"\1", uri).split("?", 1)[0].rstrip("/")


def _register_secrets(uri: str) -> None:
    for name in _SECRET_VARIABLES:
        value = os.environ.get(name)
        if value:
            add_secret(value)
    match = _USER_PART.match(uri)
    if match:
        for part in match[2].split(":"):
            if part:
                add_secret(part)


@dataclass(frozen=True)
class Store:
    """One dataset root on object storage: the filesystem and the root's path inside it.

    Keys are relative to the root, POSIX-style (`deployments/snapshot_date=…/part-0.parquet`).
    """

    fs: pafs.FileSystem
    #: The root inside `fs`: `bucket/prefix`.
    root: str
    #: The root as shown to people (no credentials, no options).
    uri: str

    def __repr__(self) -> str:
        return f"Store({self.uri!r})"

    def path(self, key: str) -> str:
        """The filesystem path of `key` (relative to the root)."""
        return f"{self.root}/{key}" if key else self.root

    def uri_of(self, key: str) -> str:
        return f"{self.uri}/{key}" if key else self.uri

    def sub(self, key: str) -> Store:
        """The store rooted at `key` below this root (a filtered dataset's root)."""
        return Store(self.fs, self.path(key), self.uri_of(key))

    @contextlib.contextmanager
    def failing(self, doing: str, key: str) -> Iterator[None]:
        """Any error of the store inside the block as one ObjectStoreError line."""
        import pyarrow as pa

        try:
            yield
        except FileNotFoundError:
            raise
        except (OSError, pa.ArrowException) as exc:
            raise ObjectStoreError(
                f"cannot {doing} {self.uri_of(key)}: {_reason(exc)}; check the credentials "
                "(AWS_* variables or profile), AWS_ENDPOINT_URL and that the bucket exists"
            ) from None

    def read_bytes(self, key: str) -> bytes | None:
        """The object's content, or None when there is no such object."""
        try:
            with self.failing("read", key), self.fs.open_input_stream(self.path(key)) as stream:
                data: bytes = stream.read()
                return data
        except FileNotFoundError:
            return None

    def put_bytes(self, key: str, data: bytes) -> None:
        """Write one object whole: it appears when complete, never in part."""
        with self.failing("write", key), self.fs.open_output_stream(self.path(key)) as stream:
            stream.write(data)

    def upload(self, local: Path, key: str) -> None:
        """A local file as one object (one PUT or multipart upload, visible when complete)."""
        import pyarrow.fs as pafs

        with self.failing("upload", key):
            pafs.copy_files(
                str(local),
                self.path(key),
                source_filesystem=pafs.LocalFileSystem(),
                destination_filesystem=self.fs,
            )

    def copy(self, source: str, target: str) -> None:
        """A copy made by the store itself (S3 CopyObject): the target appears whole.

        A missing source is FileNotFoundError, as for a read (pyarrow reports S3's NoSuchKey
        on a copy as a bare OSError)."""
        with self.failing("copy to", target):
            try:
                self.fs.copy_file(self.path(source), self.path(target))
            except OSError as exc:
                if "NO_SUCH_KEY" not in str(exc):
                    raise
                raise FileNotFoundError(
                    errno.ENOENT, "no such object", self.uri_of(source)
                ) from None

    def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError), self.failing("delete", key):
            self.fs.delete_file(self.path(key))

    def delete_tree(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError), self.failing("delete", key):
            self.fs.delete_dir(self.path(key))

    def files(self, key: str, recursive: bool = True) -> list[pafs.FileInfo]:
        """The objects under `key` (none when it does not exist), their paths relative to the
        root; `recursive=False` lists one level, "folders" included."""
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(self.path(key), allow_not_found=True, recursive=recursive)
        with self.failing("list", key):
            found = self.fs.get_file_info(selector)
        cut = len(self.root) + 1
        return [
            pafs.FileInfo(info.path[cut:], info.type, mtime=info.mtime, size=info.size)
            for info in found
            if recursive is False or info.type == pafs.FileType.File
        ]

    def check_writable(self) -> None:
        """Fail now, before any fetch, when the bucket is missing or cannot be written: an
        object is written under `_leases/` and removed."""
        import pyarrow.fs as pafs

        bucket = self.root.split("/", 1)[0]
        with self.failing("reach", ""):
            info = self.fs.get_file_info(bucket)
        if info.type != pafs.FileType.Directory:
            raise ObjectStoreError(
                f"the bucket of {self.uri} does not exist (or these credentials cannot see "
                "it): create it first; dims never creates buckets"
            )
        probe = f"{paths.LEASES}/probe-{secrets.token_hex(6)}"
        self.put_bytes(probe, b"")
        self.delete(probe)


def open_store(uri: str) -> Store:
    """The store a URI names, credentials from the environment (never shown)."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    _register_secrets(uri)
    shown = public_uri(uri)
    if shown != uri.rstrip("/"):
        raise ObjectStoreError(
            f"{shown}: credentials or options in the URI are not accepted (a URI shows in "
            "summaries, logs and process lists); use the AWS_* variables or AWS_PROFILE, "
            "and AWS_ENDPOINT_URL for an S3-compatible store"
        )
    try:
        fs, root = pafs.FileSystem.from_uri(uri)
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise ObjectStoreError(f"cannot use {shown} as a dataset: {_reason(exc)}") from None
    if not root.strip("/"):
        raise ObjectStoreError(f"{shown} names no bucket: use s3://bucket/prefix")
    return Store(fs, root.rstrip("/"), shown)


def _reason(exc: BaseException) -> str:
    """The store's message, first line, credentials scrubbed (a --debug traceback shows it)."""
    text = str(exc).strip()
    return scrubbed_line(text.splitlines()[0] if text else type(exc).__name__, 200)
