"""`dims report`: the capacity, cost and image-version reports of one snapshot, and the
month's figures in a few lines (the same in `--json`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

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


def focus_file(text: str) -> Path:
    """`--focus`: a local file whose name says its format (.parquet or .csv)."""
    if text.startswith(("s3://", "gs://", "abfs://")) or not text.lower().endswith(
        (".parquet", ".csv")
    ):
        raise argparse.ArgumentTypeError(
            f"{text!r}: the FOCUS file is a local file ending in .parquet or .csv"
        )
    return Path(text)


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
    parser.add_argument(
        "--focus",
        type=focus_file,
        metavar="FILE",
        help="also write the month's costs as FOCUS 1.0 rows (the FinOps Foundation's bill "
        "format), one per deployment and component, to FILE: Parquet, or CSV when FILE "
        "ends in .csv; unpriced deployments are left out and counted (default: not written)",
    )
    parser.add_argument(
        "--focus-basis",
        choices=["request-max", "request-min", "limit-max", "limit-min"],
        default="request-max",
        help="the cost the FOCUS rows carry: requests or limits, at max or min scale "
        "(default: request-max, the report's headline figure)",
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
    # first: a FOCUS file that cannot be written stops the command before the report is
    focus = _write_focus(snap, prices, args) if args.focus else None
    path = write_report(snap, prices=prices, by=args.by)
    figures = headline(snap, prices)
    files = report_files(path)
    seconds = round(time.perf_counter() - started, 3)
    folder = str(path).rsplit("/", 1)[0] if isinstance(path, str) else str(path.parent)
    if args.json:
        written = {"report": str(path), "folder": folder, "files": files, "seconds": seconds}
        say(json.dumps({**figures, **written, **({"focus": focus} if focus else {})}, indent=2))
        return 0
    say("\n".join(lines(figures)))
    if focus:
        say(_focus_line(focus))
    parquet = sum(name.endswith(".parquet") for name in files)
    say(f"report written in {seconds:.1f} s to {folder} (report.html and {parquet} Parquet files)")
    say(f"open: {path if isinstance(path, str) else path.resolve()}")
    return 0


def _write_focus(snap: Any, prices: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The FOCUS file of `--focus`, and what `--json` says of it."""
    from ..reports import focus_table, write_focus

    basis, scale = args.focus_basis.split("-")
    export = focus_table(snap, prices, basis=basis, scale=scale)
    written = write_focus(export, args.focus)
    return {"file": str(written.resolve()), **export.summary()}


def _focus_line(focus: dict[str, Any]) -> str:
    """One line: where the FOCUS rows went, their total and what was left out of them."""
    line = (
        f"FOCUS {focus['focus_version']} costs written to {focus['file']}: "
        f"{focus['rows']:,} rows, {focus['deployments']:,} deployments, "
        f"${focus['effective_cost_usd']:,.2f} ({focus['basis']}s at {focus['scale']} scale)"
    )
    left = focus["deployments_left_out"]
    if left:
        why = ", ".join(f"{n} {reason}" for reason, n in focus["left_out_reasons"].items())
        line += f"; {left:,} deployments left out, their cost unknown ({why})"
    return line
