"""`dims report`: the capacity, cost and image-version reports of one snapshot, and the
month's figures in a few lines (the same in `--json`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ._options import add_out, date
from ._output import say


def allocation(text: str) -> str:
    """`--by`: keys OpenCost's way (`label:team`, `namespace`, `workspace`, `type`; several
    with commas), checked where they are defined (imported only when the option is given)."""
    from ..errors import ReportError
    from ..reports import allocation_keys

    try:
        allocation_keys(text)
    except ReportError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument("--date", type=date, help="snapshot date (default: the latest)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the month's figures and where the report went, as JSON",
    )
    parser.add_argument(
        "--by",
        action="append",
        type=allocation,
        default=[],
        metavar="KEYS",
        help="also allocate cost and capacity by KEYS (repeat it): label:<key> (e.g. "
        "label:team), namespace, workspace, type, or several at once, comma-separated "
        "(namespace,label:app); deployments without them in __unallocated__; each also "
        "written as cost_by_<keys>.parquet (default: none beyond the page's own: type, "
        "namespace, workspace, and the label team where deployments have it)",
    )
    prices = parser.add_argument_group(
        "prices (US dollars; default: OpenCost's custom-pricing defaults, 730 hours a month; "
        "a report priced otherwise goes to reports/prices=<sheet>/, beside the others)"
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
    from ..reports import (
        DEFAULT_PRICES,
        headline,
        load_prices,
        load_snapshot,
        report_files,
        write_report,
    )
    from ..reports import headline_lines as lines

    started = time.perf_counter()
    prices = DEFAULT_PRICES if args.prices is None else load_prices(args.prices)
    prices = prices.with_rates(
        cpu_core_hour=args.cpu_hour,
        memory_gib_hour=args.gib_hour,
        storage_gib_month=args.storage_gib_month,
    )
    snap = load_snapshot(args.out, args.date)
    path = write_report(snap, prices=prices, by=args.by)
    figures = headline(snap, prices)
    files = report_files(path)
    seconds = round(time.perf_counter() - started, 3)
    folder = str(path).rsplit("/", 1)[0] if isinstance(path, str) else str(path.parent)
    if args.json:
        written = {"report": str(path), "folder": folder, "files": files, "seconds": seconds}
        say(json.dumps({**figures, **written}, indent=2))
        return 0
    say("\n".join(lines(figures)))
    parquet = sum(name.endswith(".parquet") for name in files)
    say(f"report written in {seconds:.1f} s to {folder} (report.html and {parquet} Parquet files)")
    say(f"open: {path if isinstance(path, str) else path.resolve()}")
    return 0
