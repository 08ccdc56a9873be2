"""`dims report`: the capacity, cost and image-version reports of one snapshot, and the
month's figures in a few lines (the same in `--json`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from .._escape import printable
from ._options import add_out, date, prices_of
from ._output import say

#: The FOCUS versions `--focus-version` takes, the default first: the same as
#: `dims._reports.FOCUS_VERSIONS` (a test holds them equal), written out so that
#: building the parser imports no report module (pandas).
FOCUS_VERSIONS = ("1.2", "1.0")


def allocation(text: str) -> str:
    """`--by`: keys OpenCost's way (`label:team`, `namespace`, `workspace`, `type`; several
    with commas), checked where they are defined (imported only when the option is given)."""
    from .._errors import ReportError
    from .._reports import allocation_keys

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
    _add_focus(parser)
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


def _add_focus(parser: argparse.ArgumentParser) -> None:
    """The FOCUS bill's options, beside the report's."""
    parser.add_argument(
        "--focus",
        type=focus_file,
        metavar="FILE",
        help="also write the month's costs as FOCUS rows (the FinOps Foundation's bill "
        "format), one per deployment and component, to FILE: Parquet, or CSV when FILE "
        "ends in .csv; unpriced deployments are left out and counted (default: not written)",
    )
    parser.add_argument(
        "--focus-basis",
        choices=["request-max", "request-min", "limit-max", "limit-min"],
        default="request-max",
        help="the cost the FOCUS rows carry: requests or limits, at max or min scale "
        "(default: request-max, the report's headline figure, the worst case)",
    )
    parser.add_argument(
        "--focus-version",
        choices=FOCUS_VERSIONS,
        default=FOCUS_VERSIONS[0],
        help="the FOCUS version of the file: 1.2, the one the FinOps Foundation's current "
        "validator checks, or 1.0 for tools that read only that (default: 1.2)",
    )


def run(args: argparse.Namespace) -> int:
    from .._reports import (
        cost_by,
        headline,
        load_snapshot,
        report_files,
        write_report,
    )
    from .._reports import headline_lines as lines

    started = time.perf_counter()
    prices = prices_of(args).with_rates(
        cpu_core_hour=args.cpu_hour,
        memory_gib_hour=args.gib_hour,
        storage_gib_month=args.storage_gib_month,
    )
    snap = load_snapshot(args.out, args.date)
    # first: a FOCUS file that cannot be written stops the command before the report is
    focus = _write_focus(snap, prices, args) if args.focus else None
    path = write_report(snap, prices=prices, by=args.by)
    figures = headline(snap, prices)
    allocations = {keys: _allocation_rows(cost_by(snap, keys, prices)) for keys in args.by}
    files = report_files(path)
    seconds = round(time.perf_counter() - started, 3)
    folder = str(path).rsplit("/", 1)[0] if isinstance(path, str) else str(path.parent)
    if args.json:
        written = {"report": str(path), "folder": folder, "files": files, "seconds": seconds}
        extra = {"by": allocations, **({"focus": focus} if focus else {})}
        say(json.dumps({**figures, **extra, **written}, indent=2))
        return 0
    say("\n".join(lines(figures)))
    for keys, rows in allocations.items():
        say("\n".join(_allocation_lines(keys, rows)))
    if focus:
        say(_focus_line(focus))
    parquet = sum(name.endswith(".parquet") for name in files)
    say(f"report written in {seconds:.1f} s to {folder} (report.html and {parquet} Parquet files)")
    say(f"open: {path if isinstance(path, str) else path.resolve()}")
    return 0


#: The figure an allocation is ranked and printed by (as the headline's top groups).
ALLOCATED = "cost_request_max_scale_usd_month"
#: Rows of an allocation the terminal shows (all of them are in --json and the Parquet file).
SHOWN = 10


def _allocation_rows(frame: Any) -> list[dict[str, Any]]:
    """An allocation's rows as data: the value (keys joined by ` / `), its month at requests
    and max scale (null where it cannot be priced), its share and its counts."""
    keys = list(frame.columns[: list(frame.columns).index("deployments")])
    rows = []
    for row in frame.to_dict("records"):
        cost = row[ALLOCATED]
        rows.append(
            {
                "value": " / ".join(str(row[key]) for key in keys),
                "usd_month": None if cost != cost else round(float(cost), 2),
                "share": None if row["cost_share"] != row["cost_share"] else row["cost_share"],
                "deployments": int(row["deployments"]),
                "deployments_unpriced": int(row["deployments_unpriced"]),
            }
        )
    return rows


def _allocation_lines(keys: str, rows: list[dict[str, Any]]) -> list[str]:
    """The top of an allocation, one line a value, as the headline prints its top groups."""
    out = [f"by {printable(keys)} (requests at max scale, $ a month):"]
    values = [printable(row["value"]) for row in rows[:SHOWN]]
    width = max(map(len, values), default=0)
    for row, value in zip(rows[:SHOWN], values, strict=True):
        cost = "—" if row["usd_month"] is None else f"${row['usd_month']:,.2f}"
        share = "" if row["share"] is None else f" ({row['share'] * 100:.1f} %)"
        unpriced = row["deployments_unpriced"]
        left_out = f", {unpriced:,} unpriced not included" if unpriced else ""
        out.append(
            f"  {value:<{width}}  {cost}{share}, {row['deployments']:,} deployments{left_out}"
        )
    if len(rows) > SHOWN:
        out.append(f"  … and {len(rows) - SHOWN:,} more (--json, or the report's Parquet file)")
    return out


def _write_focus(snap: Any, prices: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The FOCUS file of `--focus`, and what `--json` says of it."""
    from .._reports import focus_table, write_focus

    basis, scale = args.focus_basis.split("-")
    export = focus_table(snap, prices, basis=basis, scale=scale, version=args.focus_version)
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
