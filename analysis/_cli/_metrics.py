"""`dims metrics`: the snapshot's figures as Prometheus metrics on stdout.

The metrics come from `dims._reports.metrics_text` (the report's own figures); this module
only prints them. For the node exporter's textfile collector, write to a temporary file and
move it into place, so the collector never reads half a file:
`dims metrics > dir/dims.prom.$$ && mv dir/dims.prom.$$ dir/dims.prom`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from .. import _defaults as defaults
from ._exits import Exit
from ._options import add_out, add_prices, date, prices_of
from ._output import say, say_document, say_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument("--date", type=date, help="snapshot date (default: the latest)")
    add_prices(parser, "for the cost metrics")
    parser.add_argument(
        "--max-series",
        type=_whole,
        default=defaults.MAX_SERIES,
        metavar="N",
        help=f"the most series one family holds (default {defaults.MAX_SERIES}): a scope past "
        "it keeps its most expensive groups and sums the others in one `__other__` series, "
        "with a warning",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--openmetrics",
        action="store_true",
        help="OpenMetrics 1.0 text, ending with `# EOF` (default: the Prometheus text format "
        "0.0.4, which the node exporter's textfile collector and a Pushgateway read)",
    )
    shown.add_argument(
        "--json",
        action="store_true",
        help="the same metrics as JSON: name, help and samples (labels, value) of each",
    )


def _whole(text: str) -> int:
    """`--max-series`: a whole number (its floor is checked by `run`, before any data is read,
    against the metrics' own `MIN_SERIES`)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None


def run(args: argparse.Namespace) -> int:
    from .._reports import MIN_SERIES, format_metrics, load_snapshot, metric_families

    if args.max_series < MIN_SERIES:
        say_error(
            f"dims metrics: error: argument --max-series: expected at least {MIN_SERIES} (one "
            f"group and the sum of the others), got {args.max_series}"
        )
        return Exit.USAGE
    prices = prices_of(args)
    snap = load_snapshot(args.out, args.date)
    every = metric_families(snap, prices, args.max_series)
    if args.json:
        families = [asdict(family) for family in every]
        for family in families:
            family["samples"] = [
                {"labels": dict(sample["labels"]), "value": sample["value"]}
                for sample in family["samples"]
            ]
        say(json.dumps(families, indent=2, ensure_ascii=False))
        return 0
    say_document(format_metrics(every, openmetrics=args.openmetrics).rstrip("\n"))
    return 0
