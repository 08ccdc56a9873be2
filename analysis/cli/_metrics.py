"""`dims metrics`: the snapshot's figures as Prometheus metrics on stdout.

The metrics come from `analysis.reports.metrics_text` (the report's own figures); this module
only prints them. For the node exporter's textfile collector, write to a temporary file and
move it into place, so the collector never reads half a file:
`dims metrics > dir/dims.prom.$$ && mv dir/dims.prom.$$ dir/dims.prom`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from ._options import add_out, add_prices, date, prices_of
from ._output import say, say_document


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument("--date", type=date, help="snapshot date (default: the latest)")
    add_prices(parser, "for the cost metrics")
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


def run(args: argparse.Namespace) -> int:
    from ..reports import load_snapshot, metric_families, metrics_text

    prices = prices_of(args)
    snap = load_snapshot(args.out, args.date)
    if args.json:
        families = [asdict(family) for family in metric_families(snap, prices)]
        for family in families:
            family["samples"] = [
                {"labels": dict(sample["labels"]), "value": sample["value"]}
                for sample in family["samples"]
            ]
        say(json.dumps(families, indent=2, ensure_ascii=False))
        return 0
    say_document(metrics_text(snap, prices, openmetrics=args.openmetrics).rstrip("\n"))
    return 0
