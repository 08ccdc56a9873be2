"""Write one snapshot of every table as a Hive-partitioned Parquet dataset, safely.

Layout (the dataset contract in the README; paths from `analysis.storage.paths`):
`DIR/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet`, zstd, explicit schemas from
`analysis.tables`, `timestamp[us, UTC]`, and in every file's metadata the schema version
(`dims.schema_version`), `dims.snapshot_at`, `dims.export_id` and `dims.filters`. Every table
is written, empty ones too, so readers always find every table of a snapshot.

Why it is written the way it is:
- Streaming: pages are flattened as they arrive and written as row groups every
  `row_group_records` deployments, so memory is bounded by one batch, not by the fleet.
  Each batch is written by a background thread while the next one is flattened (Parquet
  encoding and compression release the GIL); at most one batch is in flight.
- Late copies: a page flagged `Page.replaces` (a deployment's winning copy that came after
  another copy was written, `analysis.copies`) is read after the others, and the replaced
  copy's rows are taken out of every table before publishing (`replaced.replace_rows`).
- One writer per folder: the whole export holds an advisory lock (`fcntl.flock`) on
  `DIR/.dims.lock`; a second export into the same `DIR` says so once and waits (bounded by
  `lock_timeout`). The kernel drops the lock when its process dies, whatever its PID or
  container, so a work folder found while holding the lock belongs to no live export and is
  removed: stale clean-up is judged by the lock, never by PIDs.
- Written aside: the snapshot is written under `DIR/.tmp-<date>-<random>/` (a dot folder no
  reader's glob matches) and published only once every table is complete. A failure, an
  exception from the page iterator, a rejected record in strict mode or Ctrl-C removes it.
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
- Published through a seam (`analysis.storage.target.Target`): the tables are always
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
import itertools
import json
import os
import secrets
import shutil
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

from analysis.arrowpool import building_pool
from analysis.errors import ExportError
from analysis.gcpause import paused_gc
from analysis.pages import Page
from analysis.tables import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_KEY,
    TABLE_NAMES,
    Flattener,
)
from analysis.tables.batches import (
    BATCH_RECORDS,
    Batches,
    default_workers,
    read_batch,
    workers_after,
)

from . import paths
from .replaced import replace_rows
from .target import (
    DEFAULT_LOCK_TIMEOUT_S,
    KEEP_REPLACED,
    ExportWaitWarning,
    Target,
    kept_in,
    manifest_bytes,
    manifest_version,
    parse_manifest,
)
from .workspaces import Workspace, WorkspacesArg, add_listed, headline, settle

PARTITION = paths.PARTITION
Location = paths.Location
PART_FILE = paths.PART_FILE
#: Published last, so a reader keyed on deployments finds the other tables already there.
_PUBLISH_LAST = "deployments"
_LOCK_POLL_S = 0.1
MANIFEST_VERSION = 1
_VERSION_KEYS = (("snapshot_at", paths.SNAPSHOT_AT_KEY), ("export_id", paths.EXPORT_ID_KEY))

Records = Iterable[Any]
RepositoriesArg = Mapping[str, Records] | Callable[[], Mapping[str, Records]] | None
ProvidersArg = Records | Callable[[], Records]
EvidenceArg = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


@dataclass
class ExportResult:
    """What an export wrote: where, how many rows per table, what was rejected, how long."""

    #: The dataset root the snapshot went to: `--out`, or `--out/filtered/<slug>`.
    out_dir: Location
    snapshot_date: date
    snapshot_at: datetime
    rows: dict[str, int]
    records: int
    rejected: int
    seconds: float
    paths: dict[str, Location] = field(default_factory=dict)
    #: Remarks from the fetch (listings used, duplicates dropped), shown in the summary.
    notes: list[str] = field(default_factory=list)
    #: The snapshot's manifest, exactly as written to `_manifests/<day>.json`.
    manifest: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """One line per table, then filters, what was replaced and the fetch notes."""
        width = max(len(name) for name in self.rows)
        lines = [
            f"wrote snapshot {self.snapshot_date.isoformat()} to {self.out_dir} "
            f"in {self.seconds:.1f} s: {self.records:,} deployments read, "
            f"{self.rejected:,} rejected"
        ]
        warning = headline(self.manifest)
        if warning:
            lines.insert(0, warning)
        lines += [f"  {name:<{width}}  {count:>10,} rows" for name, count in self.rows.items()]
        if self.rejected:
            lines.append(
                f"  {self.rejected:,} record(s) could not be read: see the rejected_records table"
            )
        filters = self.manifest.get("filters")
        if filters:
            shown = ", ".join(f"{key}={value}" for key, value in filters.items())
            lines.append(
                f"  filtered ({shown}): a dataset of its own; the fleet's snapshots are untouched"
            )
        replaced = self.manifest.get("replaced")
        if replaced:
            lines.append(f"  {describe_replaced(replaced, self.out_dir)}")
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


def describe_replaced(replaced: Mapping[str, Any], root: Location) -> str:
    """One line on the version a re-run replaced, and where it is kept."""
    taken = replaced.get("snapshot_at") or "at an unknown time"
    count = replaced.get("deployments")
    rows = f", {count:,} deployments" if isinstance(count, int) else ""
    return (
        f"replaced the earlier snapshot of that day (taken {taken}{rows}); "
        f"kept in {paths.join(root, *replaced['kept_in'].split('/'))}"
    )


@dataclass
class _Options:
    """How the tables are written (the keyword arguments of export_snapshot that say it)."""

    providers: ProvidersArg
    repositories: RepositoriesArg
    progress: Callable[[int], Any] | None
    row_group_records: int
    workers: int | None  # None: default_workers()
    #: An export of workspaces (`analysis.storage.workspaces`): asked for once, after the
    #: pages, by `_write_tables`, which keeps what it said in `found`.
    workspaces: WorkspacesArg = None
    found: list[Workspace] | None = None
    source_bytes: int | None = None


def export_snapshot(
    pages: Iterable[Page],
    out_dir: str | os.PathLike[str],
    *,
    providers: ProvidersArg = (),
    repositories: RepositoriesArg = None,
    snapshot_date: date | None = None,
    snapshot_at: datetime | None = None,
    include_env_values: bool = False,
    strict: bool = False,
    progress: Callable[[int], Any] | None = None,
    row_group_records: int = 10_000,
    filters: Mapping[str, Any] | None = None,
    allow_empty: bool = False,
    evidence: EvidenceArg = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    workers: int | None = None,
    workspaces: WorkspacesArg = None,
    source_bytes: int | None = None,
) -> ExportResult:
    """Flatten `pages` (plus providers and repositories) into one snapshot under `out_dir`.

    `out_dir`: a folder or an object-store URI (`s3://bucket/prefix`), each kept whole as the
    module docstring says. `providers`, `repositories` and `evidence` may be callables,
    called once the pages are consumed (the repositories depend on the integrations the
    deployments name; the fetch's evidence, the manifest's "fetch", is complete only then).
    `filters` (None or empty: the whole fleet) go to `out_dir/filtered/<slug>/`. `progress(n)`
    is called after each page. Output checked and locked before the first page is asked for.
    `workers` processes read raw batches beside this one (None: one per other core), from
    the start when `source_bytes` (the source's size: a dump's) is large."""
    started = time.perf_counter()
    at = _utc(snapshot_at or datetime.now(UTC))
    day = snapshot_date or at.date()
    chosen = _json_safe(paths.clean_filters(filters))
    export_id = secrets.token_hex(8)
    target = open_target(out_dir, chosen, export_id)
    flattener = Flattener(snapshot_at=at, include_env_values=include_env_values, strict=strict)
    options = _Options(providers, repositories, progress, row_group_records, workers,
                       workspaces, source_bytes=source_bytes)  # fmt: skip
    with target.exclusive(lock_timeout):
        tmp = target.prepare(day)
        try:
            metadata = _file_metadata(at, export_id, chosen)
            rows = _write_tables(flattener, tmp, day, metadata, pages, options)
            flattener.warn_of_findings()
            fetch = {"fetch": _evidence(evidence)}
            identity = _identity(day, at, export_id, _relative(target.root, out_dir), chosen)
            rows, fetch = _workspaces_day(options, flattener, tmp, target, identity, rows, fetch)
            if not allow_empty:
                _refuse_empty(target, rows["deployments"], flattener.counts)
            manifest = _manifest(target, identity, _contents(flattener, rows, day), fetch)
            published = target.publish(tmp, day, manifest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        target.prune(day)
    records, rejected = flattener.counts["records"], flattener.counts["rejected"]
    seconds = time.perf_counter() - started
    return ExportResult(
        target.root, day, at, rows, records, rejected, seconds, published, [], manifest
    )


def _workspaces_day(
    options: _Options,
    flattener: Flattener,
    tmp: Path,
    target: Target,
    identity: dict[str, Any],
    rows: dict[str, int],
    fetch: dict[str, Any],
) -> tuple[dict[str, int], dict[str, Any]]:
    """For an export of workspaces, the day keeps the workspaces it did not fetch: its rows
    after, and the manifest's `fetch` and `workspaces`. Otherwise `rows` and `fetch`."""
    if options.found is None:
        return rows, fetch
    day = date.fromisoformat(identity["snapshot_date"])
    mismatches = flattener.tenant_mismatches
    return settle(tmp, target.root, day, options.found, identity, mismatches, rows)


def open_target(
    out_dir: str | os.PathLike[str], filters: Mapping[str, Any], export_id: str
) -> Target:
    """Where the snapshot goes: a local folder (created here) or an object-store prefix."""
    root = paths.dataset_root(out_dir, filters)
    if paths.is_remote(out_dir):
        from .remote_target import ObjectStoreTarget

        return ObjectStoreTarget(str(out_dir), root, export_id)
    out = Path(out_dir)
    _create(out)
    return LocalTarget(out, Path(root))


def _relative(root: paths.Location, out_dir: str | os.PathLike[str]) -> str:
    """The dataset root relative to `--out` ("." for the fleet's), POSIX-style."""
    inside = str(root)[len(str(paths.location(out_dir))) :].replace(os.sep, "/").strip("/")
    return inside or "."


def _manifest(
    target: Target, identity: dict[str, Any], contents: dict[str, Any], fetch: dict[str, Any]
) -> dict[str, Any]:
    """The whole manifest, in the order people read it; `replaced` asked of the target now,
    just before publishing, under the lock."""
    day = date.fromisoformat(identity["snapshot_date"])
    return {
        **identity,
        **contents,
        "replaced": target.replacing(day, identity["export_id"]),
        "written_at": datetime.now(UTC).isoformat(),
        **fetch,  # `fetch`, and `workspaces` for an export of workspaces
    }


def _contents(flattener: Flattener, rows: dict[str, int], day: date) -> dict[str, Any]:
    """The manifest's account of what the snapshot holds and where."""
    return {
        "records": flattener.counts["records"],
        "rejected": flattener.counts["rejected"],
        "original_name_conflicts": flattener.counts["original_conflicts"],
        "unreadable_quantities": flattener.counts["unreadable_quantities"],
        "rows": rows,
        "files": {name: paths.part_path(name, day) for name in rows},
    }


def _file_metadata(at: datetime, export_id: str, filters: dict[str, Any]) -> dict[bytes, bytes]:
    """What every Parquet file of the snapshot carries in its metadata."""
    return {
        SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode(),
        paths.SNAPSHOT_AT_KEY: at.isoformat().encode(),
        paths.EXPORT_ID_KEY: export_id.encode(),
        paths.FILTERS_KEY: json.dumps(filters).encode(),
    }


def _identity(
    day: date, at: datetime, export_id: str, dataset: str, filters: dict[str, Any]
) -> dict[str, Any]:
    """The manifest's first fields: which snapshot this is, of which dataset."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "snapshot_date": day.isoformat(),
        "snapshot_at": at.isoformat(),
        "export_id": export_id,
        "schema_version": SCHEMA_VERSION,
        "dataset": dataset,
        "filters": filters,
    }


def _write_tables(
    flattener: Flattener,
    tmp: Path,
    day: date,
    metadata: dict[bytes, bytes],
    pages: Iterable[Page],
    options: _Options,
) -> dict[str, int]:
    """Stream every table of the snapshot into `tmp`; rows written per table.

    Pages that replace copies already passed on (`Page.replaces`) come last: the loop
    stops at the first, and `_replace_late` reads them once the files are written."""
    files = _TableFiles(flattener, tmp, day, metadata)
    source = iter(pages)
    late: list[Page] = []  # the first late page, once it came
    try:
        # one pause for the whole loop (see analysis.gcpause), tables built in a faster pool
        with paused_gc(), building_pool():
            batches = Batches(
                flattener,
                workers=default_workers() if options.workers is None else options.workers,
                batch_records=min(BATCH_RECORDS, options.row_group_records),
                workers_after=workers_after(options.source_bytes),
            )
            for tables in batches.run(_until_late(source, late), options.progress):
                files.add(tables)
                if files.pending >= options.row_group_records:
                    files.flush()
            flattener.add_providers(
                options.providers() if callable(options.providers) else options.providers
            )
            repos = options.repositories
            repos = repos() if callable(repos) else repos
            if repos:
                flattener.add_repositories(repos)
            if options.workspaces is not None:
                options.found = list(options.workspaces())
                add_listed(flattener, options.found)
            files.add(flattener.take())
            files.flush()
            files.close()
    except BaseException:
        files.abandon()
        raise
    if not late:
        return files.rows
    return _replace_late(flattener, tmp, day, itertools.chain(late, source))


def _until_late(pages: Iterator[Page], late: list[Page]) -> Iterator[Page]:
    """`pages` up to the first that replaces copies already passed on, which goes to
    `late`: the rest of `pages` are such pages too, read after the others."""
    for page in pages:
        if page.replaces is not None:
            late.append(page)
            return
        yield page


def _replace_late(
    flattener: Flattener, tmp: Path, day: date, late: Iterator[Page]
) -> dict[str, int]:
    """The replaced copies' rows out of every table, the late winners' in, read batch by
    batch; rows after. What was counted of a replaced copy (read; naming another
    workspace) is taken back."""
    first = next(late)
    replaced = dict(first.replaces or {})  # every late page carries every replaced id
    with paused_gc(), building_pool():
        tables = _late_tables(flattener, itertools.chain([first], late))
        rows, removed = replace_rows(tmp, day, replaced, tables)
    flattener.counts["records"] -= removed.num_rows
    for deployment_id, tenant in zip(*removed.to_pydict().values(), strict=True):
        lister = replaced[deployment_id]
        if tenant != lister:  # it had been counted as naming another workspace
            flattener.tenant_mismatches[lister] -= 1
    return rows


def _late_tables(flattener: Flattener, pages: Iterable[Page]) -> Iterator[dict[str, pa.Table]]:
    """The tables of late pages, a batch of them at a time."""
    batch: list[Page] = []
    for page in pages:
        batch.append(page)
        if len(batch) >= BATCH_RECORDS:
            yield read_batch(flattener, batch).tables
            batch = []
    if batch:
        yield read_batch(flattener, batch).tables


class _TableFiles:
    """One Parquet writer per table in the work folder, fed row group by row group in the
    background.

    Compression and encoding release the GIL: the previous row group is written in the
    background while the next batches are read. One row group in flight at most, so memory
    stays bounded. Tables are written by two threads, which matters for the last row group,
    when nothing else is left to do.
    """

    def __init__(
        self, flattener: Flattener, tmp: Path, day: date, metadata: dict[bytes, bytes]
    ) -> None:
        self.rows = dict.fromkeys(TABLE_NAMES, 0)
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.background = ThreadPoolExecutor(2, thread_name_prefix="dims-parquet")
        self.writing: list[Future[None]] = []
        self.group: list[dict[str, pa.Table]] = []
        try:
            for name, schema in flattener.schemas.items():
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
        """Every batch written and every file finished (its footer written)."""
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


def _json_safe(value: Any) -> Any:
    """Filters as JSON would give them back (dates and other objects as text)."""
    return json.loads(json.dumps(value, default=str))


def _evidence(evidence: EvidenceArg) -> dict[str, Any]:
    """The caller's fetch evidence, checked to be JSON before anything is published."""
    found = evidence() if callable(evidence) else evidence
    chosen = dict(found or {})
    try:
        json.dumps(chosen, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ExportError(f"the fetch evidence for the manifest is not JSON: {exc}") from None
    return chosen


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
        return days[-1], _deployments_version(self.folder, days[-1])["deployments"]

    def replacing(self, day: date, export_id: str) -> dict[str, Any] | None:
        return _replacing(self.folder, day, export_id)

    def publish(self, tmp: Path, day: date, manifest: dict[str, Any]) -> dict[str, Location]:
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
    filters: Mapping[str, Any] | None = None,
) -> None:
    """Fail now, before any fetch, when the snapshot could not be written to `out_dir`.

    Only probes: it takes no lock and removes nothing, so it is safe beside a running export.
    """
    if paths.is_remote(out_dir):
        from .remote import open_store

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


def _read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        return parse_manifest(path.read_bytes())
    except OSError:
        return None


def _deployments_version(root: Path, day: date) -> dict[str, Any]:
    """snapshot_at, export_id and deployments rows of the version of `day` in `root`."""
    manifest = _read_manifest(paths.manifest_path(root, day))
    if manifest is not None and isinstance(manifest.get("rows"), dict):
        return manifest_version(manifest)
    found: dict[str, Any] = {"snapshot_at": None, "export_id": None, "deployments": None}
    folder = paths.partition_dir(root, "deployments", day)
    try:
        files = sorted(folder.glob("*.parquet"))
        metas = [pq.read_metadata(path) for path in files]
    except (OSError, pa.ArrowException):
        return found  # unreadable: nothing known about it
    if metas:
        found["deployments"] = sum(meta.num_rows for meta in metas)
        keys = metas[0].metadata or {}
        for name, key in (
            ("snapshot_at", paths.SNAPSHOT_AT_KEY),
            ("export_id", paths.EXPORT_ID_KEY),
        ):
            value = keys.get(key)
            found[name] = value.decode() if value else None
    return found


def _refuse_empty(target: Target, exported: int, counts: Mapping[str, int]) -> None:
    """No deployments now, some in the latest snapshot: the listing, not the fleet, is empty."""
    if exported:
        return
    latest = target.latest()
    if latest is None or not latest[1]:
        return
    day, before = latest
    raise ExportError(
        f"the export found 0 deployments ({counts['records']:,} records read, "
        f"{counts['rejected']:,} rejected) but the latest snapshot in {target.root} "
        f"({day.isoformat()}) has {before:,}; nothing was published. Check the filters "
        "and the service, or pass --allow-empty to publish an empty snapshot"
    )


def _replacing(root: Path, day: date, export_id: str) -> dict[str, Any] | None:
    """The version of `day` this export will replace, and where it will be kept; or None."""
    present = [
        name for name in TABLE_NAMES if os.path.lexists(paths.partition_dir(root, name, day))
    ]
    if not present and not os.path.lexists(paths.manifest_path(root, day)):
        return None
    return {
        **_deployments_version(root, day),
        "tables": present,
        "kept_in": kept_in(day, export_id),
    }


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


def _publish(tmp: Path, root: Path, day: date, manifest: dict[str, Any]) -> dict[str, Path]:
    """Move every table's finished partition into place, then the manifest; all or nothing."""
    partition = paths.partition_name(day)
    names = [n for n in TABLE_NAMES if n != _PUBLISH_LAST] + [_PUBLISH_LAST]
    new_manifest = tmp / "manifest.json"
    new_manifest.write_bytes(manifest_bytes(manifest))
    for path in (*(p for n in names for p in (tmp / n / partition).iterdir()), new_manifest):
        _fsync(path)
    replaced = manifest["replaced"]
    keeper = _Keeper(root / replaced["kept_in"] if replaced else None)
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
        _fsync_dir(table_dir)
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
    _fsync_dir(target)
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


def _fsync(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
