"""Drift: no group's cost may grow more than a share or an amount between two snapshots.

A scheduled job runs `dims check --against D` (or the rules name the day) and fails when a
type, namespace, workspace or team grew beyond the limit since then. Each key of `drift.by`
is compared value by value (the groups of the checked snapshot; one that is gone shrank); a
group new since then grew by all it costs, an infinite share. The deployments behind a
violation are those of the group that grew, most growth first.

Drift compares like with like: a deployment counts on both sides only where its cost is known
on each side it is on (priced in both snapshots, or priced and only in one: added or removed).
One whose cost is known on one side only (it became unpriced, or priced) cannot say how it
moved, so it is reported apart, as newly unpriced or newly priced, and never makes the growth:
a fleet where nothing changed never fails, whatever it leaves unpriced. Under
`unknown_costs: fail` such a deployment fails its group as "may exceed".
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dims._policy._groups import costs, members_of
from dims._policy._money import above, ids_and_names, needs, result
from dims._policy._results import Notice, RuleResult, Violation
from dims._policy._rules import Drift, Group, Rules
from dims._reports import PriceSheet, Snapshot, allocated, allocation_keys

PERCENT = "drift.max_increase_percent"
USD = "drift.max_increase_usd"


@dataclass(frozen=True)
class _Context:
    now: Snapshot
    then: Snapshot
    rules: Rules
    prices: PriceSheet

    def unknown(self, snap: Snapshot) -> set[str]:
        """The deployments of `snap` whose cost on the rules' basis is not known."""
        every = costs(snap, self.prices)
        return set(every.loc[every[self.rules.cost_column].isna(), "deployment_id"])


@dataclass(frozen=True)
class _Pair:
    """One group's comparable figures now and then (then None: the group is new), the
    deployments behind the growth, and those reported apart."""

    group: Group
    now: float
    then: float | None
    #: comparable deployments of the group now, with `growth_usd_month`, most growth first
    grown: pd.DataFrame
    #: the group's deployments whose cost is known on one side only (`cost_by_deployment`)
    apart: pd.DataFrame
    newly_unpriced: int

    @property
    def increase(self) -> float:
        return self.now - (self.then or 0.0)

    def apart_text(self) -> str:
        """`2 deployments newly unpriced and 1 newly priced, not compared` ("" when none)."""
        unpriced, priced = self.newly_unpriced, len(self.apart) - self.newly_unpriced
        parts = [f"{_count(unpriced)} newly unpriced"] if unpriced else []
        if priced:
            parts.append(f"{_count(priced) if not parts else f'{priced:,}'} newly priced")
        return f"{' and '.join(parts)}, not compared" if parts else ""


def _count(deployments: int) -> str:
    return f"{deployments:,} deployment{'s' * (deployments != 1)}"


def _pair(group: Group, context: _Context) -> _Pair | None:
    """The group's comparable figures, or None when no deployment is in it now."""
    column = context.rules.cost_column
    members = members_of(context.now, group, context.prices)
    if members.empty:
        return None
    before = members_of(context.then, group, context.prices)
    # known on each side it is on: a deployment absent from the other side counts as known there
    known_then = ~members["deployment_id"].isin(context.unknown(context.then))
    known_now = ~before["deployment_id"].isin(context.unknown(context.now))
    mine = members[column].notna() & known_then
    theirs = before[column].notna() & known_now
    apart = members[members[column].notna() != known_then]
    newly_unpriced = int(apart[column].isna().sum())
    comparable = members[mine][["deployment_id", "name", column]]
    kept = before[theirs]
    then_costs = dict(zip(kept["deployment_id"], kept[column], strict=True))
    was = [float(then_costs.get(i, 0.0)) for i in comparable["deployment_id"]]
    grown = comparable.assign(growth_usd_month=comparable[column].to_numpy(dtype=float) - was)
    grown = grown[grown["growth_usd_month"] > 0].sort_values(
        ["growth_usd_month", "deployment_id"], ascending=[False, True]
    )
    then = float(before.loc[theirs, column].sum()) if not before.empty else None
    now = float(members.loc[mine, column].sum())
    return _Pair(group, now, then, grown, apart, newly_unpriced)


def _groups(now: Snapshot, key: str) -> list[Group]:
    """Every value of `key` (as written: `type`, `label:team`) in `now`, as a group."""
    (column,) = allocation_keys(key)
    values = sorted(set(allocated(now, [column])[column]))
    return [Group(f"{key}={value}", (column,), (value,)) for value in values]


def _figure(pair: _Pair, rule: str) -> tuple[float | None, bool, str]:
    """(figure, over the limit whatever it is?, note) of one rule on one pair."""
    if rule == USD:
        return pair.increase, False, ""
    if not pair.then:  # nothing to grow from: any growth is infinite
        return None, pair.increase > 0, "no cost before to grow from"
    return 100 * pair.increase / pair.then, False, ""


def _outcomes(pair: _Pair, rule: str, limit: float, context: _Context) -> list[Violation | Notice]:
    """A violation where the comparable growth is over the limit; and, apart from it, the
    deployments not compared: a notice, or under `unknown_costs: fail`, where the growth is
    within the limit, a "may exceed" violation."""
    figure, infinite, note = _figure(pair, rule)
    over = infinite or (figure is not None and above(figure, limit))
    unit = "percent" if rule == PERCENT else "usd_month_increase"
    apart = pair.apart_text()
    found: list[Violation | Notice] = []
    if over:
        note = "; ".join(p for p in (note, apart) if p)
        grown = ids_and_names(pair.grown)
        found.append(Violation(rule, pair.group.text, figure, limit, unit, note=note, **grown))
    if pair.apart.empty:
        return found
    need = needs(pair.apart[pair.apart[context.rules.cost_column].isna()])
    told = "; ".join(p for p in (apart, need) if p)
    ids = ids_and_names(pair.apart)
    if context.rules.unknown_costs == "fail" and not over:
        note = f"{told}, so the growth may be larger"
        found.append(
            Violation(rule, pair.group.text, figure, limit, unit, "may exceed", note=note, **ids)
        )
    else:
        within = "over" if over else "within"
        message = f"{within} the limit on the deployments priced in both snapshots; {told}"
        found.append(Notice(rule, pair.group.text, message, **ids))
    return found


def drift(now: Snapshot, then: Snapshot, rules: Rules, prices: PriceSheet) -> list[RuleResult]:
    """The drift rules of `rules` (one result per limit given), `now` against `then`."""
    spec = rules.drift if rules.drift is not None else Drift()
    limits = [(PERCENT, spec.max_increase_percent), (USD, spec.max_increase_usd)]
    given = [(rule, limit) for rule, limit in limits if limit is not None]
    context = _Context(now, then, rules, prices)
    pairs = [
        pair
        for key in spec.by
        for group in _groups(now, key)
        if (pair := _pair(group, context)) is not None
    ]
    return [
        result(rule, len(pairs), [o for p in pairs for o in _outcomes(p, rule, limit, context)])
        for rule, limit in given
    ]


def skipped(rules: Rules, message: str) -> list[RuleResult]:
    """The drift rules, not checked (no snapshot to compare with), each with a notice."""
    spec = rules.drift if rules.drift is not None else Drift()
    given = [
        r
        for r, v in ((PERCENT, spec.max_increase_percent), (USD, spec.max_increase_usd))
        if v is not None
    ]
    return [
        RuleResult(rule, "skipped", 0, notices=(Notice(rule, "fleet", message),)) for rule in given
    ]
