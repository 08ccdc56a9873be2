"""Publishing a snapshot to object storage, where there is no rename and no lock.

How a snapshot stays whole (docs/object-storage.md says the same for users):

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
   `_manifests/<day>.json` is written LAST, then staging is deleted (its commit record first).

What the next export does with a committed staging it finds (`_finish_or_remove`): when the
day's manifest is still the one the commit meant to replace and every staged file is there,
it publishes it (roll forward); when a staged file is gone (an export that had lost its
lease committed after its staging was cleared), it puts the replaced version back from
`_replaced/` (roll back): a day is never left half published, and a commit that cannot be
finished is never retried forever. A commit made against a version of the day that is no
longer there (the day was published again since) is stale: it is removed, the day untouched.

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

Fencing: a process can be paused (SIGSTOP, a frozen VM, a long GC) past its lease while
another export takes the dataset over. So a lease is checked before every step that
changes what readers see (each copy to `_replaced/`, the commit record, each table's copy,
the manifest, each orphan removed): its object must still be there with the generation
this export last wrote (every renewal writes the next one), and its last renewal must have
begun less than LEASE_STALE_S - 2 * LEASE_RENEW_S ago by this process's clock (no one can
have judged it stale). An export that fails the check (`LeaseLost`) publishes nothing more,
and its renewer never writes a lease that was taken away. Without a conditional write in the
store the check and the write it guards are two requests: a pause of that length exactly
between them is the one case fencing cannot catch.
"""

from __future__ import annotations

import contextlib
import json
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

from .._errors import ExportError, ExportWaitWarning, ManifestError, ObjectStoreError
from .._errors import LeaseLost as LeaseLost
from .._tables import TABLE_NAMES
from . import paths
from ._remote import Store, open_store
from ._target import KEEP_REPLACED, Version
from .manifest import Manifest, Replaced, decode, encode

#: How often a running export rewrites its lease, and when an unrenewed lease is dead (s).
#: (Read when used, so tests may shorten both; LEASE_RENEW_S must stay well below a third
#: of LEASE_STALE_S.)
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


def read_manifest(store: Store, day: date) -> Manifest | None:
    """The day's manifest, validated (None when the day has none)."""
    key = f"{paths.MANIFESTS}/{day.isoformat()}.json"
    return decode(store.read_bytes(key), store.uri_of(key))


def _fence_age() -> float:
    """How long after a renewal began the lease still certainly holds: no other export can
    have judged it stale yet (two renewals of margin for clocks and mtime rounding)."""
    return LEASE_STALE_S - 2 * LEASE_RENEW_S


class Lease:
    """One export's lease object, `_leases/<export id>.json`, with the generation it holds.

    Every write carries the next generation. Held means: not lost before, the object is
    there with the export's id and a generation this export wrote, and the last renewal
    began less than `_fence_age()` ago. Checks and renewals take turns (a lock), so a
    check never reads a renewal half done.
    """

    def __init__(self, store: Store, export_id: str) -> None:
        self.store = store
        self.export_id = export_id
        self.key = f"{paths.LEASES}/{export_id}.json"
        self.generation = 0  # the last one written and confirmed
        self.attempted = 0  # the last one sent (it may have landed though the PUT failed)
        self.renewed = time.monotonic()  # when the last confirmed write began
        self.lost: str | None = None
        self.turn = threading.Lock()

    def write(self) -> None:
        """Write the lease (its next generation), taking it (again) whoever had it."""
        with self.turn:
            self._put(time.monotonic())

    def _put(self, began: float) -> None:
        self.attempted += 1
        body = {
            "export_id": self.export_id,
            "generation": self.attempted,
            "renewed_at": datetime.now(UTC).isoformat(),
        }
        self.store.put_bytes(self.key, (json.dumps(body, indent=2) + "\n").encode())
        self.generation, self.renewed = self.attempted, began

    def renew(self) -> bool:
        """Write the next generation while the lease is held; never once it was lost (that
        would take the dataset back from the export that took it over). False when lost."""
        with self.turn:
            began, before = time.monotonic(), self.renewed
            if self._why_lost() is None:
                self._put(began)
                if time.monotonic() - before > _fence_age():  # paused between check and PUT
                    self.lost = "it was not renewed in time (this process was paused)"
            return self.lost is None

    def check(self, doing: str) -> None:
        """Raise LeaseLost unless the lease is held (see the class)."""
        with self.turn:
            why = self._why_lost()
        if why is not None:
            raise LeaseLost(
                f"the export lost its lease on {self.store.uri} ({why}) before {doing}, "
                "so it stopped: another export may be writing there"
            )

    def _why_lost(self) -> str | None:
        if self.lost is None:
            found = _lease_body(self.store.read_bytes(self.key))
            age = time.monotonic() - self.renewed  # after the read: a pause in it counts
            if found is None:
                self.lost = "another export found it expired and removed it"
            elif found.get("export_id") != self.export_id or not isinstance(
                found.get("generation"), int
            ):
                self.lost = "its lease object was replaced"
            elif not self.generation <= found["generation"] <= self.attempted:
                self.lost = f"its lease holds generation {found['generation']}, not its own"
            elif age > _fence_age():
                self.lost = f"its last renewal was {age:.0f} s ago (this process was paused)"
        return self.lost


class ObjectStoreTarget:
    """A snapshot published to an object-store prefix (see the module's docstring)."""

    def __init__(self, out: str, root: paths.Location, export_id: str) -> None:
        self.store = open_store(out)
        self.root = root
        self.dataset = str(root)[len(str(paths.location(out))) :].strip("/")
        self.data = self.store.sub(self.dataset) if self.dataset else self.store
        self.export_id = export_id
        self.staging = f"{paths.STAGING}/{export_id}"
        self.lease = Lease(self.store, export_id)

    @contextlib.contextmanager
    def exclusive(self, timeout: float) -> Iterator[None]:
        self.store.check_writable()  # a missing bucket or a refused key: one line, first
        self._acquire(timeout)
        stop = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(stop,), name="dims-lease", daemon=True)
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join()
            self.store.delete(self.lease.key)

    def _acquire(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        warned = False
        while True:
            self.lease.write()
            others = self._live_leases(self.lease.key)
            if not others:
                return
            self.store.delete(self.lease.key)  # withdraw, so that the other can go on
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
                self.store.delete(key)  # its export died (or was paused) without renewing it
            else:
                live.append(key)
        return live

    def _renew(self, stop: threading.Event) -> None:
        """Renew until stopped, or until the lease is lost: then never again."""
        while not stop.wait(LEASE_RENEW_S):
            try:
                if not self.lease.renew():
                    return
            except ObjectStoreError:
                continue  # the next renewal tries again (the fence counts the time)

    def prepare(self, day: date) -> Path:
        """Finish, undo or remove what dead exports left, then a local work folder."""
        for info in self.store.files(paths.STAGING, recursive=False):
            self._finish_or_remove(info.path)
        self._remove_orphans()
        return Path(tempfile.mkdtemp(prefix=f"dims-export-{day.isoformat()}-"))

    def _finish_or_remove(self, staging: str) -> None:
        """A dead export's staging. Not committed: it never was a snapshot, deleted. Committed
        against the day's current version: published (roll forward) when every staged file
        is there, else the current version put back (roll back). Already published, or
        committed against a version the day no longer has (stale): only deleted."""
        commit = _commit_record(self.store.read_bytes(f"{staging}/{_COMMIT}"))
        if commit is not None:
            data = self._dataset_of(commit)
            current = read_manifest(data, date.fromisoformat(commit.snapshot_date))
            now = current.export_id if current is not None else None
            if now != commit.export_id and now == _basis(commit):
                if self._staged_whole(staging, commit):
                    self._publish_staged(staging, commit)
                    return
                self._roll_back(data, commit, current)
        self._discard(staging)

    def _staged_whole(self, staging: str, commit: Manifest) -> bool:
        staged = {info.path for info in self.store.files(staging)}
        return all(f"{staging}/{key}" in staged for key in commit.files.values())

    def _roll_back(self, data: Store, commit: Manifest, current: Manifest | None) -> None:
        """Undo a commit that cannot be finished: each table it may have published gets the
        current manifest's file back from the copy kept before the commit (a table the day
        did not have is removed); that copy is then dropped, being in place again."""
        kept = commit.replaced.kept_in if commit.replaced is not None else None
        had = set(current.files.values()) if current is not None else set()
        for name, key in commit.files.items():
            self.lease.check(f"putting back {name} of an unfinished export")
            if kept and key in had:
                with contextlib.suppress(FileNotFoundError):
                    data.copy(f"{kept}/{key}", key)
            elif key not in had:
                data.delete(key)
        if kept:
            data.delete_tree(kept)

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
                    self.lease.check(f"removing {self.data.uri_of(info.path)}")
                    self.data.delete(info.path)

    def latest(self) -> tuple[date, int | None] | None:
        days = manifest_days(self.data)
        if not days:
            return None
        found = read_manifest(self.data, days[-1])
        return days[-1], found.deployments if found is not None else None

    def replacing(self, day: date, export_id: str) -> Replaced | None:
        manifest = read_manifest(self.data, day)
        if manifest is None:
            return None
        return Version.of(manifest).replaced(sorted(manifest.files), day, export_id)

    def publish(self, tmp: Path, day: date, manifest: Manifest) -> dict[str, paths.Location]:
        """Upload, keep, commit (fenced: a lost lease withdraws all of it), then publish."""
        files = manifest.files
        try:
            self._upload(tmp, files)
            if manifest.replaced is not None:
                self._keep(day, manifest.replaced.kept_in)
            self._commit(manifest)
        except LeaseLost as exc:
            self._withdraw(manifest)
            raise LeaseLost(f"{exc}; nothing of this export was published") from None
        try:
            self._publish_staged(self.staging, manifest)
        except LeaseLost as exc:
            raise LeaseLost(
                f"{exc} in the middle of publishing; the next export into {self.store.uri} "
                "finishes it or puts the earlier version back"
            ) from None
        return {name: self.data.uri_of(key) for name, key in files.items()}

    def _upload(self, tmp: Path, files: dict[str, str]) -> None:
        for key in files.values():
            self.store.upload(tmp / key, f"{self.staging}/{key}")

    def _keep(self, day: date, kept: str) -> None:
        """The current version of `day` copied aside (by the store) before it is replaced."""
        old = read_manifest(self.data, day)
        files = old.files.values() if old is not None else ()
        keys = [*files, f"{paths.MANIFESTS}/{day.isoformat()}.json"]
        for key in keys:
            self.lease.check(f"keeping {self.data.uri_of(key)}")
            with contextlib.suppress(FileNotFoundError):
                self.data.copy(key, f"{kept}/{key}")

    def _commit(self, manifest: Manifest) -> None:
        self.lease.check("committing its snapshot")
        self.store.put_bytes(f"{self.staging}/{_COMMIT}", encode(manifest))

    def _withdraw(self, manifest: Manifest) -> None:
        """After a lost lease, before the commit: this export's own staging and kept copy
        (no other export uses either), as far as the store lets it."""
        with contextlib.suppress(ObjectStoreError):
            self._discard(self.staging)
            if manifest.replaced is not None:
                self.data.delete_tree(manifest.replaced.kept_in)

    def _dataset_of(self, manifest: Manifest) -> Store:
        dataset = _dataset_prefix(manifest)
        return self.store.sub(dataset) if dataset else self.store

    def _publish_staged(self, staging: str, manifest: Manifest) -> None:
        """Staged files to their final keys (deployments last), the manifest, staging gone;
        the lease checked before each step."""
        dataset, data = _dataset_prefix(manifest), self._dataset_of(manifest)
        files = manifest.files
        for name in sorted(files, key=lambda n: n == _PUBLISH_LAST):
            self.lease.check(f"publishing {name}")
            try:
                self.store.copy(f"{staging}/{files[name]}", f"{dataset}/{files[name]}".lstrip("/"))
            except FileNotFoundError:
                raise ExportError(
                    f"cannot publish {name}: its staged copy {self.store.uri_of(staging)}/"
                    f"{files[name]} is gone (another export removed it); the next export "
                    f"into {self.store.uri} puts the earlier version back"
                ) from None
        day = manifest.snapshot_date
        self.lease.check("writing the manifest")
        data.put_bytes(f"{paths.MANIFESTS}/{day}.json", encode(manifest))
        self._discard(staging)

    def _discard(self, staging: str) -> None:
        """A staging deleted, its commit record first (a staging half deleted is no commit)."""
        self.store.delete(f"{staging}/{_COMMIT}")
        self.store.delete_tree(staging)

    def prune(self, day: date) -> None:
        """The newest KEEP_REPLACED versions of `day` kept; nothing removed by an export
        that has lost its lease (its snapshot is published: the next export prunes)."""
        try:
            self.lease.check("pruning replaced versions")
        except LeaseLost:
            return
        versions = sorted(
            info.path
            for info in self.data.files(paths.REPLACED, recursive=False)
            if info.base_name.startswith(f"{day.isoformat()}-")
        )
        for old in versions[:-KEEP_REPLACED] if KEEP_REPLACED else versions:
            self.data.delete_tree(old)


def _commit_record(data: bytes | None) -> Manifest | None:
    """A staging's commit record, or None when missing or not one (then it is no commit)."""
    try:
        commit = decode(data, "a commit record")
        if commit is not None:
            date.fromisoformat(commit.snapshot_date)
    except (ManifestError, ValueError):
        return None
    return commit


def _lease_body(data: bytes | None) -> dict[str, Any] | None:
    """A lease object's content, or None when missing or not a JSON object."""
    if data is None:
        return None
    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _dataset_prefix(manifest: Manifest) -> str:
    """Where a manifest's dataset is below `--out` ("" for the fleet's)."""
    return "" if manifest.dataset == "." else manifest.dataset


def _basis(commit: Manifest) -> str | None:
    """The export id of the version a commit replaces (None: the day was new)."""
    return commit.replaced.export_id if commit.replaced is not None else None


def _partition_day(key: str) -> date | None:
    """The day of `<table>/snapshot_date=<day>/<file>`, or None for any other key."""
    parts = key.split("/")
    if len(parts) != 3 or not parts[1].startswith(f"{paths.PARTITION}="):
        return None
    try:
        return date.fromisoformat(parts[1].split("=", 1)[1])
    except ValueError:
        return None
