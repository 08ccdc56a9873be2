"""`dims.take_snapshot`: `dims export` from Python, handed the SDK's client.

The export itself is the orchestrator's (`dims._snapshot.take_snapshot`), which takes the
generated clients the SDK holds; a user holds a `dims.Client`, so the door's `take_snapshot`
takes that and hands the export what it holds (`Client.take_snapshot`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._connection import DimsClient
from ._async import AsyncClient
from ._sync import Client

if TYPE_CHECKING:
    from .._options import ExportOptions
    from .._progress import Progress
    from .._snapshot import ExportResult

__all__ = ["take_snapshot"]


def take_snapshot(
    client: Client | DimsClient | Mapping[str, DimsClient],
    out_dir: str | Path,
    options: ExportOptions | None = None,
    filters: Mapping[str, Any] | None = None,
    *,
    progress: Progress | None = None,
    **keywords: Any,
) -> ExportResult:
    """Fetch every deployment, provider and referenced repository; write one snapshot.

    `client` is a `dims.Client` (every workspace it names, into one snapshot, fetched
    concurrently: docs/workspaces.md). `options` (`dims.ExportOptions`: every `dims export`
    option, with the CLI's defaults) and `filters` (the list-deployments filters, checked as
    `client.deployments.list` checks them) may also be keyword arguments
    (`take_snapshot(client, out, snapshot_date=day, status="READY")`); a keyword option wins
    over `options`. When a workspace fails, nothing is published (`WorkspacesFailed` names
    it) unless `allow_partial`. Of an `AsyncClient`: `await client.take_snapshot(out, …)`.
    """
    if isinstance(client, AsyncClient):
        raise TypeError(
            "take_snapshot() runs synchronously; of a dims.AsyncClient, "
            "await client.take_snapshot(out_dir, …)"
        )
    if isinstance(client, Client):
        return client.take_snapshot(out_dir, options, filters, progress=progress, **keywords)
    from .._snapshot import take_snapshot as export  # the generated client(s) themselves

    return export(client, out_dir, options, filters, progress=progress, **keywords)
