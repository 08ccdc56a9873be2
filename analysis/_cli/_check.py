"""`dims check`: a snapshot held to a rules file, for CI: exit 0 when every rule holds, 1 when
any fails (each violation one line), 2 when the rules file cannot be used (one line naming
the key). The rules and their figures are `dims._policy`'s; this module only shows them.
"""

from __future__ import annotations

import argparse
import json

from ._options import add_out, add_prices, date, named_path, prices_of
from ._output import say, say_error

EXIT_FAILED = 1
EXIT_BAD_RULES = 2


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
        "--json",
        action="store_true",
        help="print every rule, pass or fail, and each violation with all its deployment ids",
    )


def run(args: argparse.Namespace) -> int:
    from .._errors import RulesError
    from .._policy import check, load_rules
    from .._reports import load_snapshot

    try:
        rules = load_rules(args.rules)
        if args.against is not None and rules.drift is None:
            raise RulesError(f"{args.rules}: --against needs a drift rule in the rules file")
    except RulesError as exc:
        if args.debug:
            raise
        say_error(f"dims check: error: {exc}")
        return EXIT_BAD_RULES
    prices = prices_of(args)
    result = check(load_snapshot(args.out, args.date), rules, prices=prices, against=args.against)
    if args.json:
        say(json.dumps(result.to_dict(), indent=2))
    else:
        say("\n".join(result.lines()))
    return 0 if result.passed else EXIT_FAILED
