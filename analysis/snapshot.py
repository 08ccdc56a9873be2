"""One snapshot of the service, end to end: fetch → tables → Parquet dataset.

`dims export` and the notebooks call these.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import defaults
from .storage.dumps import read_dump
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
    result.notes.extend(_notes(side.stats, repos.missing, repos.malformed))
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
        repos = self.fetched()
        return {
            "filters": {k: getattr(v, "value", v) for k, v in self.filters.items()},
            **self.stats.evidence(),
            "oauth_providers": len(self.providers),
            "integrations": {
                "listed": len(repos.by_integration),
                "unknown_to_service": repos.missing,
                "not_uuid": repos.malformed,
            },
        }


def _notes(
    stats: fetch.FetchStats, missing_integrations: list[str], malformed: list[str]
) -> list[str]:
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
    if missing_integrations:
        notes.append(
            f"{len(missing_integrations)} integration(s) referenced by deployments are unknown "
            f"to the service (404), so they have no repositories: {', '.join(missing_integrations)}"
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
    """
    return export_snapshot(
        read_dump(path, raw=True),
        out_dir,
        snapshot_date=snapshot_date,
        include_env_values=include_env_values,
        strict=strict,
        allow_empty=allow_empty,
        workers=workers,
    )
