"""`dims explain DEPLOYMENT`: one deployment's monthly cost as arithmetic a person can check.

The figures and their working come from `dims._reports.explain` (the report's own
functions); this module only prints them. A DEPLOYMENT that names no deployment, or several,
exits 1, as an unknown date does: the line is well-formed, the data lacks what it names
(`_exits`).
"""

from __future__ import annotations

import argparse
import json

from ._exits import Exit
from ._options import add_out, add_prices, date, prices_of
from ._output import say, say_error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "deployment",
        metavar="DEPLOYMENT",
        help="the deployment's id, or its exact name (a name several deployments share is "
        "refused with their ids)",
    )
    add_out(parser)
    parser.add_argument("--date", type=date, help="snapshot date (default: the latest)")
    add_prices(parser, "for the costs explained")
    parser.add_argument(
        "--json", action="store_true", help="print the explanation as JSON (null: unknown)"
    )


def run(args: argparse.Namespace) -> int:
    from .._errors import DeploymentLookupError
    from .._reports import explain, explain_lines, load_deployment, load_snapshot

    prices = prices_of(args)
    # Only the rows of the deployment asked for (every figure explain shows is per
    # deployment); the fleet is read only to suggest names when none answers.
    snap = load_deployment(args.out, args.deployment, args.date)
    if snap.deployments.empty:
        snap = load_snapshot(args.out, args.date)
    try:
        explanation = explain(snap, args.deployment, prices)
    except DeploymentLookupError as exc:
        say_error(f"dims explain: error: {exc}")
        return Exit.FAILED
    if args.json:
        say(json.dumps(explanation.as_dict(), indent=2, ensure_ascii=False))
    else:
        say("\n".join(explain_lines(explanation)))
    return 0
