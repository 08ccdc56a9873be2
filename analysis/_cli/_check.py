"""`dims check`: a snapshot held to a rules file, for CI: exit 0 when every rule holds, 1 when
any fails (each violation one line), 2 when the rules file cannot be used (one line naming
the key). The rules and their figures are `dims._policy`'s; this module only shows them:
as lines, as JSON, or as a pull-request comment (`--format markdown|github|gitlab`).
"""

from __future__ import annotations

import argparse
import json

from ._exits import Exit
from ._options import add_out, add_prices, date, named_path, prices_of
from ._output import say, say_error

FORMATS = ("text", "json", "markdown", "github", "gitlab")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules",
        type=named_path,
        required=True,
        metavar="FILE",
        help="the rules, YAML or TOML (by the suffix .toml): budgets, versions behind, share "
        "on the newest, unbounded limits, inverted scales, prod at dev defaults, drift "
        "(docs/check.md)",
    )
    add_out(parser)
    parser.add_argument("--date", type=date, help="snapshot date checked (default: the latest)")
    parser.add_argument(
        "--against",
        type=date,
        metavar="DATE",
        help="the snapshot the drift rule compares with (default: the rules' drift.against, "
        "else the snapshot before --date)",
    )
    add_prices(parser, "for the money rules")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (default): one line per violation; json: every rule and every deployment "
        "id; markdown, github, gitlab: a pull-request comment body (summary, violations, the "
        "cost by group against --against, details collapsed; github and gitlab begin with the "
        "marker <!-- dims-check --> to update the comment in place)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="the same as --format json",
    )
    parser.add_argument(
        "--skip-unchanged",
        action="store_true",
        help="write nothing and exit 0 when nothing changed against the base snapshot "
        "(--against, else the rules' drift.against, else the snapshot before): no deployment "
        "added, removed, moved or resized, and every group's cost the same",
    )


def _format(args: argparse.Namespace) -> str:
    """The output format: `--format`, `--json` (the same as `--format json`), else text."""
    from .._errors import RulesError

    if args.json and args.format not in (None, "json"):
        raise RulesError(f"--json and --format {args.format}: give one of them")
    return "json" if args.json else args.format or "text"


def run(args: argparse.Namespace) -> int:
    from .._errors import RulesError
    from .._policy import HOSTS, base_snapshot, check, comment, cost_changes, load_rules, unchanged
    from .._reports import diff, load_snapshot

    try:
        shape = _format(args)
        rules = load_rules(args.rules)
        if args.against is not None and rules.drift is None and shape not in HOSTS:
            raise RulesError(f"{args.rules}: --against needs a drift rule in the rules file")
    except RulesError as exc:
        if args.debug:
            raise
        say_error(f"dims check: error: {exc}")
        return Exit.USAGE
    prices = prices_of(args)
    now = load_snapshot(args.out, args.date)
    against = args.against if rules.drift is not None else None
    result = check(now, rules, prices=prices, against=against)
    changes, base = None, None
    if shape in HOSTS or args.skip_unchanged:
        base = base_snapshot(now, rules, args.against)
        changes = None if base is None else cost_changes(now, base, rules, prices)
        if args.skip_unchanged and base is not None and changes is not None:
            found = diff(args.out, base.snapshot_date, now.snapshot_date, prices=prices)
            if unchanged(changes, found.counts(), not found.capacity_changes.empty):
                return 0
    if shape == "json":
        say(json.dumps(result.to_dict(), indent=2))
    elif shape in HOSTS:
        say(comment(result, changes, base.snapshot_date if base else None, shape))
    else:
        say("\n".join(result.lines()))
    return Exit.DONE if result.passed else Exit.FAILED
