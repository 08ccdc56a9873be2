"""`dims demo`: the whole journey against the embedded sandbox, no account needed."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from ._options import DEMO_OUT, add_fleet, add_out, add_rollout
from ._output import progress, say, say_if_slow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser, DEMO_OUT)
    add_fleet(parser)
    add_rollout(parser, "take yesterday's snapshot, roll VERSION out, then today's (a real diff)")


def run(args: argparse.Namespace) -> int:
    """The whole journey against the embedded sandbox: no account, no network.

    With `--roll-out VERSION`, yesterday's snapshot is taken first, then the fleet's second
    day (`sandbox.second_day`: a share of the fleet moves to VERSION, some deployments scale,
    some ask for more, a few are replaced) and today's is taken: the report's history,
    `dims diff` and `dims check`'s drift show it, in dollars by cause.
    """
    import datetime as dt

    from .._connection import Given, connect, resolve_settings
    from .._reports import diff as diff_snapshots
    from .._reports import write_report
    from .._snapshot import take_snapshot
    from .._storage import check_writable
    from ..sandbox import run_sandbox, second_day

    check_writable(args.out)
    say_if_slow()
    today = dt.datetime.now(dt.UTC).date()
    with run_sandbox(deployments=args.deployments, seed=args.seed) as sandbox_handle:
        say(f"sandbox serving {args.deployments} deployments at {sandbox_handle.base_url}")
        # its own sandbox: none of the user's workspaces, profile or key (DIMS_TENANT_ID
        # naming several would otherwise refuse the one client the demo needs)
        own = resolve_settings(Given(base_url=sandbox_handle.base_url), None)
        client = connect(settings=own.for_workspace(None))
        if args.roll_out is not None:
            with progress() as shown:
                before = take_snapshot(
                    client, args.out, snapshot_date=today - dt.timedelta(days=1), progress=shown
                )
            say(before.summary())
            day = second_day(sandbox_handle.fleet, args.roll_out, args.share)
            say(
                f"rolled {len(day.moved):,} deployments out to image {args.roll_out}; "
                f"scaled {len(day.scaled):,}, resized {len(day.resized):,}, "
                f"added {len(day.added):,}, removed {len(day.removed):,}"
            )
        with progress() as shown:
            result = take_snapshot(client, args.out, snapshot_date=today, progress=shown)
    say(result.summary())
    if args.roll_out is not None:
        say(diff_snapshots(args.out).summary())
    path = write_report(args.out, snapshot_date=result.snapshot_date)
    say(f"report: {path if isinstance(path, str) else path.resolve()}")
    say(next_steps(args.out, rolled_out=args.roll_out is not None))
    return 0


def next_steps(out: Path | str, *, rolled_out: bool) -> str:
    """The commands to run next, exactly as they run from here (the README's walkthrough)."""
    dims = _this_command()
    where = shlex.quote(str(out))
    query = "select deployment_type, count(*) as deployments from deployments group by 1"
    lines = ["next:", f"  {dims} sql --out {where} {shlex.quote(query)}"]
    if not rolled_out:
        lines.append(f"  {dims} demo --out {where} --roll-out 0.12.0   # a second day: a release")
    lines += [f"  {dims} diff --out {where}", f"  {dims} report --out {where}"]
    return "\n".join(lines)


def _this_command() -> str:
    """How this dims was called, when that is a path (`.venv/bin/dims`), else `dims`."""
    called = sys.argv[0] if sys.argv else ""
    if Path(called).name != "dims":
        return "dims"
    relative = os.path.relpath(called)
    return shlex.quote(relative if not relative.startswith("..") else called)
