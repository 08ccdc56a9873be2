"""`dims demo`: the whole journey against the embedded sandbox, no account needed."""

from __future__ import annotations

import argparse

from .._progress import Progress
from ._options import DEMO_OUT, add_fleet, add_out, add_rollout
from ._output import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser, DEMO_OUT)
    add_fleet(parser)
    add_rollout(parser, "take yesterday's snapshot, roll VERSION out, then today's (a real diff)")


def run(args: argparse.Namespace) -> int:
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
    from ..storage import check_writable

    check_writable(args.out)
    today = dt.datetime.now(dt.UTC).date()
    with run_sandbox(deployments=args.deployments, seed=args.seed) as sandbox_handle:
        say(f"sandbox serving {args.deployments} deployments at {sandbox_handle.base_url}")
        client = connect(sandbox_handle.base_url)
        if args.roll_out is not None:
            with Progress() as progress:
                before = take_snapshot(
                    client, args.out, snapshot_date=today - dt.timedelta(days=1), progress=progress
                )
            say(before.summary())
            moved = roll_out(sandbox_handle.fleet, args.roll_out, args.share)
            say(f"rolled {len(moved):,} deployments out to image {args.roll_out}")
        with Progress() as progress:
            result = take_snapshot(client, args.out, snapshot_date=today, progress=progress)
    say(result.summary())
    if args.roll_out is not None:
        say(diff_snapshots(args.out).summary())
    path = write_report(args.out, snapshot_date=result.snapshot_date)
    say(f"report: {path if isinstance(path, str) else path.resolve()}")
    say("next: open the report, or explore with `.venv/bin/dims --help` and notebooks/")
    return 0
