"""`dims history --by KEYS`: each group's changes of monthly cost between consecutive
snapshots (day, group, before → after, change), for a terminal or as JSON.

The figures come from `dims._reports` (`cost_history`, `group_cost_changes`); this module
only chooses how they are shown. `dims history DEPLOYMENT` (one deployment's changes) is
another mode of the same command; here a DEPLOYMENT argument is a usage error.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Hashable, Mapping
from typing import Any

from .._escape import printable
from ._exits import Exit
from ._options import add_out, add_prices, date, prices_of
from ._output import say, say_error
from ._report import allocation

#: How many changes `dims history --by` prints per day on a terminal (all of them in --json).
_SHOWN = 10
#: What a change is measured by (`group_cost_changes`' default: requests at max scale).
HEADLINE = "cost_request_max_scale_usd_month"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "deployment",
        nargs="?",
        metavar="DEPLOYMENT",
        help="one deployment's history (not in this build: give --by)",
    )
    add_out(parser)
    parser.add_argument(
        "--by",
        action="append",
        type=allocation,
        default=[],
        metavar="KEYS",
        help="each group's changes of monthly cost, as `dims report --by` groups them: "
        "label:<key>, namespace, workspace, type, or several at once, comma-separated "
        "(repeat it for several groupings; default: none, and it is required)",
    )
    parser.add_argument("--from", dest="from_date", type=date, help="default: the oldest")
    parser.add_argument("--to", dest="to_date", type=date, help="default: the latest")
    add_prices(parser, "the costs are priced with")
    parser.add_argument(
        "--json", action="store_true", help="print every group's every change as JSON"
    )


def run(args: argparse.Namespace) -> int:
    if args.deployment is not None or not args.by:
        say_error(
            "dims history: give --by KEYS (e.g. --by label:team); "
            "`dims history DEPLOYMENT` is not in this build"
        )
        return int(Exit.USAGE)
    from .._reports import cost_history, group_cost_changes

    history = cost_history(
        args.out, args.by, prices_of(args), from_date=args.from_date, to_date=args.to_date
    )
    changes = group_cost_changes(history)
    days = sorted(str(d) for d in history["day"].unique())
    if args.json:
        say(
            json.dumps(
                {
                    "by": args.by,
                    "measure": HEADLINE,
                    "days": days,
                    "changes": [_plain(row) for row in changes.to_dict(orient="records")],
                },
                indent=2,
                default=str,
            )
        )
        return 0
    say(
        f"Monthly cost by {'; '.join(args.by)} ({HEADLINE}), {len(days):,} snapshot(s)"
        + (f" {days[0]} … {days[-1]}" if days else "")
    )
    if not len(changes):
        say("  no group's cost changed")
        return 0
    for _, rows in changes.groupby(["day", "grouping"], sort=True):
        first = rows.iloc[0]
        say(f"  {first['day']} (since {first['previous_day']}), by {first['grouping']}:")
        for row in rows.head(_SHOWN).to_dict(orient="records"):
            moved = f"{_usd(row['before'])} → {_usd(row['after'])}"
            count = f"{row['deployments_before']:,} → {row['deployments_after']:,} deployments"
            say(f"    {printable(row['group'])}: {moved} ({_signed(row['change'])}; {count})")
        if len(rows) > _SHOWN:
            say(f"    … and {len(rows) - _SHOWN:,} more (--json for all)")
    return 0


def _plain(row: Mapping[Hashable, Any]) -> dict[str, Any]:
    """A row as JSON holds it: a missing figure (unpriced) as null, never NaN or $0."""
    plain = {str(k): v.item() if hasattr(v, "item") else v for k, v in row.items()}
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in plain.items()}


def _usd(value: float) -> str:
    return "unpriced" if math.isnan(value) else f"${value:,.2f}"


def _signed(value: float) -> str:
    return "unknown" if math.isnan(value) else f"{'+' if value >= 0 else '-'}${abs(value):,.2f}"
