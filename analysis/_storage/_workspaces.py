"""Several workspaces in one day of the dataset: what the writer does beyond one snapshot.

A workspace is what the service scopes by `X-Tenant-Id`; every table has its `tenant_id`.
An export names the workspaces it fetched, and a day of the dataset is the union of them:

- Two exports of different workspaces into one `--out` on one day never replace each
  other. Before publishing, `carry_over` adds to each new file the rows of the day's
  published version that belong to workspaces this export did not fetch (read under the
  writer's lock, so no other export changes them meanwhile). Re-exporting workspace A
  replaces A's rows and keeps B's; the path of every file stays the dataset contract.
- A deployment belongs to the workspace named by its own `tenant_id` (child tables repeat
  it), and an id appears once in a day. Within one export the source keeps one copy of an
  id (`dims._fetch._copies`); across exports, a deployment the new export holds replaces the
  day's row of it (a deployment moved from B to A and exported under A replaces B's row),
  except when both name a workspace this export did not fetch: then the day's row is that
  workspace's and stays, and the new copy (another workspace's stale view of it) is
  dropped and counted (rule "day"). Rows of an export made without a workspace
  (tenant_id null: providers, repositories, rejected records) are kept, never guessed.
- A workspace that failed (`--allow-partial`) publishes nothing: its rows already written
  are dropped and its rows from the day's earlier version, if any, are carried over.
- The manifest's `workspaces` section lists every workspace of the day with its status
  (`exported` now, `carried` from an earlier export, `failed`), its export and its fetch
  evidence, merged from the earlier manifest.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

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


#: Why a copy of a deployment was dropped, in the manifest's order: another workspace's copy
#: was the owner's, or came from a workspace given earlier (`dims._fetch._copies`), or the day
#: already had the row of the workspace the copy names, which this export did not fetch.
DUPLICATE_RULES = ("owner", "order", "day")


@dataclass
class SettledDay:
    """The day made whole: rows per table after, and the manifest's sections for it."""

    rows: dict[str, int]
    fetch: FetchSection
    workspaces: dict[str, DayWorkspace]


def settle(
    tmp: Path,
    root: paths.Location,
    day: date,
    workspaces: Iterable[Workspace],
    identity: Identity,
    mismatches: Mapping[str, int],
    rows: Mapping[str, int],
) -> SettledDay:
    """The day made whole in `tmp` (`carry_over`) and the manifest's sections for it: rows
    per table, and `fetch` and `workspaces`. Called under the writer's lock (or lease), so
    the published day read here is the one the new version replaces."""
    chosen = list(workspaces)
    published = _published(root, day)
    merged, day_kept = carry_over(tmp, day, chosen, published, rows)
    chosen, mismatches = _with_day_kept(chosen, day_kept, mismatches)
    counts = deployments_by_tenant(paths.partition_dir(tmp, "deployments", day))
    earlier = _published_manifest(root, day) if published else None
    fetch, sections = manifest_sections(chosen, identity, earlier, mismatches, counts)
    return SettledDay(merged, fetch, sections)


def carry_over(
    tmp: Path,
    day: date,
    workspaces: Iterable[Workspace],
    published: Mapping[str, pa.Table],
    rows: Mapping[str, int],
) -> tuple[dict[str, int], set[str]]:
    """Make the new files of `day` (in `tmp`, `rows` per table) the whole day: the exported
    workspaces' new rows, and the `published` rows of every other workspace. Rows per
    table, after, and the ids whose new copy was dropped for the day's row (`_day_keeps`).
    When the day is new and no workspace failed, the files stay as written.
    """
    chosen = list(workspaces)
    exported = pa.array([w.tenant_id for w in chosen if w.error is None], pa.string())
    failed = pa.array([w.tenant_id for w in chosen if w.error is not None], pa.string())
    if not published and not len(failed):
        return dict(rows), set()
    new = {name: _read(paths.partition_dir(tmp, name, day)) for name in TABLE_NAMES}
    if len(failed):
        new = {name: _without(table, failed) for name, table in new.items()}
    theirs = _day_keeps(published.get("deployments"), new["deployments"], exported)
    if len(theirs):
        new = {name: _without_ids(name, table, theirs) for name, table in new.items()}
    kept = _kept_rows(published, new, exported)
    merged = {}
    for name, table in new.items():
        carried = kept.get(name)
        if table is not None and carried is not None:
            table = pa.concat_tables([table, _like(carried, table)])
        if carried is not None or len(failed) or len(theirs):
            _rewrite(paths.partition_dir(tmp, name, day), table)
        merged[name] = table.num_rows if table is not None else 0
    return merged, set(theirs.to_pylist())


def _with_day_kept(
    workspaces: list[Workspace], day_kept: set[str], mismatches: Mapping[str, int]
) -> tuple[list[Workspace], dict[str, int]]:
    """Each workspace with its copies dropped for the day's row counted (rule "day"), and
    the mismatches without them: they were counted as kept under another workspace."""
    counted = Counter(mismatches)
    out = []
    for workspace in workspaces:
        dropped = len(workspace.foreign_ids & day_kept) if day_kept else 0
        counted[workspace.tenant_id] -= dropped
        duplicates = {**workspace.duplicates, "day": dropped}
        out.append(dataclasses.replace(workspace, duplicates=duplicates))
    return out, dict(counted)


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


def _without(table: pa.Table | None, tenants: pa.Array) -> pa.Table | None:
    if table is None:
        return None
    return table.filter(pc.invert(pc.is_in(table[TENANT], value_set=tenants)))


def _day_keeps(old: pa.Table | None, fresh: pa.Table | None, exported: pa.Array) -> pa.Array:
    """Ids whose published row stays and whose new copy goes: both rows name workspaces
    this export did not fetch (the new copy is another workspace's view of a deployment
    that is not its own; the day's row is its workspace's, and not this export's to replace).
    """
    if old is None or fresh is None:
        return pa.array([], pa.string())
    foreign = fresh.filter(_not_in(fresh[TENANT], exported))["id"]
    theirs = old.filter(
        pc.and_(_not_in(old[TENANT], exported), pc.is_in(old["id"], value_set=foreign))
    )
    return pc.unique(theirs["id"].combine_chunks())


def _not_in(column: pa.ChunkedArray, tenants: pa.Array) -> pa.ChunkedArray:
    """Rows whose tenant_id is not one of `tenants` (null counts as not one)."""
    return pc.invert(pc.fill_null(pc.is_in(column, value_set=tenants), False))


def _without_ids(name: str, table: pa.Table | None, ids: pa.Array) -> pa.Table | None:
    """A table without the rows of deployments `ids` (tables without a deployment column
    are kept whole)."""
    if table is None:
        return None
    key = "id" if name == "deployments" else "deployment_id"
    if key not in table.column_names:
        return table
    return table.filter(pc.invert(pc.is_in(table[key], value_set=ids)))


def _kept_rows(
    old: Mapping[str, pa.Table], new: Mapping[str, pa.Table | None], exported: pa.Array
) -> dict[str, pa.Table]:
    """The published rows that stay: deployments of workspaces not exported now (and not in
    the new export), their children, and other tables' rows of other workspaces."""
    deployments = old.get("deployments")
    if deployments is None:
        return {}
    fresh = new["deployments"]
    new_ids = fresh["id"] if fresh is not None else pa.array([], pa.string())
    stays = pc.and_(
        _not_in(deployments[TENANT], exported),
        pc.invert(pc.is_in(deployments["id"], value_set=new_ids)),
    )
    kept = {"deployments": deployments.filter(stays)}
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


def _like(table: pa.Table, model: pa.Table) -> pa.Table:
    """`table` with exactly `model`'s columns (an older schema's missing ones as nulls)."""
    columns = [
        table[f.name].cast(f.type) if f.name in table.column_names else pa.nulls(len(table), f.type)
        for f in model.schema
    ]
    return pa.Table.from_arrays(columns, schema=model.schema)


def _rewrite(folder: Path, table: pa.Table | None) -> None:
    """The partition's one file, rewritten with the merged rows and the new file's metadata."""
    files = sorted(folder.glob("*.parquet"))
    if table is None or not files:
        return
    target = files[0]
    schema = pq.read_schema(target)
    with pq.ParquetWriter(target.with_suffix(".merging"), schema, compression="zstd") as writer:
        writer.write_table(table.replace_schema_metadata(schema.metadata))
    for extra in files[1:]:
        extra.unlink()
    target.with_suffix(".merging").replace(target)


# --- the manifest --------------------------------------------------------------------------


def manifest_sections(
    workspaces: Iterable[Workspace],
    identity: Identity,
    earlier: Manifest | None,
    mismatches: Mapping[str, int],
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
        fetch[tenant] = _fetched(workspace, mismatches.get(tenant, 0))
        day[tenant] = DayWorkspace(
            status="exported",
            export_id=identity.export_id,
            snapshot_at=identity.snapshot_at,
            deployments=deployments.get(tenant, 0),
            complete=_complete(fetch[tenant]),
            fetch=fetch[tenant],
        )
    _warn_duplicates([w for w in chosen if w.error is None])
    complete = all(w.error is None and _complete(fetch[w.tenant_id]) for w in chosen)
    return FetchSection(complete=complete, workspaces=fetch), dict(sorted(day.items()))


def _carried(section: DayWorkspace) -> DayWorkspace:
    """An earlier export's section of a workspace not exported now: kept as it was written."""
    return msgspec.structs.replace(section, status="carried")


def _fetched(workspace: Workspace, mismatched: int) -> WorkspaceFetch:
    """An exported workspace's evidence: its fetch's, then what this export decided."""
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
        cross_workspace_duplicates=_duplicates(workspace),
    )


def _complete(evidence: WorkspaceFetch) -> bool:
    """Whether a workspace's listings all ended (an evidence that does not say: yes)."""
    return evidence.complete is not False and not isinstance(evidence.error, str)


def _duplicates(workspace: Workspace) -> Duplicates:
    """The manifest's count of a workspace's copies dropped for another copy, by rule."""
    by_rule = {rule: workspace.duplicates.get(rule, 0) for rule in DUPLICATE_RULES}
    return Duplicates(dropped=sum(by_rule.values()), decided_by=by_rule)


def _warn_duplicates(exported: list[Workspace]) -> None:
    """One warning for the whole export: how many copies were dropped, and by which rule."""
    by_rule = {rule: sum(w.duplicates.get(rule, 0) for w in exported) for rule in DUPLICATE_RULES}
    total = sum(by_rule.values())
    if not total:
        return
    order = ", then ".join(w.tenant_id for w in exported)
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
