"""The rules about the fleet's shape: versions behind, the share on the newest version,
unbounded limits, inverted scales, production at the development defaults.

Each reads the report's own frames (`deployments_behind`, `newest_share_total`,
`cost_by_deployment`'s flags, `rightsizing`'s signals), so a rule fails exactly where the
report shows the problem, and names the deployments behind it.
"""

from __future__ import annotations

import pandas as pd

from dims._policy._groups import costs
from dims._policy._money import ids_and_names, result
from dims._policy._results import Notice, RuleResult, Violation
from dims._reports import (
    PriceSheet,
    Snapshot,
    deployments_behind,
    newest_share_total,
    rightsizing,
)

#: The rightsizing signal of a production deployment still at the development defaults.
PROD_AT_DEV_DEFAULTS = "prod_at_dev_defaults"


def _behind(snap: Snapshot) -> pd.DataFrame:
    return snap.memo("policy behind", deployments_behind)


def _unparseable(rule: str, behind: pd.DataFrame, counted: str) -> list[Notice]:
    """A notice of the deployments whose version does not parse (never "behind"), and how
    the rule `counted` them."""
    odd = behind[behind["versions_behind"].isna()]
    if odd.empty:
        return []
    shown = sorted({str(v) if pd.notna(v) else "none" for v in odd["image_version"]})
    message = (
        f"{len(odd):,} deployments run a version that does not parse ({', '.join(shown[:5])}): "
        f"{counted}"
    )
    return [Notice(rule, "fleet", message, **ids_and_names(odd))]


def versions_behind(snap: Snapshot, limit: int) -> RuleResult:
    """No deployment more than `limit` versions behind the newest (furthest first)."""
    rule = "max_versions_behind"
    behind = _behind(snap)
    over = behind[(behind["versions_behind"] > limit).fillna(False).astype(bool)]
    found: list[Violation | Notice] = [*_unparseable(rule, behind, "not checked")]
    if not over.empty:
        worst = float(over["versions_behind"].max())
        found.append(Violation(rule, "fleet", worst, limit, "versions", **ids_and_names(over)))
    return result(rule, int(behind["versions_behind"].notna().sum()), found)


def share_on_newest(snap: Snapshot, limit: float) -> RuleResult:
    """At least `limit` of the fleet on its newest version; behind it, those not on it."""
    rule = "min_share_on_newest"
    share = newest_share_total(snap)
    behind = _behind(snap)
    found: list[Violation | Notice] = [*_unparseable(rule, behind, "counted as not on it")]
    if share["share_on_newest"] < limit:
        off = behind[~(behind["versions_behind"] == 0).fillna(False).astype(bool)]
        newest = share["newest_version"] or "none"
        found.append(
            Violation(
                rule,
                "fleet",
                float(share["share_on_newest"]),
                limit,
                "share",
                "<",
                note=f"newest {newest}",
                **ids_and_names(off),
            )
        )
    return result(rule, share["deployments"], found)


def unbounded_limits(
    snap: Snapshot, types: tuple[str, ...], prices: PriceSheet, missing: list[str], source: str
) -> RuleResult:
    """No deployment of `types` with unbounded limits; an unpriced one is a notice (its
    limits are not known), a type no deployment has a warning."""
    rule = "no_unbounded_limits"
    every = costs(snap, prices)
    found: list[Violation | Notice] = []
    checked = 0
    for kind in types:
        rows = every[every["deployment_type"] == kind]
        if rows.empty:
            missing.append(f"{source}: {rule}: no deployment has type {kind!r}; nothing to check")
            continue
        checked += len(rows)
        bad = rows[rows["limits_unbounded"].astype(bool)]
        if not bad.empty:
            found.append(
                Violation(rule, f"type={kind}", len(bad), 0, "deployments", **ids_and_names(bad))
            )
        unknown = rows[rows["unpriced_reason"].notna() & ~rows["limits_unbounded"].astype(bool)]
        if not unknown.empty:
            message = f"{len(unknown):,} unpriced deployments: their limits are not known"
            found.append(Notice(rule, f"type={kind}", message, **ids_and_names(unknown)))
    return result(rule, checked, found)


def inverted_scales(snap: Snapshot, prices: PriceSheet) -> RuleResult:
    """No deployment whose max_scale is below its min_scale."""
    rule = "no_inverted_scales"
    every = costs(snap, prices)
    bad = every[every["scale_inverted"].astype(bool)]
    found: list[Violation | Notice] = []
    if not bad.empty:
        found.append(Violation(rule, "fleet", len(bad), 0, "deployments", **ids_and_names(bad)))
    return result(rule, len(every), found)


def prod_at_dev_defaults(snap: Snapshot, prices: PriceSheet) -> RuleResult:
    """No production deployment still at the development defaults (the report's signal)."""
    rule = "no_prod_at_dev_defaults"
    signals = rightsizing(snap, prices)
    bad = signals[signals["signal"] == PROD_AT_DEV_DEFAULTS].sort_values(["name", "deployment_id"])
    found: list[Violation | Notice] = []
    if not bad.empty:
        found.append(Violation(rule, "type=prod", len(bad), 0, "deployments", **ids_and_names(bad)))
    checked = int((costs(snap, prices)["deployment_type"] == "prod").sum())
    return result(rule, checked, found)
