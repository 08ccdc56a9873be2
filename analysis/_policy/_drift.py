"""Drift: no group's cost may grow more than a share or an amount between two snapshots.

A scheduled job runs `dims check --against D` (or the rules name the day) and fails when a
type, namespace, workspace or team grew beyond the limit since then. Each key of `drift.by`
is compared value by value (the groups of the checked snapshot; one that is gone shrank); a
group new since then grew by all it costs, an infinite share. The deployments behind a
violation are those of the group that grew, most growth first.
"""

from __future__ import annotations

from dataclasses import dataclass

from dims._policy._groups import Figure, figure_of
from dims._policy._money import above, growth, ids_and_names, result
from dims._policy._results import Notice, RuleResult, Violation
from dims._policy._rules import Drift, Group, Rules
from dims._reports import PriceSheet, Snapshot, allocated, allocation_keys

PERCENT = "drift.max_increase_percent"
USD = "drift.max_increase_usd"


@dataclass(frozen=True)
class _Pair:
    """One group's figures now and then (None then: the group is new)."""

    group: Group
    now: Figure
    then: Figure | None

    @property
    def increase(self) -> float | None:
        if self.now.value is None:
            return None
        before = self.then.value if self.then is not None else None
        return self.now.value - (before or 0.0)

    def left_out(self, limits: bool, then_date: str) -> str:
        parts = [self.now.left_out_text(limits)]
        if self.then is not None and self.then.left_out_text(limits):
            parts.append(f"on {then_date}: {self.then.left_out_text(limits)}")
        return "; ".join(p for p in parts if p)


def _groups(now: Snapshot, key: str) -> list[Group]:
    """Every value of `key` (as written: `type`, `label:team`) in `now`, as a group."""
    (column,) = allocation_keys(key)
    values = sorted(set(allocated(now, [column])[column]))
    return [Group(f"{key}={value}", (column,), (value,)) for value in values]


def _figure(pair: _Pair, rule: str) -> tuple[float | None, bool, str]:
    """(figure, over the limit?, note) of one rule on one pair, before the limit."""
    increase = pair.increase
    if rule == USD:
        return increase, False, ""
    before = pair.then.value if pair.then is not None else None
    if increase is None or not before:  # nothing to grow from: any growth is infinite
        return None, bool(increase and increase > 0), "no cost before to grow from"
    return 100 * increase / before, False, ""


def _outcome(pair: _Pair, rule: str, limit: float, context: _Context) -> Violation | Notice | None:
    figure, infinite, note = _figure(pair, rule)
    over = infinite or (figure is not None and above(figure, limit))
    limits = context.rules.basis == "limits"
    left = pair.left_out(limits, context.then.snapshot_date)
    unit = "percent" if rule == PERCENT else "usd_month_increase"
    if over:
        note = "; ".join(p for p in (note, f"not in the figures: {left}" if left else "") if p)
        grown = growth(
            context.now, context.then, pair.group, context.prices, context.rules.cost_column
        )
        return Violation(
            rule, pair.group.text, figure, limit, unit, note=note, **ids_and_names(grown)
        )
    if not left:
        return None
    ids = ids_and_names(pair.now.left_out)
    if context.rules.unknown_costs == "fail":
        note = f"not in the figures: {left}, so the growth may be larger"
        return Violation(rule, pair.group.text, figure, limit, unit, "may exceed", note=note, **ids)
    return Notice(
        rule,
        pair.group.text,
        f"within the limit on what is known; not in the figures: {left}",
        **ids,
    )


@dataclass(frozen=True)
class _Context:
    now: Snapshot
    then: Snapshot
    rules: Rules
    prices: PriceSheet


def drift(now: Snapshot, then: Snapshot, rules: Rules, prices: PriceSheet) -> list[RuleResult]:
    """The drift rules of `rules` (one result per limit given), `now` against `then`."""
    spec = rules.drift if rules.drift is not None else Drift()
    limits = [(PERCENT, spec.max_increase_percent), (USD, spec.max_increase_usd)]
    given = [(rule, limit) for rule, limit in limits if limit is not None]
    context = _Context(now, then, rules, prices)
    pairs = [
        _Pair(group, figure, figure_of(then, group, rules, prices))
        for key in spec.by
        for group in _groups(now, key)
        if (figure := figure_of(now, group, rules, prices)) is not None
    ]
    return [
        result(rule, len(pairs), [o for p in pairs if (o := _outcome(p, rule, limit, context))])
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
