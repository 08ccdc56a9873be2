"""`check`: a snapshot held to its rules, every rule the file gives, one result each."""

from __future__ import annotations

import datetime as dt
import warnings
from pathlib import Path

from dims._errors import RulesError, UnknownGroupWarning
from dims._policy import _fleet as fleet
from dims._policy._drift import drift, skipped
from dims._policy._money import budgets
from dims._policy._results import CheckResult, RuleResult
from dims._policy._rules import Rules
from dims._reports import DEFAULT_PRICES, PriceSheet, Snapshot, load_snapshot, snapshot_days


def _shape_rules(
    snap: Snapshot, rules: Rules, prices: PriceSheet, missing: list[str]
) -> list[RuleResult]:
    """The rules that need one snapshot, in the order the schema lists them."""
    out = []
    if rules.budgets:
        out.append(budgets(snap, rules, prices, missing))
    if rules.max_versions_behind is not None:
        out.append(fleet.versions_behind(snap, rules.max_versions_behind))
    if rules.min_share_on_newest is not None:
        out.append(fleet.share_on_newest(snap, rules.min_share_on_newest))
    if rules.no_unbounded_limits:
        out.append(
            fleet.unbounded_limits(snap, rules.no_unbounded_limits, prices, missing, rules.source)
        )
    if rules.no_inverted_scales:
        out.append(fleet.inverted_scales(snap, prices))
    if rules.no_prod_at_dev_defaults:
        out.append(fleet.prod_at_dev_defaults(snap, prices))
    return out


def _earlier(snap: Snapshot) -> str | None:
    """The latest snapshot day before `snap`'s, or None."""
    days = [day for day in snapshot_days(snap.out_dir) if day < snap.snapshot_date]
    return days[-1] if days else None


def base_snapshot(
    snap: Snapshot, rules: Rules, against: Snapshot | str | dt.date | None = None
) -> Snapshot | None:
    """The snapshot drift (and a comment's cost change) compares with: `against`, else the
    rules' `drift.against`, else the one before `snap`'s day (None when there is none)."""
    if isinstance(against, Snapshot):
        return against
    day = against if against is not None else rules.drift.against if rules.drift else None
    day = day if day is not None else _earlier(snap)
    return None if day is None else load_snapshot(snap.out_dir, day)


def check(
    source: Snapshot | str | Path,
    rules: Rules,
    *,
    prices: PriceSheet = DEFAULT_PRICES,
    against: Snapshot | str | dt.date | None = None,
) -> CheckResult:
    """Hold a snapshot (or a dataset's latest) to `rules` under `prices`.

    `against` is the snapshot (or its date) the drift rules compare with; default: the
    rules' `drift.against`, else the snapshot before. A group no deployment is in warns
    (`UnknownGroupWarning`, also in the result's `warnings`) and checks nothing. Raises
    `RulesError` for `against` given to rules without a drift rule.
    """
    if against is not None and rules.drift is None:
        raise RulesError(f"{rules.source}: drift: comparing against a snapshot needs a drift rule")
    snap = source if isinstance(source, Snapshot) else load_snapshot(source)
    missing: list[str] = []
    results = _shape_rules(snap, rules, prices, missing)
    then = base_snapshot(snap, rules, against) if rules.drift is not None else None
    if rules.drift is not None and then is None:
        results += skipped(rules, f"no snapshot before {snap.snapshot_date} to compare with")
    elif then is not None:
        results += drift(snap, then, rules, prices)
    for message in missing:
        warnings.warn(UnknownGroupWarning(message), stacklevel=2)
    return CheckResult(
        snapshot_date=snap.snapshot_date,
        against_date=then.snapshot_date if then is not None else None,
        basis=rules.describe_basis(),
        rules=tuple(results),
        warnings=tuple(missing),
    )
