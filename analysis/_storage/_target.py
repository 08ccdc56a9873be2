"""The seam between writing a snapshot and publishing it: a `Target` is where a snapshot goes.

`dims._storage._writer` writes every table's file into a local work folder, then hands
the folder to a target, which publishes it whole: `writer.LocalTarget` (a folder: a lock,
renames, a journal) or `remote_target.ObjectStoreTarget` (a prefix on object storage:
a lease, one-object uploads, a manifest written last). Both keep the same layout and the
same manifest, so every reader reads both alike.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Protocol

from dims._options import LOCK_TIMEOUT_S

from .._errors import ExportWaitWarning as ExportWaitWarning
from . import paths
from .manifest import Manifest, Replaced

#: Replaced versions kept per day in `DIR/_replaced/`; older ones are pruned.
KEEP_REPLACED = 3
#: How long a second export into the same dataset waits for the first (seconds).
DEFAULT_LOCK_TIMEOUT_S = LOCK_TIMEOUT_S


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

    def replacing(self, day: date, export_id: str) -> Replaced | None:
        """The version of `day` that publishing will replace, and where it will be kept."""

    def publish(self, tmp: Path, day: date, manifest: Manifest) -> dict[str, paths.Location]:
        """Every table's file of `tmp`, then the manifest: whole or not at all."""

    def prune(self, day: date) -> None:
        """Keep the newest KEEP_REPLACED replaced versions of `day`."""


def kept_in(day: date, export_id: str) -> str:
    """Where a replaced version of `day` is kept, relative to the dataset root."""
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{paths.REPLACED}/{day.isoformat()}-{when}-{export_id[:8]}"


@dataclass(frozen=True)
class Version:
    """A version of a day: when it was taken, by which export, its deployments rows (each
    None when unknown)."""

    snapshot_at: str | None = None
    export_id: str | None = None
    deployments: int | None = None

    @classmethod
    def of(cls, manifest: Manifest) -> Version:
        """The version a manifest describes."""
        return cls(manifest.snapshot_at, manifest.export_id, manifest.deployments)

    def replaced(self, tables: list[str], day: date, export_id: str) -> Replaced:
        """The manifest's `replaced`: this version, replaced by export `export_id`."""
        return Replaced(
            snapshot_at=self.snapshot_at,
            export_id=self.export_id,
            deployments=self.deployments,
            tables=tables,
            kept_in=kept_in(day, export_id),
        )
