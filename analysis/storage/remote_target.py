"""Publishing a snapshot to object storage, where there is no rename and no lock.

How a snapshot stays whole (the README's Data safety section says the same for users):

1. Uploaded aside. Every table's finished file goes to `DIR/_staging/<export id>/…` (the
   dataset's layout below it). Each object is one PUT or one multipart upload, which the
   store shows only once complete: a killed upload leaves no object at all. Nothing a
   reader looks at has changed yet; a crash here leaves only `_staging/`, which no reader
   lists (Hive-style readers skip `_` names) and the next export deletes.
2. Kept. For a day already present, its files and manifest are copied by the store itself
   (CopyObject) to `DIR/_replaced/<day>-<when>-<id>/`, like a local `_replaced/` version.
3. Committed. The new manifest goes to `_staging/<export id>/manifest.json`: from here on
   the export is decided, and a crash is finished by the next export (roll forward).
4. Published. Each table's object is copied from staging to its final key
   (`<table>/snapshot_date=<day>/part-0.parquet`, `deployments` last), then the manifest
   `_manifests/<day>.json` is written LAST, then staging is deleted.

What a reader may see while that runs:
- dims (reports, `dims sql`, `read_table`, `duckdb_connection`): only days that have a
  manifest, only the files it names, and only files whose `dims.export_id` is the manifest's.
  A day being replaced (between step 4's first copy and its manifest) reads as retried, then
  as a one-line "being replaced" error: never old and new tables mixed.
- a plain reader listing a table's prefix (Spark, Trino, DuckDB globbing `<table>/*/*.parquet`):
  whole files only, one per table and day; during step 4 a new day's tables appear one by one,
  and a replaced day's tables switch from old to new one by one (each object old or new, never
  partial). Read `_manifests/` (or wait for the export to finish) for snapshot consistency.

One writer per `--out`: there is no flock and conditional PUT (`If-None-Match`) is not
available through `pyarrow.fs`, so an export holds a lease object `DIR/_leases/<id>.json`,
renewed every LEASE_RENEW_S and stale after LEASE_STALE_S (ages compared on the store's own
clock: modification times of the leases). An export writes its lease and then lists the
leases: another live one means another export is running, and it withdraws, says so once
and waits (up to the lock timeout). Two that start together both withdraw and retry after a
random pause; two can never both proceed, because the second to list sees the first.
"""

from __future__ import annotations

import contextlib
import random
import re
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ..errors import ExportError
from ..tables import TABLE_NAMES
from . import paths
from .remote import Store, open_store
from .target import (
    KEEP_REPLACED,
    ExportWaitWarning,
    kept_in,
    manifest_bytes,
    manifest_version,
    parse_manifest,
)

#: How often a running export rewrites its lease, and when an unrenewed lease is dead (s).
LEASE_RENEW_S = 5.0
LEASE_STALE_S = 60.0
_WAIT_POLL_S = 0.5
#: Published last, so a reader keyed on deployments finds the other tables already there.
_PUBLISH_LAST = "deployments"
_MANIFEST_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.json$")
_COMMIT = "manifest.json"


def manifest_days(store: Store) -> list[date]:
    """The days of `store`'s dataset that have a manifest (whole snapshots), oldest first."""
    found = []
    for info in store.files(paths.MANIFESTS):
        match = _MANIFEST_NAME.match(info.base_name)
        if match and info.path == f"{paths.MANIFESTS}/{info.base_name}":
            with contextlib.suppress(ValueError):
                found.append(date.fromisoformat(match[1]))
    return sorted(found)


def read_manifest(store: Store, day: date) -> dict[str, Any] | None:
    return parse_manifest(store.read_bytes(f"{paths.MANIFESTS}/{day.isoformat()}.json"))


class ObjectStoreTarget:
    """A snapshot published to an object-store prefix (see the module's docstring)."""

    def __init__(self, out: str, root: paths.Location, export_id: str) -> None:
        self.store = open_store(out)
        self.root = root
        self.dataset = str(root)[len(str(paths.location(out))) :].strip("/")
        self.data = self.store.sub(self.dataset) if self.dataset else self.store
        self.export_id = export_id
        self.staging = f"{paths.STAGING}/{export_id}"

    @contextlib.contextmanager
    def exclusive(self, timeout: float) -> Iterator[None]:
        lease = f"{paths.LEASES}/{self.export_id}.json"
        self._acquire(lease, timeout)
        stop = threading.Event()
        renewer = threading.Thread(
            target=self._renew, args=(lease, stop), name="dims-lease", daemon=True
        )
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join()
            self.store.delete(lease)

    def _acquire(self, lease: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        warned = False
        while True:
            self.store.put_bytes(lease, self._lease_body())
            others = self._live_leases(lease)
            if not others:
                return
            self.store.delete(lease)  # withdraw, so that the other can go on
            if time.monotonic() >= deadline:
                raise ExportError(
                    f"another export kept {self.store.uri} busy for {timeout:.0f} s "
                    f"(lease {self.store.uri_of(others[0])}); export again when it has "
                    "finished, or choose another --out"
                )
            if not warned:
                warnings.warn(
                    ExportWaitWarning(
                        f"another export is writing to {self.store.uri}; waiting up to "
                        f"{timeout:.0f} s for it to finish (lease {self.store.uri_of(others[0])})"
                    ),
                    stacklevel=5,
                )
                warned = True
            time.sleep(_WAIT_POLL_S * (1 + random.random()))

    def _lease_body(self) -> bytes:
        return manifest_bytes(
            {"export_id": self.export_id, "renewed_at": datetime.now(UTC).isoformat()}
        )

    def _live_leases(self, mine: str) -> list[str]:
        """Other exports' leases renewed within LEASE_STALE_S of ours (dead ones removed)."""
        leases = {info.path: info.mtime for info in self.store.files(paths.LEASES)}
        now = leases.get(mine) or max((t for t in leases.values() if t), default=None)
        live = []
        for key, renewed in leases.items():
            if key == mine:
                continue
            if (
                now is not None
                and renewed is not None
                and ((now - renewed).total_seconds() > LEASE_STALE_S)
            ):
                self.store.delete(key)  # its export died without removing it
            else:
                live.append(key)
        return live

    def _renew(self, lease: str, stop: threading.Event) -> None:
        while not stop.wait(LEASE_RENEW_S):
            with contextlib.suppress(Exception):  # the next renewal tries again
                self.store.put_bytes(lease, self._lease_body())

    def prepare(self, day: date) -> Path:
        """Finish or remove what dead exports left, then a local work folder."""
        for info in self.store.files(paths.STAGING, recursive=False):
            self._finish_or_remove(info.path)
        self._remove_orphans()
        return Path(tempfile.mkdtemp(prefix=f"dims-export-{day.isoformat()}-"))

    def _finish_or_remove(self, staging: str) -> None:
        """A dead export's staging: committed (its manifest is there) → publish it, as the
        dead export would have; else it never was a snapshot → delete it."""
        manifest = parse_manifest(self.store.read_bytes(f"{staging}/{_COMMIT}"))
        if manifest is not None and isinstance(manifest.get("files"), dict):
            self._publish_staged(staging, manifest)
        else:
            self.store.delete_tree(staging)

    def _remove_orphans(self) -> None:
        """Objects under the tables' prefixes that no manifest names are deleted: those of a
        day without a manifest (a first publish that died before it), and any other file
        than a table's one part file in a day with one. (No manifest need be read: every
        manifest names exactly `<table>/snapshot_date=<day>/part-0.parquet`.)"""
        days = set(manifest_days(self.data))
        for table in TABLE_NAMES:
            for info in self.data.files(table):
                day = _partition_day(info.path)
                if day is not None and (day not in days or info.base_name != paths.PART_FILE):
                    self.data.delete(info.path)

    def latest(self) -> tuple[date, int | None] | None:
        days = manifest_days(self.data)
        if not days:
            return None
        found = read_manifest(self.data, days[-1]) or {}
        return days[-1], manifest_version(found)["deployments"]

    def replacing(self, day: date, export_id: str) -> dict[str, Any] | None:
        manifest = read_manifest(self.data, day)
        if manifest is None:
            return None
        tables = sorted(manifest.get("files") or {})
        return {**manifest_version(manifest), "tables": tables, "kept_in": kept_in(day, export_id)}

    def publish(self, tmp: Path, day: date, manifest: dict[str, Any]) -> dict[str, paths.Location]:
        files: dict[str, str] = manifest["files"]
        self._upload(tmp, files)
        if manifest["replaced"]:
            self._keep(day, manifest["replaced"]["kept_in"])
        self._commit(manifest)
        self._publish_staged(self.staging, manifest)
        return {name: self.data.uri_of(key) for name, key in files.items()}

    def _upload(self, tmp: Path, files: dict[str, str]) -> None:
        for key in files.values():
            self.store.upload(tmp / key, f"{self.staging}/{key}")

    def _keep(self, day: date, kept: str) -> None:
        """The current version of `day` copied aside (by the store) before it is replaced."""
        old = read_manifest(self.data, day) or {}
        keys = [*(old.get("files") or {}).values(), f"{paths.MANIFESTS}/{day.isoformat()}.json"]
        for key in keys:
            with contextlib.suppress(FileNotFoundError):
                self.data.copy(key, f"{kept}/{key}")

    def _commit(self, manifest: dict[str, Any]) -> None:
        self.store.put_bytes(f"{self.staging}/{_COMMIT}", manifest_bytes(manifest))

    def _publish_staged(self, staging: str, manifest: dict[str, Any]) -> None:
        """Staged files to their final keys (deployments last), the manifest, staging gone."""
        dataset = "" if manifest.get("dataset") in (None, ".") else str(manifest["dataset"])
        data = self.store.sub(dataset) if dataset else self.store
        files: dict[str, str] = manifest["files"]
        for name in sorted(files, key=lambda n: n == _PUBLISH_LAST):
            self.store.copy(f"{staging}/{files[name]}", f"{dataset}/{files[name]}".lstrip("/"))
        day = manifest["snapshot_date"]
        data.put_bytes(f"{paths.MANIFESTS}/{day}.json", manifest_bytes(manifest))
        self.store.delete_tree(staging)

    def prune(self, day: date) -> None:
        versions = sorted(
            info.path
            for info in self.data.files(paths.REPLACED, recursive=False)
            if info.base_name.startswith(f"{day.isoformat()}-")
        )
        for old in versions[:-KEEP_REPLACED] if KEEP_REPLACED else versions:
            self.data.delete_tree(old)


def _partition_day(key: str) -> date | None:
    """The day of `<table>/snapshot_date=<day>/<file>`, or None for any other key."""
    parts = key.split("/")
    if len(parts) != 3 or not parts[1].startswith(f"{paths.PARTITION}="):
        return None
    try:
        return date.fromisoformat(parts[1].split("=", 1)[1])
    except ValueError:
        return None
