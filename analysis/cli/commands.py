"""What each `dims` command does, given its parsed arguments (the options: `analysis.cli`)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import defaults
from ..errors import ConfigurationError
from ..gcpause import paused_gc
from ..progress import Progress

if TYPE_CHECKING:
    from ..connection.transport import ResponseLimits

#: `dims export --allow-partial` published, but some workspaces failed (named on stdout).
EXIT_PARTIAL = 3


def _say(text: str) -> None:
    print(text, flush=True)


def export(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    if args.from_json is not None:  # read and split on a thread while pyarrow is imported
        from ..storage.dumps import read_ahead

        read_ahead(args.from_json)
    with paused_gc():  # imports allocate much and free little: about 10% sooner without it
        from ..snapshot import snapshot_from_dump, take_snapshot

    if args.from_json is not None and (filters or args.tenant_id):
        raise ConfigurationError(
            "filters and --tenant-id apply to the service; they cannot be combined with --from-json"
        )
    # what a snapshot is written with, whichever source it reads
    writing: dict[str, Any] = {
        "include_env_values": args.include_env_values,
        "strict": args.strict,
        "snapshot_date": args.snapshot_date,
        "allow_empty": args.allow_empty,
        "workers": args.workers,
    }
    if args.from_json is not None:
        result = snapshot_from_dump(args.from_json, args.out, **writing)
    else:
        from ..connection import tenant_ids  # the service path only

        tenants = tenant_ids(args.tenant_id)
        reading = {"concurrency": args.concurrency, "page_size": args.page_size}
        if tenants:
            return _export_workspaces(args, tenants, {**writing, **reading}, filters)
        client = _connect(args, None)
        with Progress() as progress:
            result = take_snapshot(
                client, args.out, progress=progress, **reading, **writing, **filters
            )
    _say(json.dumps(result.manifest.to_dict(), indent=2) if args.json else result.summary())
    return 0


def _connect(args: argparse.Namespace, tenant_id: str | None) -> Any:
    """A client with the connection options, for one workspace (None: as configured)."""
    from ..connection import RetryPolicy, connect

    return connect(
        args.base_url,
        args.api_key,
        tenant_id,
        code_host=args.code_host,
        api_key_header=args.api_key_header,
        tenant_header=args.tenant_header,
        allow_insecure_http=args.allow_insecure_http,
        timeout=args.timeout,
        retry=RetryPolicy(attempts=args.retries + 1),
        limits=_limits(args),
    )


def _limits(args: argparse.Namespace) -> ResponseLimits:
    """The per-request limits of the options (made here: `--from-json` never imports httpx)."""
    from ..connection.transport import ResponseLimits

    return ResponseLimits(
        deadline=args.deadline,
        max_body_bytes=args.max_body_mib * defaults.MIB,
        max_decoded_bytes=args.max_decoded_mib * defaults.MIB,
    )


def _export_workspaces(
    args: argparse.Namespace, tenants: list[str], options: dict[str, Any], filters: dict[str, Any]
) -> int:
    """One snapshot of several workspaces; exit 3 when --allow-partial left some out."""
    from ..snapshot import WorkspacesFailed, take_workspaces_snapshot

    clients = {tenant: _connect(args, tenant) for tenant in tenants}
    try:
        with Progress() as progress:
            result = take_workspaces_snapshot(
                clients,
                args.out,
                allow_partial=args.allow_partial,
                progress=progress,
                **options,
                **filters,
            )
    except WorkspacesFailed as exc:
        if args.json:
            failure = {"published": False, "error": str(exc), "workspaces": exc.workspaces}
            _say(json.dumps(failure, indent=2))
        raise
    _say(json.dumps(result.manifest.to_dict(), indent=2) if args.json else result.summary())
    return EXIT_PARTIAL if result.manifest.fetch.partial else 0


def report(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    from ..reports import DEFAULT_PRICES, load_prices, write_report
    from ..reports.report import report_files

    started = time.perf_counter()
    prices = DEFAULT_PRICES if args.prices is None else load_prices(args.prices)
    prices = prices.with_rates(
        cpu_core_hour=args.cpu_hour,
        memory_gib_hour=args.gib_hour,
        storage_gib_month=args.storage_gib_month,
    )
    path = write_report(args.out, snapshot_date=args.date, prices=prices)
    files = report_files(path)
    seconds = round(time.perf_counter() - started, 3)
    folder = str(path).rsplit("/", 1)[0] if isinstance(path, str) else str(path.parent)
    if args.json:
        written = {"report": str(path), "folder": folder, "files": files}
        _say(json.dumps({**written, "seconds": seconds}, indent=2))
    else:
        _say(f"report written in {seconds:.1f} s to {folder}:")
        _say("\n".join(f"  {name}" for name in files))
        _say(f"open: {path if isinstance(path, str) else path.resolve()}")
    return 0


#: How many changed deployments `dims diff` lists on a terminal (all of them in --json).
_DIFF_SHOWN = 20


def diff(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    from ..reports import diff as diff_snapshots

    tenants = [t.strip() for text in args.tenant_ids or () for t in text.split(",") if t.strip()]
    result = diff_snapshots(
        args.out, from_date=args.from_date, to_date=args.to_date, tenant_ids=tenants or None
    )
    changes = _changes(result)
    if args.changes_out is not None:
        _write_parquet(changes, args.changes_out)
    if args.json:
        _say(
            json.dumps(
                {
                    "from": result.from_date,
                    "to": result.to_date,
                    "tenant_ids": tenants or None,
                    "counts": result.counts(),
                    "notes": result.notes,
                    "capacity_totals": result.capacity_totals.to_dict(orient="records"),
                    "changes": changes.to_dict(orient="records"),
                },
                indent=2,
                default=str,
            )
        )
        return 0
    _say(result.summary())
    if len(changes):
        _say(f"  changed deployments ({len(changes):,}; --json or --changes-out for all):")
        for row in changes.head(_DIFF_SHOWN).itertuples():
            versions = f"{row.from_version or '-'} → {row.to_version or '-'}"
            _say(f"    {row.change:<9} {row.deployment_id}  {row.name}  {versions}")
        if len(changes) > _DIFF_SHOWN:
            _say(f"    … and {len(changes) - _DIFF_SHOWN:,} more")
    return 0


def _changes(result: Any) -> Any:
    """One row per deployment that changed: what changed (added, removed, upgrade,
    downgrade, changed, capacity) and its image version before and after."""
    import pandas as pd

    columns = ["deployment_id", "name", "deployment_type", "change", "from_version", "to_version"]
    added = result.added.assign(
        change="added", from_version=None, to_version=result.added["image_version"]
    )
    removed = result.removed.assign(
        change="removed", from_version=result.removed["image_version"], to_version=None
    )
    versions = result.version_changes
    moved = set(versions["deployment_id"])
    capacity = result.capacity_changes[~result.capacity_changes["deployment_id"].isin(moved)]
    capacity = capacity.assign(change="capacity", from_version=None, to_version=None)
    parts = [frame.reindex(columns=columns) for frame in (added, removed, versions, capacity)]
    changes = pd.concat([p for p in parts if len(p)] or [parts[0]], ignore_index=True)
    return changes.astype(object).where(changes.notna(), None)


def _write_parquet(frame: Any, path: Path) -> None:
    """Write the frame whole or not at all (a temporary file moved into place)."""
    import os

    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def sql(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    """One DuckDB query over the dataset's views (analysis.storage.reader.duckdb_connection)."""
    import duckdb

    from ..storage.reader import DatasetError, duckdb_connection, first_line

    connection = duckdb_connection(args.out, views=_views_named(args.query))
    try:
        try:
            cursor = connection.execute(args.query)
            names = [column[0] for column in cursor.description or ()]
            rows = cursor.fetchall() if names else []
        except duckdb.Error as exc:
            raise DatasetError(f"the query failed: {first_line(exc)}") from None
    finally:
        connection.close()
    if args.json:
        records = [dict(zip(names, row, strict=True)) for row in rows]
        _say(json.dumps(records, indent=2, default=str))
    elif names:
        _say(_text_table(names, rows))
    return 0


def _views_named(query: str) -> set[str] | None:
    """The views a query names, so that only those are made: a query of the latest snapshot
    never lists the history. None (every view) when DuckDB cannot tell without a catalog."""
    import duckdb

    try:
        return set(duckdb.get_table_names(query))
    except duckdb.Error:
        return None


def _text_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as aligned columns (numbers to the right), then how many there were."""
    cells = [["NULL" if value is None else str(value) for value in row] for row in rows]
    widths = [max([len(name), *(len(row[n]) for row in cells)]) for n, name in enumerate(names)]
    numeric = [
        bool(rows) and all(isinstance(row[n], int | float) or row[n] is None for row in rows)
        for n in range(len(names))
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        ).rstrip()

    lines = [line(names), line(["-" * width for width in widths])]
    lines += [line(row) for row in cells]
    lines.append(f"({len(rows):,} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def sandbox(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    from ..sandbox import serve

    try:
        faults = _faults(args)
    except ValueError as exc:  # Faults checks its own values; the CLI names the option
        raise ConfigurationError(str(exc).replace("Faults.", "--").replace("_", "-")) from None
    serve(
        port=args.port,
        deployments=args.deployments,
        seed=args.seed,
        latency_ms=args.latency_ms,
        faults=faults,
        api_key=args.api_key,
        untyped_every=args.untyped_every,
        real_shaped=args.real_shaped,
        names=args.names,
        tenants=args.tenants,
        rollout=None if args.roll_out is None else (args.roll_out, args.share),
        code_host=args.code_host,
    )
    return 0


def _faults(args: argparse.Namespace) -> Any:
    from ..sandbox import Faults

    return Faults(
        rate_limit_every=args.rate_limit_every,
        retry_after_s=args.retry_after,
        error_every=args.error_every,
        error_status=args.error_status,
        truncate_every=args.truncate_every,
        reset_every=args.reset_every,
        stuck_offset=args.stuck_offset,
        insert_while_paging=args.insert_while_paging,
        page_cap=args.page_cap,
        final_offset=args.final_offset,
        ignore_offset=args.ignore_offset,
        fail_tenant=args.fail_tenant,
        fail_tenant_status=args.fail_tenant_status,
    )


def demo(args: argparse.Namespace, filters: dict[str, Any]) -> int:
    """The whole journey against the embedded sandbox: no account, no network.

    With `--roll-out VERSION`, yesterday's snapshot is taken first, then a share of the fleet
    moves to VERSION and today's is taken: the report's history and `dims diff` show it.
    """
    import datetime as dt

    from ..connection import connect
    from ..reports import diff as diff_snapshots
    from ..reports import write_report
    from ..sandbox import roll_out, run_sandbox
    from ..snapshot import take_snapshot
    from ..storage.writer import check_writable

    check_writable(args.out)
    today = dt.datetime.now(dt.UTC).date()
    with run_sandbox(deployments=args.deployments, seed=args.seed) as sandbox_handle:
        _say(f"sandbox serving {args.deployments} deployments at {sandbox_handle.base_url}")
        client = connect(sandbox_handle.base_url)
        if args.roll_out is not None:
            with Progress() as progress:
                before = take_snapshot(
                    client, args.out, snapshot_date=today - dt.timedelta(days=1), progress=progress
                )
            _say(before.summary())
            moved = roll_out(sandbox_handle.fleet, args.roll_out, args.share)
            _say(f"rolled {len(moved):,} deployments out to image {args.roll_out}")
        with Progress() as progress:
            result = take_snapshot(client, args.out, snapshot_date=today, progress=progress)
    _say(result.summary())
    if args.roll_out is not None:
        _say(diff_snapshots(args.out).summary())
    path = write_report(args.out, snapshot_date=result.snapshot_date)
    _say(f"report: {path if isinstance(path, str) else path.resolve()}")
    _say("next: open the report, or explore with `.venv/bin/dims --help` and notebooks/")
    return 0
