"""The seam between writing a snapshot and publishing it: a `Target` is where a snapshot goes.

`analysis.storage.writer` writes every table's file into a local work folder, then hands
the folder to a target, which publishes it whole: `writer.LocalTarget` (a folder: a lock,
renames, a journal) or `remote_target.ObjectStoreTarget` (a prefix on object storage:
a lease, one-object uploads, a manifest written last). Both keep the same layout and the
same manifest, so every reader reads both alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

from ..errors import ExportWaitWarning as ExportWaitWarning
from . import paths

#: Replaced versions kept per day in `DIR/_replaced/`; older ones are pruned.
KEEP_REPLACED = 3
#: How long a second export into the same dataset waits for the first (seconds).
DEFAULT_LOCK_TIMEOUT_S = 3600.0


class Target(Protocol):
    """Where one export publishes its snapshot; every method is called in this order."""

    #: The dataset root the snapshot goes to: `--out`, or `--out/filtered/<slug>`.
    root: paths.Location

    def exclusive(self, timeout: float) -> AbstractContextManager[None]:
        """Be the only export writing to this `--out` for the block (waiting up to `timeout`)."""

    def prepare(self, day: date) -> Path:
        """Under `exclusive`: clean up after dead exports; a fresh local work folder."""

    def latest(self) -> tuple[date, int | None] | None:
        """The latest snapshot's date and deployments, or None when there is none."""

    def replacing(self, day: date, export_id: str) -> dict[str, Any] | None:
        """The version of `day` that publishing will replace, and where it will be kept."""

    def publish(self, tmp: Path, day: date, manifest: dict[str, Any]) -> dict[str, paths.Location]:
        """Every table's file of `tmp`, then the manifest: whole or not at all."""

    def prune(self, day: date) -> None:
        """Keep the newest KEEP_REPLACED replaced versions of `day`."""


def kept_in(day: date, export_id: str) -> str:
    """Where a replaced version of `day` is kept, relative to the dataset root."""
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{paths.REPLACED}/{day.isoformat()}-{when}-{export_id[:8]}"


def parse_manifest(data: bytes | None) -> dict[str, Any] | None:
    """A manifest's content, or None when missing or not a JSON object."""
    if data is None:
        return None
    try:
        found = json.loads(data)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def manifest_version(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """snapshot_at, export_id and deployments rows of the version a manifest describes."""
    rows = manifest.get("rows")
    return {
        "snapshot_at": manifest.get("snapshot_at"),
        "export_id": manifest.get("export_id"),
        "deployments": rows.get("deployments") if isinstance(rows, dict) else None,
    }


def manifest_bytes(manifest: Mapping[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2) + "\n").encode()
