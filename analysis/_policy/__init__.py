"""Policy: a snapshot held to rules, for CI (`dims check`).

A rules file (YAML or TOML) says what the fleet must hold to: budgets per group, versions
behind, the share on the newest version, no unbounded limits in production, no inverted
scales, no production at the development defaults, and no more than so much drift since an
earlier snapshot. `check` evaluates each on the report's own figures (`dims._reports`)
and returns typed results that the command line prints and `--json` carries:

    rules = load_rules("rules.yaml")
    result = check(load_snapshot("dims-data"), rules)
    result.passed, result.violations

Money is never silently lower than the truth: a group whose figure leaves deployments out
(unpriced, or unbounded on the limits basis) says so, and fails unless the rules say
`unknown_costs: notice`. docs/check.md holds the schema and an example file.

Inside: `_file` (the file read as hostile input), `_rules` (the schema), `_groups` (a group's
figure and deployments), `_money` (budgets), `_drift`, `_fleet` (the other rules),
`_results` (what was found) and `_check` (all of it, in order).
"""

from dims._policy._check import check
from dims._policy._results import CheckResult, Notice, RuleResult, Violation
from dims._policy._rules import Drift, Group, Rules, load_rules, parse_group, parse_rules

__all__ = [
    "CheckResult",
    "Drift",
    "Group",
    "Notice",
    "RuleResult",
    "Rules",
    "Violation",
    "check",
    "load_rules",
    "parse_group",
    "parse_rules",
]
