"""One snapshot of the service, end to end: fetch → tables → Parquet dataset.

`dims export` and the notebooks call these. Repositories are fetched in the background
while the deployments stream past, as soon as a page names an integration not seen yet,
so they cost almost no extra wall time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from generated_client import Client

from . import fetch
from .connect import retry_transport
from .dumps import read_dump
from .export import ExportResult, export_snapshot
from .pages import Page
from .progress import Progress


class _RepositoryCollector:
    """Starts one repository listing per new integration id; collects them at the end."""

    def __init__(self, client: Client, concurrency: int) -> None:
        self._client = client
        self._pool = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="dims-repos")
        self._futures: dict[str, Future[list[dict[str, Any]]]] = {}

    def watch(self, pages: Iterator[Page]) -> Iterator[Page]:
        for page in pages:
            for record in page.records:
                source_config = record.get("source_config") if isinstance(record, dict) else None
                integration_id = (
                    source_config.get("integration_id") if isinstance(source_config, dict) else None
                )
                if isinstance(integration_id, str) and integration_id not in self._futures:
                    self._futures[integration_id] = self._pool.submit(
                        fetch.list_repositories, self._client, integration_id
                    )
            yield page

    def result(self) -> fetch.Repositories:
        from .errors import NotFoundError

        out = fetch.Repositories()
        try:
            for integration_id in sorted(self._futures):
                try:
                    out.by_integration[integration_id] = self._futures[integration_id].result()
                except NotFoundError:
                    out.missing.append(integration_id)
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def take_snapshot(
    client: Client,
    out_dir: str | Path,
    *,
    concurrency: int = fetch.DEFAULT_CONCURRENCY,
    page_size: int = fetch.DEFAULT_PAGE_SIZE,
    include_env_values: bool = False,
    strict: bool = False,
    snapshot_date: dt.date | None = None,
    progress: Progress | None = None,
    **filters: Any,
) -> ExportResult:
    """Fetch every deployment, provider and referenced repository; write one snapshot."""
    if progress is not None:
        transport = retry_transport(client)
        transport.on_retry = progress.retry
        progress.describe("fetching")
    stats = fetch.FetchStats()
    providers = fetch.list_providers(client)
    repositories = _RepositoryCollector(client, concurrency)
    try:
        pages = fetch.fetch_deployments(
            client,
            stats=stats,
            page_size=page_size,
            concurrency=concurrency,
            progress=progress,
            **filters,
        )
        result = export_snapshot(
            repositories.watch(pages),
            out_dir,
            providers=providers,
            repositories=lambda: repositories.result().by_integration,
            snapshot_date=snapshot_date,
            include_env_values=include_env_values,
            strict=strict,
        )
    finally:
        repositories.close()
    result.notes.extend(_notes(stats))
    return result


def _notes(stats: fetch.FetchStats) -> list[str]:
    notes = [f"listings: {', '.join(str(t or 'all') for t in stats.listings)}"]
    if stats.duplicates:
        notes.append(f"listing shifted while paging: {stats.duplicates} duplicate(s) dropped")
    return notes


def snapshot_from_dump(
    path: str | Path,
    out_dir: str | Path,
    *,
    include_env_values: bool = False,
    strict: bool = False,
    snapshot_date: dt.date | None = None,
) -> ExportResult:
    """Write one snapshot from a saved dump instead of the service."""
    return export_snapshot(
        read_dump(path),
        out_dir,
        snapshot_date=snapshot_date,
        include_env_values=include_env_values,
        strict=strict,
    )
