"""What each `dims` command does, given its parsed arguments. See cli.py for the options."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .connect import connect
from .errors import ConfigurationError
from .progress import Progress
from .transport import RetryPolicy


def _say(text: str) -> None:
    print(text, flush=True)


def export(args: argparse.Namespace, filters: dict) -> int:
    from .export import check_writable
    from .snapshot import snapshot_from_dump, take_snapshot

    check_writable(args.out, args.snapshot_date)  # a bad folder fails before any fetch
    if args.from_json is not None:
        if filters:
            raise ConfigurationError(
                "filters apply to the service; they cannot be combined with --from-json"
            )
        result = snapshot_from_dump(
            args.from_json,
            args.out,
            include_env_values=args.include_env_values,
            strict=args.strict,
            snapshot_date=args.snapshot_date,
        )
    else:
        client = connect(
            args.base_url,
            args.api_key,
            args.tenant_id,
            api_key_header=args.api_key_header,
            tenant_header=args.tenant_header,
            allow_insecure_http=args.allow_insecure_http,
            timeout=args.timeout,
            retry=RetryPolicy(attempts=args.retries + 1),
            limits=args.limits,
        )
        with Progress() as progress:
            result = take_snapshot(
                client,
                args.out,
                concurrency=args.concurrency,
                page_size=args.page_size,
                include_env_values=args.include_env_values,
                strict=args.strict,
                snapshot_date=args.snapshot_date,
                progress=progress,
                **filters,
            )
    _say(result.summary())
    return 0


def report(args: argparse.Namespace, filters: dict) -> int:
    from .reports import write_report

    started = time.perf_counter()
    path = write_report(args.out, snapshot_date=args.date)
    _say(f"report written to {path} in {time.perf_counter() - started:.1f} s")
    return 0


def diff(args: argparse.Namespace, filters: dict) -> int:
    from .reports import diff as diff_snapshots

    result = diff_snapshots(args.out, from_date=args.from_date, to_date=args.to_date)
    _say(result.summary())
    return 0


def sandbox(args: argparse.Namespace, filters: dict) -> int:
    from .sandbox import Faults, serve

    faults = Faults(
        rate_limit_every=args.rate_limit_every,
        retry_after_s=args.retry_after,
        error_every=args.error_every,
        error_status=args.error_status,
        truncate_every=args.truncate_every,
        reset_every=args.reset_every,
        stuck_offset=args.stuck_offset,
        insert_while_paging=args.insert_while_paging,
    )
    serve(
        port=args.port,
        deployments=args.deployments,
        seed=args.seed,
        latency_ms=args.latency_ms,
        faults=faults,
        api_key=args.api_key,
    )
    return 0


def demo(args: argparse.Namespace, filters: dict) -> int:
    """The whole journey against the embedded sandbox: no account, no network."""
    from .export import check_writable
    from .reports import write_report
    from .sandbox import run_sandbox
    from .snapshot import take_snapshot

    check_writable(args.out)
    with run_sandbox(deployments=args.deployments, seed=args.seed) as sandbox_handle:
        _say(f"sandbox serving {args.deployments} deployments at {sandbox_handle.base_url}")
        with Progress() as progress:
            result = take_snapshot(connect(sandbox_handle.base_url), args.out, progress=progress)
    _say(result.summary())
    path = write_report(args.out, snapshot_date=result.snapshot_date)
    _say(f"report: {Path(path).resolve()}")
    _say("next: open the report, or explore with `.venv/bin/dims --help` and notebooks/")
    return 0
