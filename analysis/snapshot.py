"""One snapshot of the service, end to end: fetch → tables → Parquet dataset.

`dims export` and the notebooks call these.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import codehost, defaults
from .errors import CodeHostWarning
from .errors import WorkspacesFailed as WorkspacesFailed
from .storage.dumps import read_dump
from .storage.workspaces import Workspace
from .storage.writer import ExportResult, export_snapshot

if TYPE_CHECKING:  # the service path's modules load only when it runs (`--from-json` skips them)
    from generated_client import Client

    from . import fetch
    from .progress import Progress


def take_snapshot(
    client: Client,
    out_dir: str | Path,
    *,
    concurrency: int = defaults.CONCURRENCY,
    page_size: int = defaults.PAGE_SIZE,
    include_env_values: bool = False,
    strict: bool = False,
    snapshot_date: dt.date | None = None,
    progress: Progress | None = None,
    limits: fetch.FetchLimits | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    **filters: Any,
) -> ExportResult:
    """Fetch every deployment, provider and referenced repository; write one snapshot."""
    from . import fetch

    if progress is not None:
        _show_retries(client, progress)
    side = _SideListings(client, concurrency, filters)
    try:
        pages = fetch.fetch_deployments(
            client,
            stats=side.stats,
            page_size=page_size,
            concurrency=concurrency,
            progress=progress,
            limits=limits,
            raw=True,  # records as raw JSON text: the tables' fast reader takes them
            on_integration=side.repositories.add,  # listed while the fleet is paged
            budget=side.budget,
            **filters,
        )
        result = export_snapshot(
            pages,
            out_dir,
            providers=side.providers,
            repositories=side.repositories_by_integration,
            snapshot_date=snapshot_date,
            include_env_values=include_env_values,
            strict=strict,
            filters=filters,
            allow_empty=allow_empty,
            evidence=side.evidence,
            workers=workers,
        )
    finally:
        side.repositories.close()
    repos = side.fetched()
    result.notes.extend(_notes(side.stats, repos))
    warn_every_repository_not_found(result.manifest["fetch"])
    return result


def _show_retries(client: Client, progress: Progress) -> None:
    """Let the progress display tell of retries, and say that the fetch has begun."""
    from .connection import retry_transport

    retry_transport(client).on_retry = progress.retry
    progress.describe("fetching")


class _SideListings:
    """What a snapshot fetches beside the deployments: the providers, and the repositories of
    the integrations the deployments name (listed while the fleet is paged); with the fetch's
    statistics, the evidence the manifest keeps."""

    def __init__(self, client: Client, concurrency: int, filters: dict[str, Any]) -> None:
        from . import fetch

        self.filters = filters
        self.stats = fetch.FetchStats()
        self.providers = fetch.list_providers(client)
        self.budget = fetch.RequestBudget(concurrency)  # one limit for listings and repositories
        self.repositories = fetch.RepositoryFetcher(client, concurrency, budget=self.budget)
        self._fetched: list[fetch.Repositories] = []

    def repositories_by_integration(self) -> dict[str, list[dict[str, Any]]]:
        """Wait for every repository listing (the writer asks once the fleet is paged)."""
        self._fetched.append(self.repositories.result())
        return self._fetched[-1].by_integration

    def fetched(self) -> fetch.Repositories:
        """The repositories listed, or none when the writer never asked for them."""
        from . import fetch

        return self._fetched[-1] if self._fetched else fetch.Repositories()

    def evidence(self) -> dict[str, Any]:
        """What was asked and what came back: the manifest's `fetch` section."""
        from . import fetch

        return fetch.export_evidence(self.filters, self.stats, self.providers, self.fetched())


def take_workspaces_snapshot(
    clients: Mapping[str, Client],
    out_dir: str | Path,
    *,
    allow_partial: bool = False,
    concurrency: int = defaults.CONCURRENCY,
    page_size: int = defaults.PAGE_SIZE,
    include_env_values: bool = False,
    strict: bool = False,
    snapshot_date: dt.date | None = None,
    progress: Progress | None = None,
    limits: fetch.FetchLimits | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    **filters: Any,
) -> ExportResult:
    """Fetch several workspaces (tenant_id -> its client) concurrently into one snapshot.

    The day keeps the rows of workspaces not fetched now (`analysis.storage.workspaces`).
    When a workspace fails, nothing is published (WorkspacesFailed names it) unless
    `allow_partial`: then the others are published, the failed one keeps its earlier rows
    of the day if it had any, and the manifest and summary name it.
    """
    from .workspace_fetch import WorkspaceFetch

    if progress is not None:
        progress.describe(f"fetching {len(clients)} workspace(s)")
    fetcher = WorkspaceFetch(
        clients,
        concurrency=concurrency,
        page_size=page_size,
        limits=limits,
        progress=progress,
        filters=filters,
    )

    def workspaces() -> list[Workspace]:
        found = fetcher.outcome()
        failed = sum(w.error is not None for w in found)
        if failed and (not allow_partial or failed == len(found)):
            raise WorkspacesFailed(_outcomes(found))
        return found

    result = export_snapshot(
        fetcher.pages(),
        out_dir,
        snapshot_date=snapshot_date,
        include_env_values=include_env_values,
        strict=strict,
        filters=filters,
        allow_empty=allow_empty,
        workspaces=workspaces,
        workers=workers,
    )
    result.notes.extend(workspace_notes(result.manifest))
    warn_every_repository_not_found(result.manifest["fetch"])
    return result


def _outcomes(found: list[Workspace]) -> dict[str, dict[str, Any]]:
    """Per workspace, fetched (with its deployments) or failed (with why): what
    WorkspacesFailed says and carries."""
    return {
        w.tenant_id: {"status": "failed", "error": w.error}
        if w.error is not None
        else {"status": "fetched", "deployments": w.evidence.get("deployments")}
        for w in found
    }


def workspace_notes(manifest: Mapping[str, Any]) -> list[str]:
    """One line per workspace of the day: exported now, kept from earlier, or failed."""
    notes = []
    for tenant, section in (manifest.get("workspaces") or {}).items():
        count = section.get("deployments")
        rows = f"{count:,} deployments" if isinstance(count, int) else "deployments unknown"
        status = section.get("status")
        if status == "exported":
            dropped = (section.get("fetch") or {}).get("cross_workspace_duplicates") or {}
            also = (
                f"; {dropped['dropped']:,} duplicate copy(ies) dropped (listed by another "
                "workspace too)"
                if dropped.get("dropped")
                else ""
            )
            notes.append(f"workspace {tenant}: exported, {rows}{also}")
            integrations = (section.get("fetch") or {}).get("integrations") or {}
            if integrations.get("all_not_found"):
                count = len(integrations["unknown_to_service"])
                notes.append(f"workspace {tenant}: {_none_found(count)}")
        elif status == "carried":
            notes.append(
                f"workspace {tenant}: kept from the export at {section.get('snapshot_at')} ({rows})"
            )
        else:
            kept = section.get("kept")
            where = (
                f"its rows of the export at {kept.get('snapshot_at')} are kept"
                if isinstance(kept, dict)
                else "it has no rows in this day"
            )
            notes.append(f"workspace {tenant}: FAILED: {section.get('error')}; {where}")
    return notes


def warn_every_repository_not_found(evidence: Mapping[str, Any]) -> None:
    """One CodeHostWarning when, in an export or any of its workspaces, every repositories
    request answered 404.

    `evidence` is the manifest's `fetch`: one export's, or one per workspace under
    `workspaces` (a failed one has none). One line for all workspaces: they share the
    segment, so N of them are one mistake, not N.
    """
    per_workspace = evidence.get("workspaces")
    sections: dict[str | None, Mapping[str, Any]] = (
        {tenant: found.get("integrations", {}) for tenant, found in per_workspace.items()}
        if per_workspace is not None
        else {None: evidence.get("integrations", {})}
    )
    hit = {tenant: found for tenant, found in sections.items() if found.get("all_not_found")}
    if not hit:
        return
    count = sum(len(found["unknown_to_service"]) for found in hit.values())
    segments = ", ".join(sorted({repr(found["code_host"]) for found in hit.values()}))
    named = [tenant for tenant in hit if tenant is not None]
    where = f"workspace(s) {', '.join(named)}: " if named else ""
    warnings.warn(
        CodeHostWarning(
            f"{where}every repositories request answered 404 ({count} integration(s)) under "
            f"the code host segment {segments}: more likely a segment the service does not "
            f"have than {count} unknown integrations; set --code-host (DIMS_CODE_HOST), e.g. "
            f"--code-host {codehost.PUBLISHED} for the published service"
        ),
        stacklevel=3,
    )


def _none_found(count: int) -> str:
    """The summary's line when every repositories request (`count`) answered 404."""
    return f"repositories: 0 of {count:,} integrations found (every one answered 404)"


def _notes(stats: fetch.FetchStats, repositories: fetch.Repositories) -> list[str]:
    """What the summary says of the fetch: enough to see that the snapshot is whole."""
    listings = ", ".join(
        f"{item.listing} ({item.role}: {item.records:,} records in {item.pages:,} pages)"
        for item in stats.listings
    )
    types = stats.typed_by_record, stats.typed_by_listing, stats.untyped
    notes = [
        f"listings: {listings}",
        "deployment_type from the record: {:,}, from a typed listing: {:,}, "
        "none (no typed listing returned them): {:,}".format(*types),
    ]
    if stats.duplicates:
        notes.append(f"listing shifted while paging: {stats.duplicates} duplicate(s) dropped")
    if stats.in_typed_listing_only:
        notes.append(
            f"{stats.in_typed_listing_only} deployment(s) came in a typed listing but not in "
            "the fleet listing (created or deleted while paging): not exported"
        )
    missing, malformed = repositories.missing, repositories.malformed
    if repositories.all_not_found:
        notes.append(_none_found(len(missing)))
    elif missing:
        notes.append(
            f"{len(missing)} integration(s) referenced by deployments are unknown "
            f"to the service (404), so they have no repositories: {', '.join(missing)}"
        )
    if malformed:
        shown = ", ".join(repr(i[:40]) for i in malformed[:5])
        notes.append(
            f"{len(malformed)} integration id(s) referenced by deployments are not UUIDs, so "
            f"their repositories cannot be listed: {shown}"
        )
    return notes


def snapshot_from_dump(
    path: str | Path,
    out_dir: str | Path,
    *,
    include_env_values: bool = False,
    strict: bool = False,
    snapshot_date: dt.date | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
) -> ExportResult:
    """Write one snapshot from a saved dump instead of the service.

    Records are read as raw JSON text (`read_dump(raw=True)`), the fast typed reader's input.
    The dump's size tells the writer whether worker processes repay their start at once.
    """
    try:
        size: int | None = Path(path).stat().st_size
    except OSError:
        size = None  # read_dump says what is wrong with it
    return export_snapshot(
        read_dump(path, raw=True),
        out_dir,
        snapshot_date=snapshot_date,
        include_env_values=include_env_values,
        strict=strict,
        allow_empty=allow_empty,
        workers=workers,
        source_bytes=size,
    )
