"""Where things live in a dims dataset folder: the one place both the writer and the readers
take their paths from.

```
DIR/<table>/snapshot_date=YYYY-MM-DD/part-0.parquet     the snapshot (readers glob these)
DIR/_manifests/YYYY-MM-DD.json                          evidence of a whole snapshot
DIR/_replaced/YYYY-MM-DD-<when>-<id>/…                  earlier versions of a re-run day
DIR/filtered/<slug of the filters>/…                    a filtered export: the same layout
DIR/.dims.lock, DIR/.tmp-…                              the writer's lock and work folders
```

On object storage (`DIR` is a URI such as `s3://bucket/prefix`: `dims._storage._remote`) the
snapshot's keys are the same; instead of the lock and work folders there are
`DIR/_leases/<export id>.json` (who is exporting) and `DIR/_staging/<export id>/…` (a snapshot
uploaded but not yet published).

Everything that is not a snapshot starts with `_` or `.` or sits one level deeper than a
table's partitions, so `DIR/<table>/*/*.parquet` (DuckDB, pyarrow, Spark) never matches it,
and Hadoop-style readers skip `_`/`.` names anyway.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

PARTITION = "snapshot_date"
PART_FILE = "part-0.parquet"
MANIFESTS = "_manifests"
REPLACED = "_replaced"
FILTERED = "filtered"
LOCK_FILE = ".dims.lock"
#: Object storage only: live exports' leases and uploaded-but-unpublished snapshots.
LEASES = "_leases"
STAGING = "_staging"
TMP_PREFIX = ".tmp-"
#: Work folders of the writer (the old `.tmp-<date>-<pid>-<hex>` form included).
TMP_NAME = re.compile(r"^\.tmp-(\d{4}-\d{2}-\d{2}|probe)-[0-9a-z-]+$")
#: Keys of every part file's Parquet metadata (besides tables.SCHEMA_VERSION_KEY).
SNAPSHOT_AT_KEY = b"dims.snapshot_at"
EXPORT_ID_KEY = b"dims.export_id"
FILTERS_KEY = b"dims.filters"
_PARTITION_DIR = re.compile(rf"^{PARTITION}=(\d{{4}}-\d{{2}}-\d{{2}})$")
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
_SLUG_MAX = 80
#: `scheme://…` names object storage (s3://, gs://, abfs://…); `file://` is a local folder.
_URI = re.compile(r"^(?!file://)[A-Za-z][A-Za-z0-9+.-]*://")

PathLike = str | os.PathLike[str]
#: A dataset root as the code passes it on: a local folder, or the URI of an object-store prefix.
Location = Path | str


def is_remote(out: PathLike) -> bool:
    """Does `out` name object storage (a URI) rather than a local folder?"""
    return isinstance(out, str) and _URI.match(out) is not None


def location(out: PathLike) -> Location:
    """`out` as a dataset root: a URI stays text (a Path would fold its `//`), else a Path."""
    if is_remote(out):
        return str(out).rstrip("/")
    return Path(out)


def join(root: PathLike, *parts: str) -> Location:
    """`root/part/…` for a folder or a URI alike."""
    if is_remote(root):
        return "/".join([str(root).rstrip("/"), *parts])
    return Path(root).joinpath(*parts)


def partition_name(day: date) -> str:
    return f"{PARTITION}={day.isoformat()}"


def partition_dir(root: PathLike, table: str, day: date) -> Path:
    return Path(root) / table / partition_name(day)


def part_path(table: str, day: date) -> str:
    """Where a table's file of `day` lives, relative to the dataset root (POSIX form)."""
    return f"{table}/{partition_name(day)}/{PART_FILE}"


def manifest_path(root: PathLike, day: date) -> Path:
    return Path(root) / MANIFESTS / f"{day.isoformat()}.json"


def partition_days(root: PathLike, table: str) -> list[date]:
    """The days that have a partition folder holding Parquet files for `table`, oldest first."""
    folder = Path(root) / table
    if not folder.is_dir():
        return []
    days = (partition_day(name) for name in os.listdir(folder))
    return sorted(day for day in days if day is not None and has_partition(root, table, day))


def partition_day(name: str) -> date | None:
    """The day a partition folder's name stands for (None for any other name)."""
    match = _PARTITION_DIR.match(name)
    if not match:
        return None
    try:
        return date.fromisoformat(match[1])
    except ValueError:  # e.g. 2025-13-40: not a snapshot dims wrote
        return None


def has_partition(root: PathLike, table: str, day: date) -> bool:
    """Does `table` have Parquet files for `day`? One folder looked at, whatever the history."""
    folder = partition_dir(root, table, day)
    return folder.is_dir() and any(folder.glob("*.parquet"))


def latest_partition_day(root: PathLike, table: str) -> date | None:
    """The latest day with Parquet files for `table` (None when there is none).

    The folder names are listed once and only the newest folders are looked into, so the
    cost does not grow with the length of the history (partition_days looks into every one).
    """
    folder = Path(root) / table
    if not folder.is_dir():
        return None
    days = [day for day in map(partition_day, os.listdir(folder)) if day is not None]
    for day in sorted(days, reverse=True):
        if has_partition(root, table, day):
            return day
    return None


def first_link(out: Path, *relatives: Path) -> Path | None:
    """The first folder on the way from `out` down to any of `relatives` (each relative to
    `out`, itself included) that is a symbolic link: writing there would leave `out`.
    None when there is none. (`out` itself, and what is above it, are the user's choice.)"""
    for relative in relatives:
        parts = relative.parts
        for n in range(len(parts)):
            folder = out.joinpath(*parts[: n + 1])
            if folder.is_symlink():
                return folder
    return None


def filters_slug(filters: Mapping[str, Any]) -> str:
    """A readable folder name for a set of filters: `name_contains-web__status-READY`.

    Characters a folder name cannot hold safely become `_`; when that (or shortening) makes
    the name ambiguous, a short hash of the exact filters is appended, so two different
    filter sets never share a folder. (`=` is avoided: Hive-style readers take `key=value`
    folders for partitions.) `filters` as `dims._options.Filters` made them.
    """
    cleaned = dict(sorted(filters.items()))
    values = [_text(value) for value in cleaned.values()]
    exact = "__".join(f"{key}-{value}" for key, value in zip(cleaned, values, strict=True))
    readable = _SLUG_UNSAFE.sub("_", exact).strip("._") or "filters"
    if readable == exact and len(readable) <= _SLUG_MAX and not any("__" in v for v in values):
        return readable
    digest = hashlib.sha256(json.dumps(cleaned, default=str).encode()).hexdigest()[:10]
    return f"{readable[:_SLUG_MAX]}-{digest}"


def dataset_root(out_dir: PathLike, filters: Mapping[str, Any] | None) -> Location:
    """Where a snapshot with these filters (`dims._options.Filters`) lives: `out_dir` for
    the fleet, else its own root."""
    if not filters:
        return location(out_dir)
    return join(out_dir, FILTERED, filters_slug(filters))


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set | frozenset):
        return "+".join(_text(v) for v in value)
    return str(value)
