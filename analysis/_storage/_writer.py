"""Write one snapshot of every table as a Hive-partitioned Parquet dataset, safely.

Layout (the dataset contract in docs/dataset.md; paths from `dims._storage.paths`):
`DIR/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet`, zstd, explicit schemas from
`dims._tables`, `timestamp[us, UTC]`, and in every file's metadata the schema version
(`dims.schema_version`), `dims.snapshot_at`, `dims.export_id` and `dims.filters`. Every table
is written, empty ones too, so readers always find every table of a snapshot.

How it is used (`SnapshotWriter`, shaped like pyarrow's ParquetWriter): `open_snapshot`
checks and holds the output before anything is read, `write` takes each batch's finished
tables (every copy of a deployment several workspaces list, each row with the workspace that
listed it), `publish` the counts and the fetch's evidence
(or each workspace's outcome) and writes the manifest; `abandon` (or leaving its `with`
block by an exception) leaves nothing behind. The writer never pulls a source or calls
back into one: `dims._snapshot` pulls the pages, reads them into tables and waits for
the providers and repositories, then hands over what it has.

Why it is written the way it is:
- Streaming: tables are written as row groups every `row_group_records` deployments, so
  memory is bounded by one batch, not by the fleet. Each row group is written by background
  threads while the caller reads the next batch (Parquet encoding and compression release
  the GIL); at most one row group is in flight.
- Every copy written, decided once: a deployment listed by several workspaces is written as
  often as it was listed, and which copy the day keeps is decided at publish, under the lock,
  by one ranking (`dims._copies`, applied by `_workspaces.settle`); the workspace that
  listed each row (`LISTED_BY`) is kept beside the files, never in them. Nothing written is
  taken back before then.
- One writer per folder: the whole export holds an advisory lock (`fcntl.flock`) on
  `DIR/.dims.lock`; a second export into the same `DIR` says so once and waits (bounded by
  `lock_timeout`). The kernel drops the lock when its process dies, whatever its PID or
  container, so a work folder found while holding the lock belongs to no live export and is
  removed: stale clean-up is judged by the lock, never by PIDs.
- Written aside: the snapshot is written under `DIR/.tmp-<date>-<random>/` (a dot folder no
  reader's glob matches) and published only once every table is complete. A failure, an
  exception from the source, a rejected record in strict mode or Ctrl-C removes it.
- Published whole or not at all (`_publish`): a new day's partition folders appear with one
  rename each; for a day already present each file is swapped with `os.replace` (atomic per
  file, so a reader opening a file sees the old one or the new one, never neither), after a
  hard link of the old file went into `DIR/_replaced/<day>-<when>-<id>/` (the same layout, so
  that folder is itself a readable dataset). Every step is journaled; when one fails, the
  steps done are undone and nothing of the day is published. The manifest
  (`DIR/_manifests/<day>.json`) is the last step: its presence says the day is whole.
- Never outside `DIR`: a partition folder that is a symbolic link is moved aside as a link
  (its target is never touched); a table folder or any other folder dims writes through
  that is a link is refused with a one-line error before anything is written.
- Published through a seam (`dims._storage._target.Target`): the tables are always
  written into a local work folder first; `LocalTarget` (below) publishes it into a folder as
  described here, `remote_target.ObjectStoreTarget` onto object storage (`--out s3://…`),
  where there is no rename and no flock: every file uploaded whole to
  `DIR/_staging/<export id>/`, the replaced day copied aside server-side to `_replaced/`,
  a commit record, then each table's object copied to its final key and the manifest
  written LAST; readers trust only manifests and files of the manifest's export; a lease
  object in `DIR/_leases/` instead of the lock; a crashed export's staging is removed (or,
  once committed, finished) by the next export. Its module docstring has the details.
- Nothing destroyed by accident: a filtered export goes to its own dataset root
  (`DIR/filtered/<slug>/`), an export that found 0 deployments where the latest snapshot
  had some is refused unless `allow_empty`, and the last `KEEP_REPLACED` replaced versions
  of each day are kept.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from types import TracebackType

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

from dims._atomic import fsync_file, fsync_folder
from dims._copies import LISTED_BY
from dims._errors import ExportError
from dims._evidence import UNSET, UnsetType, Workspace
from dims._options import ExportOptions, Filters, FilterValue
from dims._tables import SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE_NAMES, table_schemas

from . import paths
from ._target import KEEP_REPLACED, ExportWaitWarning, Target, Version
from ._workspaces import settle
from .manifest import (
    MANIFEST_VERSION,
    DayWorkspace,
    FetchSection,
    Identity,
    Manifest,
    Replaced,
    decode,
    encode,
)

__all__ = [
    "Counts",
    "LocalTarget",
    "Published",
    "SnapshotWriter",
    "check_writable",
    "describe_replaced",
    "open_snapshot",
    "open_target",
]

PARTITION = paths.PARTITION
Location = paths.Location
PART_FILE = paths.PART_FILE
#: Published last, so a reader keyed on deployments finds the other tables already there.
_PUBLISH_LAST = "deployments"
_LOCK_POLL_S = 0.1
#: How the writer keeps `LISTED_BY` aside (`pc.dictionary_encode`'s type).
_LISTED = pa.dictionary(pa.int32(), pa.string())


@dataclass(frozen=True)
class Counts:
    """What reading the records counted, for the manifest (the tables layer's `Flattener`)."""

    records: int
    rejected: int
    original_name_conflicts: int = 0
    unreadable_quantities: int = 0
    unreadable_values: int = 0


@dataclass(frozen=True)
class Published:
    """A snapshot in place: its dataset root, each table's file, the manifest written."""

    root: Location
    paths: dict[str, Location]
    manifest: Manifest


def describe_replaced(replaced: Replaced, root: Location) -> str:
    """One line on the version a re-run replaced, and where it is kept."""
    taken = replaced.snapshot_at or "at an unknown time"
    count = replaced.deployments
    rows = f", {count:,} deployments" if isinstance(count, int) else ""
    return (
        f"replaced the earlier snapshot of that day (taken {taken}{rows}); "
        f"kept in {paths.join(root, *replaced.kept_in.split('/'))}"
    )


def open_snapshot(
    out_dir: str | os.PathLike[str], options: ExportOptions, filters: Filters
) -> SnapshotWriter:
    """Begin writing one snapshot into `out_dir` (a folder or an object-store URI): the
    output checked and held (lock or lease) and a work folder made, before any record."""
    return SnapshotWriter(out_dir, options, filters)


class SnapshotWriter:
    """One snapshot being written, as pyarrow's ParquetWriter writes a file: opened
    (`open_snapshot`), fed (`write`), then `publish`ed whole, or `abandon`ed.

    It is handed finished tables and data, and never asks anyone for more: the caller
    (`dims._snapshot`) pulls the source, reads the records and waits for what the source
    lists beside them. What must happen while no other export can change the dataset
    happens here, under the lock held from `open_snapshot` to the end: the work folder made,
    the copies of a deployment decided and a day of workspaces made whole, an empty export refused,
    the replaced version looked at, the publish, the pruning. Used as a context manager,
    a block that raises abandons it: nothing of the snapshot is left.
    """

    def __init__(
        self, out_dir: str | os.PathLike[str], options: ExportOptions, filters: Filters
    ) -> None:
        self.options = options
        self.snapshot_at = _utc(options.snapshot_at or datetime.now(UTC))
        self.day = options.snapshot_date or self.snapshot_at.date()
        chosen = filters.sorted()
        export_id = secrets.token_hex(8)
        self.target = open_target(out_dir, chosen, export_id)
        dataset = _relative(self.target.root, out_dir)
        self.identity = _identity(self.day, self.snapshot_at, export_id, dataset, chosen)
        self._held = contextlib.ExitStack()
        with self._held:  # undone at once unless everything below succeeds
            self._held.enter_context(self.target.exclusive(options.lock_timeout))
            self.tmp = self.target.prepare(self.day)
            self._held.callback(shutil.rmtree, self.tmp, ignore_errors=True)
            metadata = _file_metadata(self.snapshot_at, export_id, chosen)
            schemas = table_schemas(options.include_env_values)
            self._files: _TableFiles | None = _TableFiles(schemas, self.tmp, self.day, metadata)
            self._held = self._held.pop_all()
        self._rows = dict.fromkeys(TABLE_NAMES, 0)
        #: Per table, the workspace that listed each row written (`LISTED_BY`), in the
        #: files' order; dictionary-encoded (a few workspaces), so a few bytes a row.
        self._listed: dict[str, list[pa.Array]] = {name: [] for name in TABLE_NAMES}

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.abandon()  # after publish: nothing left to undo

    def write(self, tables: Mapping[str, pa.Table]) -> None:
        """One batch's tables (every table, in order), written with the next row group.
        A table's `LISTED_BY` column (which workspace listed each row) is kept aside, for
        the publish to decide between copies."""
        files = self._open_files()
        files.add({name: self._listed_aside(name, table) for name, table in tables.items()})
        if files.pending >= self.options.row_group_records:
            files.flush()

    def _listed_aside(self, name: str, table: pa.Table) -> pa.Table:
        if LISTED_BY not in table.column_names:
            return table
        listed = table[LISTED_BY].combine_chunks()
        self._listed[name].append(pc.dictionary_encode(listed))
        return table.drop_columns([LISTED_BY])

    def publish(
        self,
        counts: Counts,
        fetch: FetchSection | None = None,
        workspaces: Sequence[Workspace] | None = None,
    ) -> Published:
        """Publish the snapshot with its manifest: `fetch` is the evidence of one export;
        an export of `workspaces` (each one's outcome) has its day made whole first."""
        try:
            self._finish_files()
            evidence = fetch if fetch is not None else FetchSection()
            manifest = self._manifest(counts, evidence, workspaces)
            published = self.target.publish(self.tmp, self.day, manifest)
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.target.prune(self.day)
        finally:
            self.abandon()  # the lock released, the work folder gone, whatever happened
        return Published(self.target.root, published, manifest)

    def abandon(self) -> None:
        """Stop: the files closed, the work folder removed, the output released."""
        if self._files is not None:
            self._files.abandon()
            self._files = None
        self._held.close()

    def _open_files(self) -> _TableFiles:
        if self._files is None:
            raise ExportError("the snapshot's files are finished: nothing more can be written")
        return self._files

    def _finish_files(self) -> None:
        """Every row group written and every file's footer (once)."""
        if self._files is not None:
            self._files.close()
            self._rows = dict(self._files.rows)
            self._files = None

    def _manifest(
        self, counts: Counts, fetch: FetchSection, workspaces: Sequence[Workspace] | None
    ) -> Manifest:
        """The whole manifest: a day of workspaces settled, an empty export refused, and
        `replaced` asked of the target now, just before publishing, under the lock."""
        rows, records = self._rows, counts.records
        day: dict[str, DayWorkspace] | UnsetType = UNSET
        if workspaces is not None:
            listed = {name: pa.chunked_array(c, _LISTED) for name, c in self._listed.items()}
            settled = settle(
                self.tmp, self.target.root, self.day, workspaces, self.identity, rows, listed
            )
            rows, fetch, day = settled.rows, settled.fetch, settled.workspaces
            records -= settled.read_twice
        if not self.options.allow_empty:
            _refuse_empty(self.target, rows["deployments"], counts)
        return Manifest(
            **msgspec.structs.asdict(self.identity),
            records=records,
            rejected=counts.rejected,
            original_name_conflicts=counts.original_name_conflicts,
            unreadable_quantities=counts.unreadable_quantities,
            unreadable_values=counts.unreadable_values,
            rows=rows,
            files={name: paths.part_path(name, self.day) for name in rows},
            replaced=self.target.replacing(self.day, self.identity.export_id),
            written_at=datetime.now(UTC).isoformat(),
            fetch=fetch,
            workspaces=day,
        )


def _identity(
    day: date, at: datetime, export_id: str, dataset: str, filters: dict[str, FilterValue]
) -> Identity:
    """The manifest's first fields: which snapshot this is, of which dataset."""
    return Identity(
        manifest_version=MANIFEST_VERSION,
        snapshot_date=day.isoformat(),
        snapshot_at=at.isoformat(),
        export_id=export_id,
        schema_version=SCHEMA_VERSION,
        dataset=dataset,
        filters=filters,
    )


def open_target(
    out_dir: str | os.PathLike[str], filters: Mapping[str, object], export_id: str
) -> Target:
    """Where the snapshot goes: a local folder (created here) or an object-store prefix."""
    root = paths.dataset_root(out_dir, filters)
    if paths.is_remote(out_dir):
        from ._remote_target import ObjectStoreTarget

        return ObjectStoreTarget(str(out_dir), root, export_id)
    out = Path(out_dir)
    _create(out)
    return LocalTarget(out, Path(root))


def _relative(root: paths.Location, out_dir: str | os.PathLike[str]) -> str:
    """The dataset root relative to `--out` ("." for the fleet's), POSIX-style."""
    inside = str(root)[len(str(paths.location(out_dir))) :].replace(os.sep, "/").strip("/")
    return inside or "."


def _file_metadata(
    at: datetime, export_id: str, filters: Mapping[str, object]
) -> dict[bytes, bytes]:
    """What every Parquet file of the snapshot carries in its metadata."""
    return {
        SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode(),
        paths.SNAPSHOT_AT_KEY: at.isoformat().encode(),
        paths.EXPORT_ID_KEY: export_id.encode(),
        paths.FILTERS_KEY: json.dumps(filters).encode(),
    }


class _TableFiles:
    """One Parquet writer per table in the work folder, fed row group by row group in the
    background.

    Compression and encoding release the GIL: the previous row group is written in the
    background while the next batches are read. One row group in flight at most, so memory
    stays bounded. Tables are written by two threads, which matters for the last row group,
    when nothing else is left to do.
    """

    def __init__(
        self, schemas: Mapping[str, pa.Schema], tmp: Path, day: date, metadata: dict[bytes, bytes]
    ) -> None:
        self.rows = dict.fromkeys(TABLE_NAMES, 0)
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.background = ThreadPoolExecutor(2, thread_name_prefix="dims-parquet")
        self.writing: list[Future[None]] = []
        self.group: list[dict[str, pa.Table]] = []
        try:
            for name, schema in schemas.items():
                folder = paths.partition_dir(tmp, name, day)
                folder.mkdir(parents=True)
                self.writers[name] = pq.ParquetWriter(
                    folder / PART_FILE, schema.with_metadata(metadata), compression="zstd"
                )
        except BaseException:
            self.abandon()
            raise

    def add(self, tables: dict[str, pa.Table]) -> None:
        """One batch's tables, written with the next row group."""
        self.group.append(tables)

    @property
    def pending(self) -> int:
        """Deployments added since the last row group."""
        return sum(tables["deployments"].num_rows for tables in self.group)

    def _write(self, name: str, table: pa.Table) -> None:
        self.writers[name].write_table(table)
        self.rows[name] += table.num_rows

    def flush(self) -> None:
        """The batches added as one row group, handed to the background once the last is done."""
        tables = _concatenated(self.group)
        self.group.clear()
        self._wait()
        by_size = sorted(tables.items(), key=lambda item: -item[1].nbytes)
        self.writing.extend(
            self.background.submit(self._write, name, table)
            for name, table in by_size
            if table.num_rows
        )

    def _wait(self) -> None:
        while self.writing:
            self.writing.pop().result()

    def close(self) -> None:
        """Every batch written (the last ones as the last row group) and every file finished
        (its footer written)."""
        if self.group:
            self.flush()
        self._wait()
        for writer in self.writers.values():
            writer.close()
        self.writers.clear()
        self.background.shutdown(wait=True)

    def abandon(self) -> None:
        """After a failure: never close a writer the background thread is still using."""
        for future in self.writing:
            with contextlib.suppress(BaseException):
                future.result()
        for writer in self.writers.values():
            with contextlib.suppress(Exception):
                writer.close()
        self.background.shutdown(wait=True)


def _concatenated(group: list[dict[str, pa.Table]]) -> dict[str, pa.Table]:
    """The batches' tables as one row group's tables (their chunks are not copied)."""
    if len(group) == 1:
        return group[0]
    return {name: pa.concat_tables([tables[name] for tables in group]) for name in group[0]}


def _utc(moment: datetime) -> datetime:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class LocalTarget:
    """A snapshot published to a local folder: a lock, a work folder inside it, journaled
    renames (see the module's docstring)."""

    def __init__(self, out: Path, root: Path) -> None:
        self.out = out
        self.root: paths.Location = root
        self.folder = root

    def exclusive(self, timeout: float) -> contextlib.AbstractContextManager[None]:
        return _exclusive(self.out, timeout)

    def prepare(self, day: date) -> Path:
        return _prepare(self.out, self.folder, day)

    def latest(self) -> tuple[date, int | None] | None:
        days = paths.partition_days(self.folder, "deployments")
        if not days:
            return None
        return days[-1], _deployments_version(self.folder, days[-1]).deployments

    def replacing(self, day: date, export_id: str) -> Replaced | None:
        return _replacing(self.folder, day, export_id)

    def publish(self, tmp: Path, day: date, manifest: Manifest) -> dict[str, Location]:
        return dict(_publish(tmp, self.folder, day, manifest))

    def prune(self, day: date) -> None:
        _prune_replaced(self.folder, day)


# --- the folder: created, locked, checked --------------------------------------------------


def _cannot_write(where: Path, exc: OSError) -> ExportError:
    return ExportError(
        f"cannot write to {where}: {exc.strerror or exc}; "
        "choose another --out or fix the folder's permissions"
    )


def _create(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _cannot_write(out, exc) from None


@contextlib.contextmanager
def _exclusive(out: Path, timeout: float) -> Iterator[None]:
    """Hold `out`'s advisory lock for the block; wait (saying so once) while another has it."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    path = out / paths.LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ExportError(
                f"{path} is a symbolic link; dims never writes through links in --out: "
                "remove it and export again"
            ) from None
        raise _cannot_write(out, exc) from None
    try:
        if not _try_lock(fd):
            warnings.warn(
                ExportWaitWarning(
                    f"another export is writing to {out}; waiting up to {timeout:.0f} s "
                    f"for it to finish (lock {path})"
                ),
                stacklevel=4,
            )
            deadline = time.monotonic() + timeout
            while not _try_lock(fd):
                if time.monotonic() >= deadline:
                    raise ExportError(
                        f"another export kept {out} locked for {timeout:.0f} s ({path}); "
                        "export again when it has finished, or choose another --out"
                    )
                time.sleep(_LOCK_POLL_S)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _prepare(out: Path, root: Path, day: date) -> Path:
    """Under the lock: refuse links, clear dead exports' work folders, make this one's."""
    _refuse_links(out, root)
    _remove_stale_temporaries(out)
    tmp = out / f"{paths.TMP_PREFIX}{day.isoformat()}-{secrets.token_hex(6)}"
    _check_permissions(root, day)
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    return tmp


def _check_permissions(root: Path, day: date) -> None:
    """Every folder the day's files go into can be written (checked before any fetch)."""
    for name in TABLE_NAMES:
        for folder in (root / name, paths.partition_dir(root, name, day)):
            if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
                raise ExportError(
                    f"cannot write to {folder}: permission denied; "
                    "choose another --out or fix the folder's permissions"
                )


def _refuse_links(out: Path, root: Path) -> None:
    """Every folder dims writes through, below `out`, must be a real folder, not a link."""
    inside = root.relative_to(out)
    names = (*TABLE_NAMES, paths.MANIFESTS, paths.REPLACED)
    link = paths.first_link(out, *(inside / name for name in names))
    if link is not None:
        raise ExportError(
            f"{link} is a symbolic link; dims writes only inside --out and never "
            "through links it did not create: replace the link with a folder, or "
            "choose another --out"
        )


def check_writable(
    out_dir: str | os.PathLike[str],
    snapshot_date: date | None = None,
    filters: Filters | None = None,
) -> None:
    """Fail now, before any fetch, when the snapshot could not be written to `out_dir`.

    Only probes: it takes no lock and removes nothing, so it is safe beside a running export.
    """
    if paths.is_remote(out_dir):
        from ._remote import open_store

        open_store(str(out_dir)).check_writable()
        return
    out = Path(out_dir)
    root = Path(paths.dataset_root(out, filters))
    _create(out)
    _refuse_links(out, root)
    probe = out / f"{paths.TMP_PREFIX}probe-{secrets.token_hex(6)}"
    try:
        probe.mkdir()
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    # A running export sweeps work folders (probes too) while it holds the lock: gone is fine
    with contextlib.suppress(FileNotFoundError):
        probe.rmdir()
    _check_permissions(root, snapshot_date or datetime.now(UTC).date())


def _remove_stale_temporaries(out: Path) -> None:
    """Remove the work folders of exports that are gone.

    Called only while holding the lock, which every export holds for as long as its work
    folder exists: any work folder seen now belongs to a dead export, whatever its PID.
    """
    for child in out.iterdir():
        if paths.TMP_NAME.match(child.name) and child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)


# --- what is there already ------------------------------------------------------------------


def _read_manifest(path: Path) -> Manifest | None:
    """The manifest at `path`, validated; None when there is none."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode(data, path)


def _deployments_version(root: Path, day: date) -> Version:
    """snapshot_at, export_id and deployments rows of the version of `day` in `root`: its
    manifest's, else what its deployments files say."""
    manifest = _read_manifest(paths.manifest_path(root, day))
    if manifest is not None:
        return Version.of(manifest)
    folder = paths.partition_dir(root, "deployments", day)
    try:
        files = sorted(folder.glob("*.parquet"))
        metas = [pq.read_metadata(path) for path in files]
    except (OSError, pa.ArrowException):
        return Version()  # unreadable: nothing known about it
    if not metas:
        return Version()
    keys = metas[0].metadata or {}
    at, made_by = (keys.get(key) for key in (paths.SNAPSHOT_AT_KEY, paths.EXPORT_ID_KEY))
    return Version(
        at.decode() if at else None,
        made_by.decode() if made_by else None,
        sum(meta.num_rows for meta in metas),
    )


def _refuse_empty(target: Target, exported: int, counts: Counts) -> None:
    """No deployments now, some in the latest snapshot: the listing, not the fleet, is empty."""
    if exported:
        return
    latest = target.latest()
    if latest is None or not latest[1]:
        return
    day, before = latest
    raise ExportError(
        f"the export found 0 deployments ({counts.records:,} records read, "
        f"{counts.rejected:,} rejected) but the latest snapshot in {target.root} "
        f"({day.isoformat()}) has {before:,}; nothing was published. Check the filters "
        "and the service, or pass --allow-empty to publish an empty snapshot"
    )


def _replacing(root: Path, day: date, export_id: str) -> Replaced | None:
    """The version of `day` this export will replace, and where it will be kept; or None."""
    present = [
        name for name in TABLE_NAMES if os.path.lexists(paths.partition_dir(root, name, day))
    ]
    if not present and not os.path.lexists(paths.manifest_path(root, day)):
        return None
    return _deployments_version(root, day).replaced(present, day, export_id)


# --- publishing -----------------------------------------------------------------------------


class _Journal:
    """The steps of a publish that changed the dataset, each with how to undo it."""

    def __init__(self) -> None:
        self.undo: list[Callable[[], object]] = []

    def did(self, undo: Callable[[], object]) -> None:
        self.undo.append(undo)

    def rollback(self) -> list[str]:
        """Undo every step, newest first; what could not be undone, as text."""
        failed = []
        for step in reversed(self.undo):
            try:
                step()
            except OSError as exc:
                failed.append(f"{exc.strerror or exc} ({exc.filename})")
        self.undo.clear()
        return failed


class _Keeper:
    """The folder a replaced version is kept in, created on first use."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def place(self, *parts: str) -> Path:
        assert self.folder is not None, "nothing is replaced without a keep folder"
        path = self.folder.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def _publish(tmp: Path, root: Path, day: date, manifest: Manifest) -> dict[str, Path]:
    """Move every table's finished partition into place, then the manifest; all or nothing."""
    partition = paths.partition_name(day)
    names = [n for n in TABLE_NAMES if n != _PUBLISH_LAST] + [_PUBLISH_LAST]
    new_manifest = tmp / "manifest.json"
    new_manifest.write_bytes(encode(manifest))
    for path in (*(p for n in names for p in (tmp / n / partition).iterdir()), new_manifest):
        fsync_file(path)
    replaced = manifest.replaced
    keeper = _Keeper(root / replaced.kept_in if replaced is not None else None)
    journal = _Journal()
    published: dict[str, Path] = {}
    try:
        for name in names:
            published[name] = _publish_table(tmp / name / partition, root / name, keeper, journal)
        _publish_file(new_manifest, paths.manifest_path(root, day), keeper, journal)
    except BaseException as exc:
        failed = journal.rollback()
        if keeper.folder is not None and not failed:
            shutil.rmtree(keeper.folder, ignore_errors=True)
            _rmdir_if_empty(keeper.folder.parent)
        if not isinstance(exc, OSError):
            raise
        undone = (
            "the earlier version is back in place"
            if not failed
            else f"could not undo {len(failed)} step(s): {failed[0]}; "
            f"what was moved aside is in {keeper.folder}"
        )
        raise ExportError(
            f"cannot publish the {day.isoformat()} snapshot into {root}: "
            f"{exc.strerror or exc} ({exc.filename}); nothing of that day was published and "
            f"{undone}"
        ) from None
    return published


def _publish_table(source: Path, table_dir: Path, keeper: _Keeper, journal: _Journal) -> Path:
    """One table's partition: a new folder appears whole; an existing one is swapped file by
    file, each old file kept (linked) first; a link in its place is moved aside, not followed."""
    if not os.path.lexists(table_dir):
        table_dir.mkdir()
        journal.did(partial(_rmdir_if_empty, table_dir))
    target = table_dir / source.name
    kept_parts = (table_dir.name, source.name)
    if target.is_symlink():
        kept = keeper.place(*kept_parts)
        os.rename(target, kept)  # the link itself moves; its target is never touched
        journal.did(partial(os.rename, kept, target))
    if not os.path.lexists(target):
        os.rename(source, target)  # the complete folder appears at once
        journal.did(partial(os.rename, target, source))
        fsync_folder(table_dir)
        return target
    if not target.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "not a folder where a partition goes", str(target))
    new_names = sorted(path.name for path in source.iterdir())
    for entry in sorted(target.iterdir()):
        if entry.name not in new_names:  # a file the new version does not have
            kept = keeper.place(*kept_parts, entry.name)
            os.rename(entry, kept)
            journal.did(partial(os.rename, kept, entry))
    for name in new_names:
        _publish_file(source / name, target / name, keeper, journal, kept_parts)
    fsync_folder(target)
    return target


def _publish_file(
    new: Path,
    target: Path,
    keeper: _Keeper,
    journal: _Journal,
    kept_parts: tuple[str, ...] | None = None,
) -> None:
    """Swap `new` in at `target` atomically, keeping what was there in the keeper's folder."""
    if not os.path.lexists(target.parent):
        target.parent.mkdir()
        journal.did(partial(_rmdir_if_empty, target.parent))
    if not os.path.lexists(target):
        os.rename(new, target)
        journal.did(partial(os.rename, target, new))
        return
    parts = (*(kept_parts or (target.parent.name,)), target.name)
    kept = keeper.place(*parts)
    if target.is_file() and not target.is_symlink():
        _keep_link(target, kept)  # the old file stays readable in place until the swap
        os.replace(new, target)
        journal.did(partial(os.replace, kept, target))
    else:  # a link or a folder where a file goes: moved aside whole
        os.rename(target, kept)
        journal.did(partial(os.rename, kept, target))
        os.rename(new, target)
        journal.did(partial(os.rename, target, new))


def _keep_link(path: Path, kept: Path) -> None:
    """A second name for `path` in the keep folder (a copy where hard links are not allowed)."""
    try:
        os.link(path, kept, follow_symlinks=False)
    except OSError:
        shutil.copy2(path, kept, follow_symlinks=False)


def _rmdir_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()


def _prune_replaced(root: Path, day: date, keep: int = KEEP_REPLACED) -> None:
    """Keep the newest `keep` replaced versions of `day`; older ones are removed."""
    folder = root / paths.REPLACED
    if not folder.is_dir():
        return
    versions = sorted(p for p in folder.iterdir() if p.name.startswith(f"{day.isoformat()}-"))
    for old in versions[:-keep] if keep else versions:
        shutil.rmtree(old, ignore_errors=True)  # never follows links inside
