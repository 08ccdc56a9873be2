"""One snapshot, end to end: a source's pages → tables → the Parquet dataset.

`dims export`, the notebooks and the SDK (`Client.take_snapshot`) call these; the SDK's
in-memory tables are the same export kept in memory (`fetch_tables`). This module owns the
order (docs/layout.md, the flow of one export): it opens the writer's session
(`storage.open_snapshot`: the output checked and held before any request), pulls the
source's pages (the service's listings, several workspaces', a dump's), reads them into
tables in batches (`tables`) and hands each batch's tables to the session; after the last
page it waits for what the source lists beside its pages (providers, repositories, each
workspace's outcome), adds those through the same reader, and publishes with the fetch's
evidence. Storage is handed finished things and never calls back into a source.

Options and filters are checked once, here at the edge (`dims._options`): every entry
point takes an `ExportOptions` and `Filters`, or the same as keyword arguments.
"""

from __future__ import annotations

import datetime as dt
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
import pyarrow as pa

from . import _codehost as codehost
from ._arrowpool import building_pool
from ._copies import LISTED_BY, Keep, rank
from ._dumps import read_dump
from ._errors import CodeHostWarning
from ._errors import WorkspacesFailed as WorkspacesFailed
from ._evidence import FetchEvidence, Integrations, UnsetType, Workspace
from ._gcpause import paused_gc
from ._options import ExportOptions, Filters
from ._pages import Page
from ._storage import Counts, Published, SnapshotWriter, describe_replaced, headline, open_snapshot
from ._storage.manifest import FetchSection, Manifest, WorkspaceFetch
from ._storage.paths import Location
from ._tables import (
    BATCH_RECORDS,
    Batches,
    Flattener,
    default_workers,
    workers_after,
)

if TYPE_CHECKING:  # the service path's modules load only when it runs (`--from-json` skips them)
    from dims_client import Client

    from . import _fetch as fetch
    from ._progress import Progress

__all__ = [
    "ExportResult",
    "export_snapshot",
    "fetch_tables",
    "snapshot_from_dump",
    "take_snapshot",
    "warn_every_repository_not_found",
    "workspace_notes",
]


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: where, how many rows per table, what was rejected, how long."""

    #: The dataset root the snapshot went to: `--out`, or `--out/filtered/<slug>`.
    out_dir: Location
    snapshot_date: dt.date
    snapshot_at: dt.datetime
    rows: dict[str, int]
    records: int
    rejected: int
    seconds: float
    paths: dict[str, Location]
    #: Remarks from the fetch (listings used, duplicates dropped), shown in the summary.
    notes: list[str]
    #: The snapshot's manifest, as written to `_manifests/<day>.json` (`to_dict()`: its JSON).
    manifest: Manifest

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
        filters = self.manifest.filters
        if filters:
            shown = ", ".join(f"{key}={value}" for key, value in filters.items())
            lines.append(
                f"  filtered ({shown}): a dataset of its own; the fleet's snapshots are untouched"
            )
        if self.manifest.replaced is not None:
            lines.append(f"  {describe_replaced(self.manifest.replaced, self.out_dir)}")
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)

    @property
    def partial(self) -> bool:
        """Published without some workspaces, which failed (`allow_partial`: exit 3)."""
        return self.manifest.fetch.partial


def _outcomes(found: list[Workspace]) -> dict[str, dict[str, Any]]:
    """Per workspace, fetched (with its deployments) or failed (with why): what
    WorkspacesFailed says and carries."""
    return {
        w.tenant_id: {"status": "failed", "error": w.error}
        if w.error is not None
        else {"status": "fetched", "deployments": w.deployments}
        for w in found
    }


# --- the entry points --------------------------------------------------------------------


def take_snapshot(
    source: Client | Mapping[str, Client],
    out_dir: str | Path,
    options: ExportOptions | None = None,
    filters: Mapping[str, Any] | None = None,
    *,
    progress: Progress | None = None,
    **keywords: Any,
) -> ExportResult:
    """Fetch every deployment, provider and referenced repository; write one snapshot.

    `source` is one client, or several workspaces' (tenant_id -> its client), fetched
    concurrently into one snapshot (docs/workspaces.md). `options` and
    `filters` may also be given as keyword arguments (`take_snapshot(client, out,
    snapshot_date=day, status="READY")`); a keyword option wins over `options`.
    When a workspace fails, nothing is published (WorkspacesFailed names it) unless
    `allow_partial`: then the others are published, the failed one keeps its earlier rows
    of the day if it had any, and the manifest and summary name it.
    """
    chosen, wanted = _edge(options, filters, keywords)
    if isinstance(source, Mapping):
        return _from_workspaces(source, out_dir, chosen, wanted, progress)
    return _from_service(source, out_dir, chosen, wanted, progress)


def take_workspaces_snapshot(
    clients: Mapping[str, Client],
    out_dir: str | Path,
    options: ExportOptions | None = None,
    filters: Mapping[str, Any] | None = None,
    *,
    progress: Progress | None = None,
    **keywords: Any,
) -> ExportResult:
    """`take_snapshot` of several workspaces (tenant_id -> its client): the same path.

    The day keeps the rows of workspaces not fetched now (`dims._storage._workspaces`).
    """
    return take_snapshot(dict(clients), out_dir, options, filters, progress=progress, **keywords)


def snapshot_from_dump(
    path: str | Path,
    out_dir: str | Path,
    options: ExportOptions | None = None,
    *,
    progress: Progress | None = None,
    **keywords: Any,
) -> ExportResult:
    """Write one snapshot from a saved dump instead of the service (`dims export --from-json`).

    Records are read as raw JSON text (`read_dump(raw=True)`), the compiled lane's input.
    The dump's size tells the reader whether worker processes repay their start at once.
    Options only: a dump is not filtered. `progress` counts the pages read, with the dump's
    record count as its total when the reading knows it up front.
    """
    chosen, unknown = ExportOptions.given(options, keywords)
    if unknown:
        raise TypeError(f"snapshot_from_dump() got unexpected keyword arguments {sorted(unknown)}")
    try:
        size: int | None = Path(path).stat().st_size
    except OSError:
        size = None  # read_dump says what is wrong with it
    pages = read_dump(path, raw=True, on_total=progress.total if progress else None)
    counted = progress.page if progress else None
    return export_snapshot(pages, out_dir, chosen, progress=counted, source_bytes=size)


def export_snapshot(
    pages: Iterable[Page],
    out_dir: str | Path,
    options: ExportOptions | None = None,
    filters: Mapping[str, Any] | None = None,
    *,
    providers: Iterable[Any] = (),
    repositories: Mapping[str, Iterable[Any]] | None = None,
    workspaces: Sequence[Workspace] | None = None,
    evidence: FetchEvidence | None = None,
    progress: Callable[[int], Any] | None = None,
    source_bytes: int | None = None,
    **keywords: Any,
) -> ExportResult:
    """Pages from any source (a dump, records at hand) into one snapshot under `out_dir`,
    with the providers and repositories, the workspaces' outcomes and the fetch's evidence
    already known.

    `out_dir`: a folder or an object-store URI (`s3://bucket/prefix`). `filters` (none: the
    whole fleet) send the snapshot to `out_dir/filtered/<slug>/`. `progress(n)` is called
    after each page. `source_bytes` (the source's size, a dump's) starts worker processes
    at once when it is large. Options as in `take_snapshot`.
    """
    chosen, wanted = _edge(options, filters, keywords)
    started = time.perf_counter()
    with open_snapshot(out_dir, chosen, wanted) as session:
        reading = _Reading(session, chosen, listed=workspaces is not None)
        reading.read(pages, progress, source_bytes)
        reading.flattener.add_providers(providers)
        if repositories:
            reading.flattener.add_repositories(repositories)
        if workspaces is not None:
            _add_listed(reading.flattener, workspaces)
        published = session.publish(reading.finish(), _section(evidence), workspaces)
    return _result(published, session, started, [])


def _edge(
    options: ExportOptions | None, filters: Mapping[str, Any] | None, keywords: Mapping[str, Any]
) -> tuple[ExportOptions, Filters]:
    """The options and filters of an entry point, checked once: keyword arguments that
    name an option are options (winning over `options`), the others are filters."""
    chosen, more = ExportOptions.given(options, keywords)
    return chosen, Filters.of({**(filters or {}), **more}) if more else Filters.of(filters)


# --- the sources -------------------------------------------------------------------------


def _from_service(
    client: Client,
    out_dir: str | Path,
    options: ExportOptions,
    filters: Filters,
    progress: Progress | None,
) -> ExportResult:
    """One client's fleet, written as one snapshot."""
    started = time.perf_counter()
    with open_snapshot(out_dir, options, filters) as session:
        if progress is not None:
            _show_retries(client, progress)
        counts, evidence, notes = _read_service(session, client, options, filters, progress)
        published = session.publish(counts, _section(evidence))
    result = _result(published, session, started, notes)
    warn_every_repository_not_found(result.manifest.fetch)
    return result


def _read_service(
    session: _Session,
    client: Client,
    options: ExportOptions,
    filters: Filters,
    progress: Progress | None,
) -> tuple[Counts, FetchEvidence, list[str]]:
    """One client's fleet into `session`: the pages, then the providers and repositories
    listed beside them. The counts, the fetch's evidence and the summary's notes."""
    from . import _fetch as fetch

    side = _SideListings(client, options.concurrency)
    try:
        reading = _Reading(session, options)
        reading.read(side.pages(client, options, filters, progress))
        repositories = side.repositories.result()  # waits for every listing
    finally:
        side.repositories.close()
    reading.flattener.add_providers(side.providers)
    if repositories.by_integration:
        reading.flattener.add_repositories(repositories.by_integration)
    counts = reading.finish()
    evidence = fetch.export_evidence(filters, side.stats, side.providers, repositories)
    return counts, evidence, _notes(side.stats, repositories)


def _from_workspaces(
    clients: Mapping[str, Client],
    out_dir: str | Path,
    options: ExportOptions,
    filters: Filters,
    progress: Progress | None,
) -> ExportResult:
    """Several workspaces fetched concurrently, written as one snapshot."""

    started = time.perf_counter()
    with open_snapshot(out_dir, options, filters) as session:
        if progress is not None:
            progress.describe(f"fetching {len(clients)} workspace(s)")
        counts, found = _read_workspaces(session, clients, options, filters, progress)
        published = session.publish(counts, workspaces=found)
    result = _result(published, session, started, workspace_notes(published.manifest))
    warn_every_repository_not_found(result.manifest.fetch)
    return result


def _read_workspaces(
    session: _Session,
    clients: Mapping[str, Client],
    options: ExportOptions,
    filters: Filters,
    progress: Progress | None,
    call: str | None = None,
) -> tuple[Counts, list[Workspace]]:
    """Several workspaces into `session`: their pages, then each one's outcome (a failure
    is WorkspacesFailed, unless `allow_partial` and another workspace worked; of `call`,
    when the tables are read in memory, not published)."""
    from ._fetch import WorkspaceFetch

    fetcher = WorkspaceFetch(
        clients,
        concurrency=options.concurrency,
        page_size=options.page_size,
        limits=options.limits,
        progress=progress,
        filters=filters,
    )
    reading = _Reading(session, options, listed=True)
    reading.read(fetcher.pages())
    found = fetcher.outcome()
    failed = sum(w.error is not None for w in found)
    if failed and (not options.allow_partial or failed == len(found)):
        raise WorkspacesFailed(_outcomes(found), call)
    _add_listed(reading.flattener, found)
    return reading.finish(), found


def _show_retries(client: Client, progress: Progress) -> None:
    """Let the progress display tell of retries, and say that the fetch has begun."""
    from ._connection import retry_transport

    retry_transport(client).on_retry = progress.retry
    progress.describe("fetching")


class _SideListings:
    """What a snapshot fetches beside the deployments: the providers, and the repositories of
    the integrations the deployments name (listed while the fleet is paged), all within
    one request budget; with the fetch's statistics."""

    def __init__(self, client: Client, concurrency: int) -> None:
        from . import _fetch as fetch

        self.stats = fetch.FetchStats()
        self.providers = fetch.list_providers(client)
        self.budget = fetch.RequestBudget(concurrency)  # one limit for listings and repositories
        self.repositories = fetch.RepositoryFetcher(client, concurrency, budget=self.budget)

    def pages(
        self, client: Client, options: ExportOptions, filters: Filters, progress: Progress | None
    ) -> Iterator[Page]:
        """The fleet's pages, raw (the tables' fast reader takes them), each integration
        they name handed to the repositories' listing as it comes."""
        from . import _fetch as fetch

        return fetch.fetch_deployments(
            client,
            stats=self.stats,
            page_size=options.page_size,
            concurrency=options.concurrency,
            progress=progress,
            limits=options.limits,
            raw=True,
            on_integration=self.repositories.add,
            budget=self.budget,
            **filters.query(),
        )


def _add_listed(flattener: Flattener, workspaces: Iterable[Workspace]) -> None:
    """Each exported workspace's providers and repositories, tagged with its tenant_id."""
    for workspace in workspaces:
        if workspace.error is None:
            flattener.add_providers(workspace.providers, tenant_id=workspace.tenant_id)
            flattener.add_repositories(workspace.repositories, tenant_id=workspace.tenant_id)


def _section(evidence: FetchEvidence | None) -> FetchSection:
    """The manifest's `fetch` for one export's evidence (empty without one: a dump)."""
    if evidence is None:
        return FetchSection()
    return FetchSection(**msgspec.structs.asdict(evidence))


def _result(
    published: Published, session: SnapshotWriter, started: float, notes: list[str]
) -> ExportResult:
    manifest = published.manifest
    return ExportResult(
        out_dir=published.root,
        snapshot_date=session.day,
        snapshot_at=session.snapshot_at,
        rows=dict(manifest.rows),
        records=manifest.records,
        rejected=manifest.rejected,
        seconds=time.perf_counter() - started,
        paths=published.paths,
        notes=notes,
        manifest=manifest,
    )


# --- records into tables -----------------------------------------------------------------


class _Session(Protocol):
    """Where `_Reading` hands the tables it reads: a writer's session (`SnapshotWriter`),
    or `_InMemory`, which keeps them."""

    @property
    def snapshot_at(self) -> dt.datetime: ...

    def write(self, tables: Mapping[str, pa.Table]) -> None: ...


class _Reading:
    """One export's records read into tables (in batches, on every core) and handed to the
    writer's session as they are read. Of several workspaces (`listed`), every copy of a
    deployment, each row with the workspace that listed it (`dims._copies.LISTED_BY`):
    which copy the day keeps is decided once, at publish."""

    def __init__(self, session: _Session, options: ExportOptions, listed: bool = False) -> None:
        self.session = session
        self.options = options
        self.flattener = Flattener(
            snapshot_at=session.snapshot_at,
            include_env_values=options.include_env_values,
            strict=options.strict,
            listed_by=listed,
        )

    def read(
        self,
        pages: Iterable[Page],
        progress: Callable[[int], Any] | None = None,
        source_bytes: int | None = None,
    ) -> None:
        """Every page, read into tables handed to the session batch by batch."""
        workers = self.options.workers
        # one pause for the whole loop (see dims._gcpause), tables built in a faster pool
        with paused_gc(), building_pool():
            batches = Batches(
                self.flattener,
                workers=default_workers() if workers is None else workers,
                batch_records=min(BATCH_RECORDS, self.options.row_group_records),
                workers_after=workers_after(source_bytes),
            )
            for tables in batches.run(pages, progress):
                self.session.write(tables)

    def finish(self) -> Counts:
        """The rows added since the pages (providers, repositories) written; the findings
        said once."""
        with paused_gc(), building_pool():
            self.session.write(self.flattener.take())
        self.flattener.warn_of_findings()
        counts = self.flattener.counts
        return Counts(
            records=counts["records"],
            rejected=counts["rejected"],
            original_name_conflicts=counts["original_conflicts"],
            unreadable_quantities=counts["unreadable_quantities"],
            unreadable_values=counts["unreadable_values"],
        )


# --- the same tables, in memory ----------------------------------------------------------


def fetch_tables(
    source: Client | Mapping[str, Client],
    options: ExportOptions | None = None,
    filters: Mapping[str, Any] | None = None,
    *,
    progress: Progress | None = None,
    **keywords: Any,
) -> dict[str, pa.Table]:
    """Every table `take_snapshot` would write for `source`, kept in memory: nothing is
    written, no dataset folder is needed.

    The export's own path, step for step (the fleet tagged by the typed listings, the
    providers, the repositories of the integrations the deployments name; several
    workspaces concurrently, each deployment once; the same readers and batches), so the
    tables equal those an export of the same fleet writes, row for row (`snapshot_at`
    aside: now, unless the options name one). Options that only concern files
    (`snapshot_date`, `row_group_records`, …) change nothing here.
    """
    chosen, wanted = _edge(options, filters, keywords)
    memory = _InMemory(_utc_now(chosen.snapshot_at))
    if isinstance(source, Mapping):
        _read_workspaces(memory, source, chosen, wanted, progress, "fetch_tables()")
        return memory.tables(list(source))
    _, evidence, _ = _read_service(memory, source, chosen, wanted, progress)
    warn_every_repository_not_found(_section(evidence))
    return memory.tables()


def _utc_now(at: dt.datetime | None) -> dt.datetime:
    """`at` in UTC (naive is read as UTC), or now: what a writer's session takes."""
    moment = at or dt.datetime.now(dt.UTC)
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


class _InMemory:
    """A writer's session that keeps each table's batches instead of writing them; of
    several workspaces, `tables` decides between the copies of a deployment as the
    publish does (`dims._copies.rank`, without a day before it)."""

    def __init__(self, snapshot_at: dt.datetime) -> None:
        self.snapshot_at = snapshot_at
        self._parts: dict[str, list[pa.Table]] = {}

    def write(self, tables: Mapping[str, pa.Table]) -> None:
        for name, table in tables.items():
            self._parts.setdefault(name, []).append(table)

    def tables(self, order: Sequence[str] | None = None) -> dict[str, pa.Table]:
        """Every table, its batches as one table each (chunks kept: no copy); of the
        workspaces `order`, each deployment's copy that wins, and its rows only."""
        tables = {name: pa.concat_tables(parts) for name, parts in self._parts.items()}
        if order is None:
            return tables
        listed = {name: table[LISTED_BY] for name, table in tables.items()}
        deployments = tables["deployments"]
        ranked = rank(deployments.select(["id", "tenant_id", LISTED_BY]), order)
        keep = Keep(deployments["id"], listed, ranked.kept)
        return {
            name: table.filter(keep.rows(name, table, 0)).drop_columns([LISTED_BY])
            for name, table in tables.items()
        }


# --- what the summary says ----------------------------------------------------------------


def workspace_notes(manifest: Manifest) -> list[str]:
    """One line per workspace of the day: exported now, kept from earlier, or failed."""
    day = manifest.workspaces
    if isinstance(day, UnsetType):
        return []
    notes = []
    for tenant, section in day.items():
        count = section.deployments
        rows = f"{count:,} deployments" if isinstance(count, int) else "deployments unknown"
        if section.status == "exported":
            notes += _exported_notes(tenant, section.fetch, rows)
        elif section.status == "carried":
            notes.append(
                f"workspace {tenant}: kept from the export at {_text(section.snapshot_at)} ({rows})"
            )
        else:
            kept = section.kept
            where = (
                f"its rows of the export at {_text(kept.snapshot_at)} are kept"
                if kept is not None and not isinstance(kept, UnsetType)
                else "it has no rows in this day"
            )
            notes.append(f"workspace {tenant}: FAILED: {_text(section.error)}; {where}")
    return notes


def _exported_notes(tenant: str, evidence: WorkspaceFetch | UnsetType, rows: str) -> list[str]:
    """An exported workspace's line (and one more when none of its repositories was found)."""
    dropped = 0
    if not isinstance(evidence, UnsetType):
        duplicates = evidence.cross_workspace_duplicates
        dropped = 0 if isinstance(duplicates, UnsetType) else duplicates.dropped
    also = (
        f"; {dropped:,} duplicate copy(ies) dropped (listed by another workspace too)"
        if dropped
        else ""
    )
    notes = [f"workspace {tenant}: exported, {rows}{also}"]
    missing = _every_repository_missing(evidence)
    if missing is not None:
        notes.append(f"workspace {tenant}: {_none_found(len(missing.unknown_to_service))}")
    return notes


def _text(value: str | UnsetType | None) -> str:
    """A manifest's text as the summary shows it (absent: None, as dict digging gave)."""
    return "None" if isinstance(value, UnsetType) else str(value)


def _every_repository_missing(evidence: FetchEvidence | UnsetType) -> Integrations | None:
    """The integrations of an evidence whose every repositories request answered 404."""
    if isinstance(evidence, UnsetType) or not evidence.every_repository_missing:
        return None
    found = evidence.integrations
    return None if isinstance(found, UnsetType) else found


def warn_every_repository_not_found(evidence: FetchSection) -> None:
    """One CodeHostWarning when, in an export or any of its workspaces, every repositories
    request answered 404.

    `evidence` is the manifest's `fetch`: one export's, or one per workspace under
    `workspaces` (a failed one has none). One line for all workspaces: they share the
    segment, so N of them are one mistake, not N.
    """
    per_workspace = evidence.workspaces
    sections: dict[str | None, FetchEvidence] = {None: evidence}
    if not isinstance(per_workspace, UnsetType):
        sections = {tenant: section for tenant, section in per_workspace.items()}
    hit = {
        tenant: found
        for tenant, section in sections.items()
        if (found := _every_repository_missing(section)) is not None
    }
    if not hit:
        return
    count = sum(len(found.unknown_to_service) for found in hit.values())
    segments = ", ".join(sorted({repr(_text(found.code_host)) for found in hit.values()}))
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
