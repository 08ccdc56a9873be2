"""Several workspaces in one day of the dataset: what the writer does beyond one snapshot.

A workspace is what the service scopes by `X-Tenant-Id`; every table has its `tenant_id`.
An export names the workspaces it fetched, and a day of the dataset is the union of them:

- Two exports of different workspaces into one `--out` on one day never replace each
  other. Before publishing, `carry_over` adds to each new file the rows of the day's
  published version that belong to workspaces this export did not fetch (read under the
  writer's lock, so no other export changes them meanwhile). Re-exporting workspace A
  replaces A's rows and keeps B's; the path of every file stays the dataset contract.
- A deployment belongs to the workspace named by its own `tenant_id` (child tables repeat
  it), and an id appears once in a day. The work folder holds every copy the workspaces
  listed, each row with its lister; `settle` ranks them once, with the day's published rows,
  by `dims._copies.rank` (rules "day", "owner", "order"): a deployment the new export
  holds replaces the day's row of it (a deployment moved from B to A and exported under A
  replaces B's row), except when both name a workspace this export did not fetch: then the
  day's row is that workspace's and stays, and the new copy (another workspace's stale view
  of it) is dropped and counted (rule "day"). Every table is filtered by that one decision,
  and the duplicates and mismatches the manifest counts are read from it. Rows of an export
  made without a workspace (tenant_id null: providers, repositories, rejected records) are
  kept, never guessed.
- A workspace that failed (`--allow-partial`) publishes nothing: its rows already written
  are dropped and its rows from the day's earlier version, if any, are carried over.
- The manifest's `workspaces` section lists every workspace of the day with its status
  (`exported` now, `carried` from an earlier export, `failed`), its export and its fetch
  evidence, merged from the earlier manifest.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import partial
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dims._copies import LISTED_BY, RULES, Keep, Ranked, rank
from dims._errors import DuplicateDeploymentsWarning as DuplicateDeploymentsWarning
from dims._errors import TenantMismatchWarning as TenantMismatchWarning
from dims._evidence import UNSET, UnsetType, Workspace
from dims._tables import TABLE_NAMES

from . import paths
from .manifest import (
    DayWorkspace,
    Duplicates,
    FetchSection,
    Identity,
    Manifest,
    WorkspaceFetch,
    decode,
)

__all__ = [
    "SettledDay",
    "carry_over",
    "deployments_by_tenant",
    "headline",
    "manifest_sections",
    "settle",
]

TENANT = "tenant_id"


#: Why a copy of a deployment was dropped, in the manifest's order (`dims._copies`).
DUPLICATE_RULES = RULES


@dataclass
class SettledDay:
    """The day made whole: rows per table after, and the manifest's sections for it."""

    rows: dict[str, int]
    fetch: FetchSection
    workspaces: dict[str, DayWorkspace]
    #: Copies read that lost to another copy of this export: not records of the day.
    read_twice: int = 0


def settle(
    tmp: Path,
    root: paths.Location,
    day: date,
    workspaces: Iterable[Workspace],
    identity: Identity,
    rows: Mapping[str, int],
    listed: Mapping[str, pa.ChunkedArray],
) -> SettledDay:
    """The day made whole in `tmp` and the manifest's sections for it: every copy of a
    deployment the work folder holds (`listed`: the workspace that listed each row of each
    table) ranked once against the day's published rows (`dims._copies.rank`), every
    table filtered by that one decision (`carry_over`), and the rows per table, the
    duplicates and the tenant mismatches the manifest reports derived from it. Called under
    the writer's lock (or lease), so the published day read here is the one the new
    version replaces."""
    chosen = list(workspaces)
    published = _published(root, day)
    ranked = _ranked(tmp, day, chosen, published, listed)
    merged = carry_over(tmp, day, chosen, published, rows, listed, ranked)
    counts = deployments_by_tenant(paths.partition_dir(tmp, "deployments", day))
    earlier = _published_manifest(root, day) if published else None
    fetch, sections = manifest_sections(chosen, identity, earlier, ranked, counts)
    return SettledDay(merged, fetch, sections, ranked.read_twice)


def _ranked(
    tmp: Path,
    day: date,
    workspaces: list[Workspace],
    published: Mapping[str, pa.Table],
    listed: Mapping[str, pa.ChunkedArray],
) -> Ranked:
    """The one decision: every new copy of a deployment against the others and the day's."""
    fresh = _read(paths.partition_dir(tmp, "deployments", day), ["id", TENANT])
    if fresh is None:
        fresh = pa.table({"id": pa.array([], pa.string()), TENANT: pa.array([], pa.string())})
    copies = fresh.append_column(LISTED_BY, _listers(listed.get("deployments"), fresh.num_rows))
    old = published.get("deployments")
    return rank(
        copies,
        [w.tenant_id for w in workspaces],
        [w.tenant_id for w in workspaces if w.error is None],
        old.select(["id", TENANT]) if old is not None else None,
    )


def _listers(listed: pa.ChunkedArray | None, rows: int) -> pa.ChunkedArray:
    """The workspace that listed each row (none known: not one of the export's, so kept)."""
    if listed is None or len(listed) != rows:
        if listed is not None and len(listed):
            raise ValueError(f"{len(listed)} rows' workspaces kept for {rows} rows written")
        return pa.chunked_array([pa.nulls(rows, pa.string())])
    return listed.cast(pa.string())


def carry_over(
    tmp: Path,
    day: date,
    workspaces: Iterable[Workspace],
    published: Mapping[str, pa.Table],
    rows: Mapping[str, int],
    listed: Mapping[str, pa.ChunkedArray],
    ranked: Ranked,
) -> dict[str, int]:
    """Make the new files of `day` (in `tmp`, `rows` per table) the whole day, as `ranked`
    decided: the new copies it keeps (a child row goes with its deployment's copy: the same
    id, listed by the same workspace), the rows of failed workspaces left out, and the
    `published` rows of every workspace not exported now that stay. Rows per table, after.
    When the day is new, every copy is kept and no workspace failed, the files stay as
    written."""
    chosen = list(workspaces)
    exported = pa.array([w.tenant_id for w in chosen if w.error is None], pa.string())
    failed = [w.tenant_id for w in chosen if w.error is not None]
    if not published and not failed and ranked.every_copy_kept:
        return dict(rows)
    listers = {name: _listers(listed.get(name), rows.get(name, 0)) for name in TABLE_NAMES}
    fresh = _read(paths.partition_dir(tmp, "deployments", day), ["id"])
    ids = fresh["id"] if fresh is not None else pa.chunked_array([], pa.string())
    keep = Keep(ids, listers, ranked.kept, failed)
    kept = _kept_rows(published, ranked.day_kept, exported)
    merged = {}
    for name in TABLE_NAMES:
        folder = paths.partition_dir(tmp, name, day)
        merged[name] = _rewrite(folder, partial(keep.rows, name), kept.get(name))
    return merged


def _published(root: paths.Location, day: date) -> dict[str, pa.Table]:
    """The day's published tables (a folder or object storage), older schemas' columns
    filled with nulls; {} when the day has none."""
    from . import _reader as reader  # the writer path imports the readers only when it needs them

    if not reader.has_snapshot(root, "deployments", day):  # only that day is looked at
        return {}
    local = not paths.is_remote(root)
    return {
        name: reader.read_arrow(root, name, day)
        for name in TABLE_NAMES
        if reader.has_snapshot(root, name, day)
        # a partition that is a link is moved aside by the publish, never read through
        and not (local and paths.partition_dir(root, name, day).is_symlink())
    }


def _published_manifest(root: paths.Location, day: date) -> Manifest | None:
    if paths.is_remote(root):
        from ._remote import open_store
        from ._remote_target import read_manifest

        return read_manifest(open_store(str(root)), day)
    where = paths.manifest_path(root, day)
    try:
        data = where.read_bytes()
    except OSError:
        return None
    return decode(data, where)


def _read(folder: Path, columns: list[str] | None = None) -> pa.Table | None:
    """A partition's rows in the work folder; None when there is none."""
    files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not files:
        return None
    tables = [pq.read_table(path, columns=columns) for path in files]
    return pa.concat_tables(tables, promote_options="permissive")


def _not_in(column: pa.ChunkedArray, tenants: pa.Array) -> pa.ChunkedArray:
    """Rows whose tenant_id is not one of `tenants` (null counts as not one)."""
    return pc.invert(pc.fill_null(pc.is_in(column, value_set=tenants), False))


def _kept_rows(
    old: Mapping[str, pa.Table], day_kept: pa.Array, exported: pa.Array
) -> dict[str, pa.Table]:
    """The published rows that stay: the deployments the ranking keeps (`day_kept`, one per
    published deployment), their children, and other tables' rows of other workspaces."""
    deployments = old.get("deployments")
    if deployments is None:
        return {}
    kept = {"deployments": deployments.filter(day_kept)}
    kept_ids = kept["deployments"]["id"]
    for name, table in old.items():
        if name == "deployments":
            continue
        if "deployment_id" in table.column_names:
            kept[name] = table.filter(pc.is_in(table["deployment_id"], value_set=kept_ids))
        elif TENANT in table.column_names:
            kept[name] = table.filter(_not_in(table[TENANT], exported))
        else:  # schema 1: no tenant_id, so they were not any workspace's
            kept[name] = table
    return kept


def _like(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with exactly `schema`'s columns (an older schema's missing ones as nulls)."""
    columns = [
        table[f.name].cast(f.type) if f.name in table.column_names else pa.nulls(len(table), f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _rewrite(
    folder: Path, keep: Callable[[pa.Table, int], pa.Array], carried: pa.Table | None
) -> int:
    """The partition's one file, rewritten row group by row group with the rows `keep`
    keeps, then the `carried` rows, with the new file's metadata; the rows written."""
    files = sorted(folder.glob("*.parquet"))
    if not files:
        return 0
    target = files[0]
    schema = pq.read_schema(target)
    written, at = 0, 0
    with pq.ParquetWriter(target.with_suffix(".merging"), schema, compression="zstd") as writer:
        for path in files:
            with pq.ParquetFile(path) as source:
                for index in range(source.num_row_groups):
                    group = source.read_row_group(index)
                    mask = keep(group, at)
                    at += group.num_rows
                    group = group.filter(mask)
                    if group.num_rows:
                        writer.write_table(group)
                        written += group.num_rows
        if carried is not None and carried.num_rows:
            writer.write_table(_like(carried, schema).replace_schema_metadata(schema.metadata))
            written += carried.num_rows
    for extra in files[1:]:
        extra.unlink()
    target.with_suffix(".merging").replace(target)
    return written


# --- the manifest --------------------------------------------------------------------------


def manifest_sections(
    workspaces: Iterable[Workspace],
    identity: Identity,
    earlier: Manifest | None,
    ranked: Ranked,
    deployments: Mapping[str, int],
) -> tuple[FetchSection, dict[str, DayWorkspace]]:
    """The manifest's `fetch` (this export, per workspace) and `workspaces` (the whole day:
    this export's, and the earlier manifest's for workspaces not exported now)."""
    chosen = list(workspaces)
    before = earlier.workspaces if earlier is not None else UNSET
    # A workspace that failed earlier stays failed (the day still lacks it) until exported.
    day: dict[str, DayWorkspace] = {
        tenant: section if section.status == "failed" else _carried(section)
        for tenant, section in ({} if isinstance(before, UnsetType) else before).items()
    }
    fetch: dict[str, WorkspaceFetch] = {}
    for workspace in chosen:
        tenant = workspace.tenant_id
        if workspace.error is not None:
            fetch[tenant] = WorkspaceFetch(error=workspace.error)
            day[tenant] = DayWorkspace(
                status="failed",
                error=workspace.error,
                export_id=identity.export_id,
                snapshot_at=identity.snapshot_at,
                kept=day.get(tenant),  # its earlier rows of the day, carried over
            )
            continue
        fetch[tenant] = _fetched(workspace, ranked)
        day[tenant] = DayWorkspace(
            status="exported",
            export_id=identity.export_id,
            snapshot_at=identity.snapshot_at,
            deployments=deployments.get(tenant, 0),
            complete=_complete(fetch[tenant]),
            fetch=fetch[tenant],
        )
    _warn_duplicates([w.tenant_id for w in chosen if w.error is None], ranked)
    complete = all(w.error is None and _complete(fetch[w.tenant_id]) for w in chosen)
    return FetchSection(complete=complete, workspaces=fetch), dict(sorted(day.items()))


def _carried(section: DayWorkspace) -> DayWorkspace:
    """An earlier export's section of a workspace not exported now: kept as it was written."""
    return msgspec.structs.replace(section, status="carried")


def _fetched(workspace: Workspace, ranked: Ranked) -> WorkspaceFetch:
    """An exported workspace's evidence: its fetch's, then what the ranking decided."""
    mismatched = ranked.elsewhere.get(workspace.tenant_id, 0)
    if mismatched:
        warnings.warn(
            TenantMismatchWarning(
                f"workspace {workspace.tenant_id}: {mismatched} deployment(s) name another "
                "tenant_id in their record; kept under their own tenant_id"
            ),
            stacklevel=4,
        )
    return WorkspaceFetch(
        **msgspec.structs.asdict(workspace.evidence),
        tenant_id_elsewhere=mismatched,
        cross_workspace_duplicates=_duplicates(ranked.dropped.get(workspace.tenant_id, {})),
    )


def _complete(evidence: WorkspaceFetch) -> bool:
    """Whether a workspace's listings all ended (an evidence that does not say: yes)."""
    return evidence.complete is not False and not isinstance(evidence.error, str)


def _duplicates(dropped: Mapping[str, int]) -> Duplicates:
    """The manifest's count of a workspace's copies dropped for another copy, by rule."""
    by_rule = {rule: dropped.get(rule, 0) for rule in DUPLICATE_RULES}
    return Duplicates(dropped=sum(by_rule.values()), decided_by=by_rule)


def _warn_duplicates(exported: list[str], ranked: Ranked) -> None:
    """One warning for the whole export: how many copies were dropped, and by which rule."""
    dropped = [ranked.dropped.get(tenant, {}) for tenant in exported]
    by_rule = {rule: sum(d.get(rule, 0) for d in dropped) for rule in DUPLICATE_RULES}
    total = sum(by_rule.values())
    if not total:
        return
    order = ", then ".join(exported)
    kept = {
        "owner": "the copy from the workspace its tenant_id names was kept",
        "order": f"the copy from the workspace given first was kept: {order}",
        "day": "the day's row of the workspace its tenant_id names, not exported now, was kept",
    }
    rules = "; ".join(f"{n} by rule {rule} ({kept[rule]})" for rule, n in by_rule.items() if n)
    warnings.warn(
        DuplicateDeploymentsWarning(
            f"{total} duplicate copy(ies) of deployments listed by more than one workspace "
            f"dropped, so each deployment counts once: {rules}; per workspace in the "
            "manifest's fetch.workspaces.<tenant>.cross_workspace_duplicates"
        ),
        stacklevel=4,
    )


def deployments_by_tenant(table_dir: Path) -> dict[str, int]:
    """Deployments per tenant_id in a partition folder (the merged day, before publishing)."""
    table = _read(table_dir, [TENANT])
    if table is None:
        return {}
    counts = pc.value_counts(table[TENANT]).to_pylist()
    return {item["values"]: item["counts"] for item in counts if item["values"] is not None}


def headline(manifest: Manifest) -> str | None:
    """The summary's warning line when a workspace asked for is missing, else None."""
    failed = manifest.failed_workspaces()
    if not failed:
        return None
    return (
        f"PARTIAL: {len(failed)} workspace(s) failed, so this day lacks their fresh data: "
        f"{', '.join(failed)} (see the manifest's `workspaces`; export them again)"
    )
