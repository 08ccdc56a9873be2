"""Write one snapshot of every table as a Hive-partitioned Parquet dataset, atomically.

Layout (design.md, Dataset): `DIR/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet`, zstd,
explicit schemas from `analysis.tables`, `timestamp[us, UTC]`, and the schema version under
the key `dims.schema_version` in every file's metadata. Every table is written, empty ones
too, so readers always find every table of a snapshot.

Why it is written the way it is:
- Streaming: pages are flattened as they arrive and written as row groups every
  `row_group_records` deployments, so memory is bounded by one batch, not by the fleet.
  Each batch is written by a background thread while the next one is flattened (Parquet
  encoding and compression release the GIL); at most one batch is in flight.
- Atomic: the snapshot is written under `DIR/.tmp-<date>-<pid>-<random>/` (a dot folder,
  which the readers' glob `DIR/<table>/snapshot_date=*/*.parquet` never matches) and moved
  into place only once every table is complete. A failure, an exception from the page
  iterator, a rejected record in strict mode or Ctrl-C removes the temporary folder; a
  SIGKILL leaves it behind, invisible to readers, and the next export removes it.
- Replacing a day (see `_publish`): a new day's partition folder appears with one rename,
  complete. For a day already present each file is swapped with `os.replace`, which is
  atomic per file, so a reader sees the old file or the new one, never neither. Tables are
  swapped one after another (deployments last), so a reader that reads several tables in
  the very moment of the swap can combine old and new tables of the same day: the window
  is a handful of renames, and no Parquet layout can close it without a manifest.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from analysis.errors import ExportError
from analysis.gcpause import paused_gc
from analysis.pages import Page
from analysis.tables import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_KEY,
    TABLE_NAMES,
    Flattener,
)

PARTITION = "snapshot_date"
PART_FILE = "part-0.parquet"
_TMP_PREFIX = ".tmp-"
_TMP_NAME = re.compile(r"^\.tmp-\d{4}-\d{2}-\d{2}-(\d+)-[0-9a-f]+$")
#: Published last, so a reader keyed on deployments finds the other tables already there.
_PUBLISH_LAST = "deployments"

Records = Iterable[Any]
RepositoriesArg = Mapping[str, Records] | Callable[[], Mapping[str, Records]] | None
ProvidersArg = Records | Callable[[], Records]


@dataclass
class ExportResult:
    """What an export wrote: where, how many rows per table, what was rejected, how long."""

    out_dir: Path
    snapshot_date: date
    snapshot_at: datetime
    rows: dict[str, int]
    records: int
    rejected: int
    seconds: float
    paths: dict[str, Path] = field(default_factory=dict)
    #: Remarks from the fetch (listings used, duplicates dropped), shown in the summary.
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line per table, for the CLI."""
        width = max(len(name) for name in self.rows)
        lines = [
            f"wrote snapshot {self.snapshot_date.isoformat()} to {self.out_dir} "
            f"in {self.seconds:.1f} s: {self.records:,} deployments read, "
            f"{self.rejected:,} rejected"
        ]
        lines += [f"  {name:<{width}}  {count:>10,} rows" for name, count in self.rows.items()]
        if self.rejected:
            lines.append(
                f"  {self.rejected:,} record(s) could not be read: see the rejected_records table"
            )
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


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
) -> ExportResult:
    """Flatten `pages` (plus providers and repositories) into one snapshot under `out_dir`.

    `providers` and `repositories` may be callables, called once the pages are consumed
    (the repositories to fetch depend on the integrations the deployments reference).
    `progress(n)` is called after each page with its number of records. The output folder
    is checked before the first page is requested, so a bad `--out` fails before any fetch.
    """
    started = time.perf_counter()
    at = _utc(snapshot_at or datetime.now(UTC))
    day = snapshot_date or at.date()
    out = Path(out_dir)
    tmp = _prepare(out, day)
    writers: dict[str, pq.ParquetWriter] = {}
    rows = dict.fromkeys(TABLE_NAMES, 0)
    background = ThreadPoolExecutor(2, thread_name_prefix="dims-parquet")
    writing: list[Future[None]] = []
    try:
        flattener = Flattener(snapshot_at=at, include_env_values=include_env_values, strict=strict)
        metadata = {
            SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode(),
            b"dims.snapshot_at": at.isoformat().encode(),
        }
        for name, schema in flattener.schemas.items():
            folder = tmp / name / f"{PARTITION}={day.isoformat()}"
            folder.mkdir(parents=True)
            writers[name] = pq.ParquetWriter(
                folder / PART_FILE, schema.with_metadata(metadata), compression="zstd"
            )

        def write(name: str, table: pa.Table) -> None:
            writers[name].write_table(table)
            rows[name] += table.num_rows

        def flush() -> None:
            # Compression and encoding release the GIL: the previous batch is written in
            # the background while this one was flattened. One batch in flight at most,
            # so memory stays bounded by two batches. Tables are written by two threads,
            # which matters for the last batch, when nothing else is left to do.
            spent: list[list] = []
            tables = flattener.take(spent=spent)
            while writing:
                writing.pop().result()
            by_size = sorted(tables.items(), key=lambda item: -item[1].nbytes)
            writing.extend(
                background.submit(write, name, table) for name, table in by_size if table.num_rows
            )
            spent.clear()  # the rows are freed while the tables are written

        with paused_gc():  # one pause for the whole loop: see analysis.gcpause
            for page in pages:
                flattener.add_page(page)
                if progress is not None:
                    progress(len(page.records))
                if flattener.pending >= row_group_records:
                    flush()
            flattener.add_providers(providers() if callable(providers) else providers)
            repos = repositories() if callable(repositories) else repositories
            if repos:
                flattener.add_repositories(repos)
            flush()
            while writing:
                writing.pop().result()
        for writer in writers.values():
            writer.close()
        writers.clear()
        paths = _publish(tmp, out, day)
    except BaseException:
        for future in writing:  # never close a writer the background thread is using
            with contextlib.suppress(BaseException):
                future.result()
        for writer in writers.values():
            with contextlib.suppress(Exception):
                writer.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        background.shutdown(wait=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return ExportResult(
        out_dir=out,
        snapshot_date=day,
        snapshot_at=at,
        rows=rows,
        records=flattener.counts["records"],
        rejected=flattener.counts["rejected"],
        seconds=time.perf_counter() - started,
        paths=paths,
    )


def _utc(moment: datetime) -> datetime:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _prepare(out: Path, day: date) -> Path:
    """Create the output and temporary folders, proving they are writable, before any fetch."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(out)
        tmp = out / f"{_TMP_PREFIX}{day.isoformat()}-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir()
    except OSError as exc:
        raise ExportError(
            f"cannot write to {out}: {exc.strerror or exc}; "
            "choose another --out or fix the folder's permissions"
        ) from None
    for name in TABLE_NAMES:
        for folder in (out / name, out / name / f"{PARTITION}={day.isoformat()}"):
            if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
                shutil.rmtree(tmp, ignore_errors=True)
                raise ExportError(
                    f"cannot write to {folder}: permission denied; "
                    "choose another --out or fix the folder's permissions"
                )
    return tmp


def check_writable(out_dir: str | os.PathLike[str], snapshot_date: date | None = None) -> None:
    """Fail now, before any fetch, when the snapshot could not be written to `out_dir`."""
    day = snapshot_date or datetime.now(UTC).date()
    shutil.rmtree(_prepare(Path(out_dir), day), ignore_errors=True)


def _remove_stale_temporaries(out: Path) -> None:
    """Remove temporary folders left by exports that were killed (their process is gone)."""
    if os.name != "posix":  # no safe liveness check by pid
        return
    for child in out.iterdir():
        match = _TMP_NAME.match(child.name)
        if match and child.is_dir() and not _alive(int(match[1])):
            shutil.rmtree(child, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _publish(tmp: Path, out: Path, day: date) -> dict[str, Path]:
    """Move every table's finished partition into place (the procedure in the module doc)."""
    partition = f"{PARTITION}={day.isoformat()}"
    names = [n for n in TABLE_NAMES if n != _PUBLISH_LAST] + [_PUBLISH_LAST]
    new_files = {}
    for name in names:
        source = tmp / name / partition
        for path in source.iterdir():
            _fsync(path)
        new_files[name] = sorted(p.name for p in source.iterdir())
    paths: dict[str, Path] = {}
    for name in names:
        source = tmp / name / partition
        target = out / name / partition
        target.parent.mkdir(exist_ok=True)
        if not target.exists():
            os.rename(source, target)  # the complete folder appears at once
        else:
            for file_name in new_files[name]:
                os.replace(source / file_name, target / file_name)  # atomic per file
            for stale in target.iterdir():
                if stale.name not in new_files[name]:
                    _remove(stale)
        _fsync_dir(target.parent)
        paths[name] = target
    return paths


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


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


# --- reading the dataset back -------------------------------------------------------------
