"""Policy: a snapshot held to rules, for CI (`dims check`).

A rules file (YAML or TOML) says what the fleet must hold to: budgets per group, versions
behind, the share on the newest version, no unbounded limits in production, no inverted
scales, no production at the development defaults, and no more than so much drift since an
earlier snapshot. `check` evaluates each on the report's own figures (`dims._reports`)
and returns typed results that the command line prints and `--json` carries:

    rules = load_rules("rules.yaml")
    result = check(load_snapshot("dims-data"), rules)
    result.passed, result.violations

A gate fails on what it can show: a budget on its known figure, drift on the deployments
priced in both snapshots. Money is never silently lower than the truth: a group whose figure
leaves deployments out (unpriced, or unbounded on the limits basis) says so in a notice naming
them and what they need, and fails under `unknown_costs: fail`. docs/check.md holds the schema
and an example file.

Inside: `_file` (the file read as hostile input), `_rules` (the schema), `_groups` (a group's
figure and deployments), `_money` (budgets), `_drift`, `_fleet` (the other rules),
`_results` (what was found), `_check` (all of it, in order) and `_comment` (the result as a
pull-request comment, with the cost change by group against the base snapshot).
"""

from dims._policy._check import base_snapshot, check
from dims._policy._comment import (
    HOSTS,
    LIMITS,
    MARKER,
    GroupCost,
    comment,
    cost_changes,
    unchanged,
)
from dims._policy._money import NEEDS
from dims._policy._results import CheckResult, Notice, RuleResult, Violation
from dims._policy._rules import Drift, Group, Rules, load_rules, parse_group, parse_rules

__all__ = [
    "HOSTS",
    "LIMITS",
    "MARKER",
    "NEEDS",
    "CheckResult",
    "Drift",
    "Group",
    "GroupCost",
    "Notice",
    "RuleResult",
    "Rules",
    "Violation",
    "base_snapshot",
    "check",
    "comment",
    "cost_changes",
    "load_rules",
    "parse_group",
    "parse_rules",
    "unchanged",
]
