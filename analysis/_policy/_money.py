"""The rules with money in them: budgets per group, and drift against another snapshot.

A figure that leaves deployments out (unpriced ones; on the limits basis, those with
unbounded limits) is lower than the truth, so it never passes silently: above the limit it
fails and says it is a lower bound; within it, `unknown_costs: fail` (the default) fails it as
"may exceed", and `unknown_costs: notice` lets it pass with a notice naming them.
"""

from __future__ import annotations

import difflib
from typing import TypedDict

import pandas as pd

from dims._policy._groups import Figure, costs, figure_of, members_of
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
    message = f"within the limit on what is known, but {left} not in the figure"
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


def growth(
    now: Snapshot, then: Snapshot, group: Group, prices: PriceSheet, column: str
) -> pd.DataFrame:
    """The group's deployments (in `now`) whose cost grew since `then`, most growth first,
    with `growth_usd_month` (a deployment new since `then` grew by all it costs)."""
    members = members_of(now, group, prices)[["deployment_id", "name", column]]
    before = costs(then, prices)[["deployment_id", column]].rename(columns={column: "before"})
    merged = members.merge(before, on="deployment_id", how="left")
    merged["growth_usd_month"] = merged[column] - merged["before"].fillna(0.0)
    grown = merged[merged["growth_usd_month"] > 0]
    return grown.sort_values(["growth_usd_month", "deployment_id"], ascending=[False, True])
