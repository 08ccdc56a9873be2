"""What `dims check` found: typed results the command line prints and `--json` carries.

A `CheckResult` holds one `RuleResult` per rule the file gives; a rule that fails holds its
`Violation`s (the group, its figure, the limit and every deployment behind it), and any rule
may hold `Notice`s: what its figures leave out, said beside it, so that no figure passes
silently while it is lower than the truth.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dims._escape import printable

#: Deployments named on a line (the JSON names them all).
SHOWN = 3

#: How a figure of each unit reads on a line.
_FORMATS = {
    "usd_month": lambda v: f"${v:,.2f}",
    "usd_month_increase": lambda v: f"+${v:,.2f}",
    "share": lambda v: f"{100 * v:.1f} %",
    "percent": lambda v: f"+{v:,.1f} %",
    "versions": lambda v: f"{v:,.0f} versions behind",
    "deployments": lambda v: f"{v:,.0f} deployments",
}


def shown(value: float | None, unit: str) -> str:
    """A figure as a line shows it (`unknown` where nothing is known)."""
    if value is None:
        return "unknown"
    return _FORMATS[unit](value)


def _deployments(ids: tuple[str, ...], names: tuple[str, ...]) -> str:
    """`; N deployments: name (id), …` with the first few named and the rest counted."""
    if not ids:
        return ""
    pairs = zip(ids[:SHOWN], names[:SHOWN], strict=True)
    listed = ", ".join(
        f"{printable(name or '(no name)')} ({printable(did)})" for did, name in pairs
    )
    more = f" … and {len(ids) - SHOWN:,} more" if len(ids) > SHOWN else ""
    return f"; {len(ids):,} deployment{'s' * (len(ids) != 1)}: {listed}{more}"


@dataclass(frozen=True)
class Violation:
    """A group that breaks a rule: its figure, the limit (`op`: `>` the figure is above it,
    `<` below it) and the deployments behind it, most to blame first."""

    rule: str
    group: str
    figure: float | None
    limit: float
    unit: str
    op: str = ">"
    deployment_ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    note: str = ""

    def line(self) -> str:
        limit = shown(self.limit, self.unit)
        note = f" ({printable(self.note)})" if self.note else ""
        named = _deployments(self.deployment_ids, self.names)
        return (
            f"FAIL {printable(self.rule)} {printable(self.group)}: "
            f"{shown(self.figure, self.unit)} {self.op} "
            f"limit {limit}{note}{named}"
        )


@dataclass(frozen=True)
class Notice:
    """What a rule's figures leave out or could not check (not a failure by itself)."""

    rule: str
    group: str
    message: str
    deployment_ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def line(self) -> str:
        named = _deployments(self.deployment_ids, self.names)
        where = f"{printable(self.rule)} {printable(self.group)}"
        return f"note {where}: {printable(self.message)}{named}"


@dataclass(frozen=True)
class RuleResult:
    """One rule: `status` is `pass`, `fail` or `skipped` (nothing to check it on)."""

    rule: str
    status: str
    #: the groups (or deployments) the rule was checked on
    checked: int
    violations: tuple[Violation, ...] = ()
    notices: tuple[Notice, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status != "fail"


@dataclass(frozen=True)
class CheckResult:
    """Every rule checked on one snapshot (and, for drift, against another)."""

    snapshot_date: str
    against_date: str | None
    basis: str
    rules: tuple[RuleResult, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return all(rule.passed for rule in self.rules)

    @property
    def violations(self) -> list[Violation]:
        return [v for rule in self.rules for v in rule.violations]

    @property
    def notices(self) -> list[Notice]:
        return [n for rule in self.rules for n in rule.notices]

    def summary(self) -> str:
        failed = sum(not rule.passed for rule in self.rules)
        against = f" against {self.against_date}" if self.against_date else ""
        verdict = (
            "all hold" if self.passed else f"{failed} failed ({len(self.violations)} violations)"
        )
        return f"check {self.snapshot_date}{against}: {len(self.rules)} rules, {verdict}"

    def lines(self) -> list[str]:
        """The violations, then the notices, then the summary: one line each."""
        return [
            *(v.line() for v in self.violations),
            *(n.line() for n in self.notices),
            self.summary(),
        ]

    def to_dict(self) -> dict[str, Any]:
        """The same as data: JSON-ready, every deployment id listed."""
        return {
            "snapshot_date": self.snapshot_date,
            "against_date": self.against_date,
            "basis": self.basis,
            "passed": self.passed,
            "counts": {
                "rules": len(self.rules),
                "failed": sum(not rule.passed for rule in self.rules),
                "violations": len(self.violations),
                "notices": len(self.notices),
            },
            "rules": [{**asdict(rule), "passed": rule.passed} for rule in self.rules],
            "warnings": list(self.warnings),
        }
