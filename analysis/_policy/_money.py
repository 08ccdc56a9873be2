"""The rules with money in them: budgets per group, and drift against another snapshot.

A budget fails on what it can show: the known figure above the limit. A figure that leaves
deployments out (unpriced ones; on the limits basis, those with unbounded limits) is lower
than the truth, so it never passes silently: above the limit it fails and says it is a lower
bound; within it, `unknown_costs: notice` (the default) holds it with a notice naming them and
what each needs to be priced, and `unknown_costs: fail` fails it as "may exceed". The default is
the notice because a gate that fails on every run while nothing changed is switched off (the
way Infracost lists what it cannot price and fails on what it can).
"""

from __future__ import annotations

import difflib
from typing import TypedDict

import pandas as pd

from dims._policy._groups import Figure, figure_of, members_of
from dims._policy._results import Notice, RuleResult, Violation
from dims._policy._rules import Group, Rules
from dims._reports import PriceSheet, Snapshot, allocated


class Behind(TypedDict):
    """The deployments behind a Violation or Notice (its keyword arguments)."""

    deployment_ids: tuple[str, ...]
    names: tuple[str, ...]


def ids_and_names(frame: pd.DataFrame) -> Behind:
    """`deployment_ids` and `names` of a Violation or Notice, in the frame's order."""
    names = frame["name"].astype("object").where(frame["name"].notna(), "")
    return {
        "deployment_ids": tuple(str(v) for v in frame["deployment_id"]),
        "names": tuple(str(v) for v in names),
    }


#: What a deployment left out of a figure needs to be priced, by why it is left out
#: (`reports`' `unpriced_reason`, and unbounded limits on the limits basis).
NEEDS = {
    "resource_spec_absent": "a resource_spec with cpu and memory_mb",
    "missing_resources": "a cpu and memory_mb request on each component that asks for compute",
    "unreadable_quantity": "resource figures a cluster runs",
    "limits_unbounded": "a cpu and memory limit on every container",
}


def needs(left_out: pd.DataFrame) -> str:
    """`to be priced: 14 need a resource_spec with cpu and memory_mb; 1 needs …` of the
    deployments a figure leaves out (`cost_by_deployment` rows), most common need first."""
    reason = left_out["unpriced_reason"].astype("object")
    why = reason.where(reason.notna(), "limits_unbounded")
    counts = why.value_counts()
    ordered = sorted(counts.items(), key=lambda item: (-int(item[1]), str(item[0])))
    parts = [f"{int(n):,} need{'s' * (int(n) == 1)} {NEEDS[str(k)]}" for k, n in ordered]
    return f"to be priced: {'; '.join(parts)}" if parts else ""


def _unknown_part(
    rule: str, group: str, figure: Figure, limit: float, rules: Rules, unit: str
) -> Violation | Notice:
    """A group within its limit on what is known, while its figure leaves deployments out."""
    left = figure.left_out_text(rules.basis == "limits")
    if rules.unknown_costs == "fail":
        note = f"{left} not in the figure, so the truth may be higher"
        return Violation(
            rule, group, figure.value, limit, unit, "may exceed", note=note,
            **ids_and_names(figure.left_out),
        )  # fmt: skip
    message = (
        f"within the limit on what is known, but {left} not in the figure; {needs(figure.left_out)}"
    )
    return Notice(rule, group, message, **ids_and_names(figure.left_out))


def above(figure: float, limit: float) -> bool:
    """Is `figure` above `limit`, both to the cent? What a result prints (`$1,234.57 > limit
    $1,234.56`) is what was judged: a cost equal to its limit holds, however many digits
    either was given with, and no failure reads `$X > limit $X`."""
    return round(figure, 2) > round(limit, 2)


def budget(
    snap: Snapshot, group: Group, limit: float, rules: Rules, prices: PriceSheet
) -> Violation | Notice | None:
    """One budget: None where it holds (or the group has no deployment: see `missing`)."""
    figure = figure_of(snap, group, rules, prices)
    if figure is None:
        return None
    if figure.value is not None and above(figure.value, limit):
        left = figure.left_out_text(rules.basis == "limits")
        note = f"at least: {left} not in the figure" if left else ""
        ranked = figure.members[figure.members[rules.cost_column].notna()]
        return Violation(
            "budgets", group.text, figure.value, limit, "usd_month", note=note,
            **ids_and_names(ranked),
        )  # fmt: skip
    if figure.left_out.empty:
        return None
    return _unknown_part("budgets", group.text, figure, limit, rules, "usd_month")


def budgets(snap: Snapshot, rules: Rules, prices: PriceSheet, missing: list[str]) -> RuleResult:
    """Every budget of the rules; a group with no deployment goes to `missing` (a warning)."""
    found: list[Violation | Notice] = []
    checked = 0
    for group, limit in rules.budgets:
        if members_of(snap, group, prices).empty:
            missing.append(
                f"{rules.source}: budgets.{group.text}: no deployment of the snapshot of "
                f"{snap.snapshot_date} is in this group; its budget checks nothing"
                f"{near_values(snap, group)}"
            )
            continue
        checked += 1
        outcome = budget(snap, group, limit, rules, prices)
        if outcome is not None:
            found.append(outcome)
    return result("budgets", checked, found)


def near_values(snap: Snapshot, group: Group) -> str:
    """`; did you mean payments?` for a group of one key whose value is a typo of one the
    snapshot has ("" when none is near)."""
    if len(group.keys) != 1:
        return ""
    present = set(allocated(snap, list(group.keys))[group.keys[0]])
    near = difflib.get_close_matches(group.values[0], sorted(present), n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else ""


def result(rule: str, checked: int, found: list[Violation | Notice]) -> RuleResult:
    violations = tuple(v for v in found if isinstance(v, Violation))
    notices = tuple(n for n in found if isinstance(n, Notice))
    return RuleResult(rule, "fail" if violations else "pass", checked, violations, notices)
