"""`dims report`: the capacity, cost and image-version reports of one snapshot."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ._options import add_out, date
from ._output import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument("--date", type=date, help="snapshot date (default: the latest)")
    parser.add_argument("--json", action="store_true", help="print where the report went, as JSON")
    prices = parser.add_argument_group(
        "prices (US dollars; default: OpenCost's custom-pricing defaults, 730 hours a month)"
    )
    prices.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="YAML or TOML price sheet: cpu_core_hour, memory_gib_hour, storage_gib_month, "
        "hours_per_month, and per-type overrides under `types`",
    )
    prices.add_argument(
        "--cpu-hour", type=float, metavar="USD", help="$ per core-hour (default 0.031611)"
    )
    prices.add_argument(
        "--gib-hour", type=float, metavar="USD", help="$ per GiB-hour of memory (default 0.004237)"
    )
    prices.add_argument(
        "--storage-gib-month",
        type=float,
        metavar="USD",
        help="$ per GiB-month of DB storage (default 0.04)",
    )


def run(args: argparse.Namespace) -> int:
    from ..reports import DEFAULT_PRICES, load_prices, report_files, write_report

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
        say(json.dumps({**written, "seconds": seconds}, indent=2))
    else:
        say(f"report written in {seconds:.1f} s to {folder}:")
        say("\n".join(f"  {name}" for name in files))
        say(f"open: {path if isinstance(path, str) else path.resolve()}")
    return 0
