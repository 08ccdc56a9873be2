"""`dims export`: fetch everything (or read a saved dump) and write one snapshot."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from .. import _defaults as defaults
from .. import _spec as spec
from .._errors import ConfigurationError
from .._gcpause import paused_gc
from ._exits import Exit
from ._options import (
    add_connection,
    add_filters,
    add_out,
    bounded,
    date,
    filters_of,
    named_path,
    settings_of,
)
from ._output import progress, say

if TYPE_CHECKING:
    from .._connection import DimsClient, ResponseLimits, Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    add_connection(parser)
    add_filters(parser)
    parser.add_argument(
        "--concurrency",
        type=bounded(1, 64),
        default=defaults.CONCURRENCY,
        metavar="N",
        help=f"requests in flight in all, listings and repositories together "
        f"(default {defaults.CONCURRENCY})",
    )
    low, high = spec.page_size_range()
    parser.add_argument(
        "--page-size",
        type=bounded(low, high),
        default=defaults.PAGE_SIZE,
        metavar="N",
        help=f"records asked for per page, the spec's `limit` ({low}..{high}; "
        f"default {defaults.PAGE_SIZE})",
    )
    parser.add_argument(
        "--from-json", type=named_path, metavar="FILE", help="read a saved dump (or /dev/stdin)"
    )
    _add_writing(parser)


def _add_writing(parser: argparse.ArgumentParser) -> None:
    """How the snapshot is written and published, whichever source it reads."""
    parser.add_argument(
        "--include-env-values",
        action="store_true",
        help="store containers' env values (they may hold secrets; off by default)",
    )
    parser.add_argument("--strict", action="store_true", help="fail on the first bad record")
    parser.add_argument(
        "--workers",
        type=bounded(0, 64),
        default=None,
        metavar="N",
        help="processes reading records beside this one (default: one per other core, "
        "at most 3; 0: read everything in this process)",
    )
    parser.add_argument("--snapshot-date", type=date, help="default: today (UTC)")
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="publish a snapshot with 0 deployments even when the latest one had some",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="with several workspaces: when some fail, publish the others (exit 3, the failed "
        "ones named) instead of nothing",
    )
    parser.add_argument("--json", action="store_true", help="print the snapshot's manifest as JSON")


def run(args: argparse.Namespace) -> int:
    filters = filters_of(args)
    with paused_gc():  # imports allocate much and free little: about 10% sooner without it
        from .._snapshot import snapshot_from_dump, take_snapshot

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
        with progress() as shown:
            shown.describe(f"reading {args.from_json.name or args.from_json}")
            result = snapshot_from_dump(args.from_json, args.out, progress=shown, **writing)
    else:
        settings = settings_of(args)  # the service path only: resolved once, handed down
        reading = {"concurrency": args.concurrency, "page_size": args.page_size}
        if settings.tenants:
            return _export_workspaces(args, settings, {**writing, **reading}, filters)
        client = _connect(args, settings)
        with progress() as shown:
            result = take_snapshot(
                client, args.out, progress=shown, **reading, **writing, **filters
            )
    say(json.dumps(result.manifest.to_dict(), indent=2) if args.json else result.summary())
    return 0


def _connect(args: argparse.Namespace, settings: Settings) -> DimsClient:
    """A client with the connection options, for the settings' one workspace (or none)."""
    from .._connection import RetryPolicy, connect

    return connect(
        settings=settings,
        timeout=args.timeout,
        retry=RetryPolicy(retries=args.retries),
        limits=_limits(args),
    )


def _limits(args: argparse.Namespace) -> ResponseLimits:
    """The per-request limits of the options (made here: `--from-json` never imports httpx)."""
    from .._connection import ResponseLimits

    return ResponseLimits(
        deadline=args.deadline,
        max_body_bytes=args.max_body_mib * defaults.MIB,
        max_decoded_bytes=args.max_decoded_mib * defaults.MIB,
    )


def _export_workspaces(
    args: argparse.Namespace, settings: Settings, options: dict[str, Any], filters: dict[str, Any]
) -> int:
    """One snapshot of several workspaces; exit 3 when --allow-partial left some out."""
    from .._errors import WorkspacesFailed
    from .._snapshot import take_snapshot

    clients = {t: _connect(args, settings.for_workspace(t)) for t in settings.tenants}
    try:
        with progress() as shown:
            result = take_snapshot(
                clients,
                args.out,
                allow_partial=args.allow_partial,
                progress=shown,
                **options,
                **filters,
            )
    except WorkspacesFailed as exc:
        if args.json:
            failure = {"published": False, "error": str(exc), "workspaces": exc.workspaces}
            say(json.dumps(failure, indent=2))
        raise
    say(json.dumps(result.manifest.to_dict(), indent=2) if args.json else result.summary())
    return Exit.PARTIAL if result.manifest.fetch.partial else Exit.DONE
