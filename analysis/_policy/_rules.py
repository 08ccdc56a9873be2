"""The rules of `dims check`, as a file says them and as the checks read them (`Rules`).

The schema (docs/check.md shows a whole file; every key optional, at least one rule):

    basis: requests            # requests | limits: what money rules price (default requests)
    scale: max                 # min | max (default max)
    unknown_costs: notice      # notice | fail: a figure that leaves deployments out
    budgets:                   # monthly US dollars per group, at most
      fleet: 400000
      type=prod: 300000
      label:team=payments: 2000
    max_versions_behind: 3
    min_share_on_newest: 0.3
    no_unbounded_limits: [prod]
    no_inverted_scales: true
    no_prod_at_dev_defaults: true
    drift: {against: 2025-06-01, by: [type], max_increase_percent: 10, max_increase_usd: 500}

A group is `fleet`, or `<key>=<value>` with the keys of `dims report --by` (`type`,
`namespace`, `workspace`, `label:<key>`), several joined by commas
(`namespace=agents-prod,label:team=payments`). Anything else, an unknown key, a wrong type or
a negative number, is a `RulesError` naming the file and the key.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dims._errors import ReportError, RulesError
from dims._reports import COST_CEILING_USD, allocation_keys
from dims._smallfile import read_small_file

BASES = ("requests", "limits")
SCALES = ("min", "max")
UNKNOWN_COSTS = ("notice", "fail")
FLEET = "fleet"
#: The deployment types `no_unbounded_limits: true` means.
PRODUCTION = ("prod",)
DRIFT_KEYS = ("against", "by", "max_increase_percent", "max_increase_usd")
TOP_KEYS = (
    "basis",
    "scale",
    "unknown_costs",
    "budgets",
    "max_versions_behind",
    "min_share_on_newest",
    "no_unbounded_limits",
    "no_inverted_scales",
    "no_prod_at_dev_defaults",
    "drift",
)
#: The keys that are rules (the others say how rules with money in them price).
RULE_KEYS = TOP_KEYS[3:]


@dataclass(frozen=True)
class Group:
    """Deployments a rule names: the whole fleet, or those whose `keys` (columns as
    `reports.cost_by` names them: `deployment_type`, `label:team`, …) have `values`."""

    text: str
    keys: tuple[str, ...] = ()
    values: tuple[str, ...] = ()

    @property
    def is_fleet(self) -> bool:
        return not self.keys


@dataclass(frozen=True)
class Drift:
    """No group's cost may grow more than a share or an amount since the `against` day."""

    against: dt.date | None = None
    #: the allocation keys compared, as written (`type`, `label:team`)
    by: tuple[str, ...] = ("type",)
    max_increase_percent: float | None = None
    max_increase_usd: float | None = None


@dataclass(frozen=True)
class Rules:
    """What `dims check` holds a snapshot to; `parse_rules` or `load_rules` make one."""

    basis: str = "requests"
    scale: str = "max"
    #: what a money figure that leaves deployments out does within its limit: `notice` (the
    #: default) names them and what they need, and the rule holds on what is known; `fail`
    #: fails it as "may exceed". A gate that fails while nothing changed gets switched off.
    unknown_costs: str = "notice"
    budgets: tuple[tuple[Group, float], ...] = ()
    max_versions_behind: int | None = None
    min_share_on_newest: float | None = None
    no_unbounded_limits: tuple[str, ...] = ()
    no_inverted_scales: bool = False
    no_prod_at_dev_defaults: bool = False
    drift: Drift | None = None
    #: where the rules came from, for messages
    source: str = "rules"

    @property
    def cost_column(self) -> str:
        """The `reports` cost column the money rules read."""
        return f"cost_{self.basis[:-1]}_{self.scale}_scale_usd_month"

    def describe_basis(self) -> str:
        return f"{self.basis} at {self.scale} scale"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}…"


def _fail(where: str, key: str, problem: str) -> RulesError:
    return RulesError(f"{where}: {key}: {problem}")


def _number(
    where: str, key: str, value: object, what: str = "a number >= 0", highest: float = math.inf
) -> float:
    """`value` as a finite float from 0 to `highest`; anything else one line naming `key`
    (an int past a float's range compares without converting, so it is refused here too)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise _fail(where, key, f"expected {what}, got {_short(value)}")
    if not value <= min(highest, sys.float_info.max):
        top = f" up to {highest:.0e}" if math.isfinite(highest) else ", finite"
        raise _fail(where, key, f"expected {what}{top}, got {_short(value)}")
    return float(value)


def _dollars(where: str, key: str, value: object, what: str) -> float:
    """An amount of money a month: no figure the reports make passes `COST_CEILING_USD`, so a
    limit above it says nothing a smaller one would not (and prints as 300 digits)."""
    return _number(where, key, value, what, COST_CEILING_USD)


def _choice(where: str, key: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise _fail(where, key, f"expected one of {', '.join(choices)}, got {_short(value)}")
    return str(value)


def _flag(where: str, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, key, f"expected true or false, got {_short(value)}")
    return value


def _key(key: object) -> str:
    """A key for a message, unquoted and shortened (a file's key may be any length)."""
    text = str(key)
    return text if len(text) <= 40 else f"{text[:40]}…"


def _known_keys(where: str, data: Mapping[object, object], known: tuple[str, ...], at: str) -> None:
    for key in data:
        if key not in known:
            near = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]}? " if near else ""
            problem = f"unknown key ({hint}expected one of {', '.join(known)})"
            raise _fail(where, f"{at}{_key(key)}", problem)


def parse_group(where: str, text: object) -> Group:
    """`fleet` or `<key>=<value>[,<key>=<value>…]` as a `Group`. Spaces around a key and
    around the whole are layout; a value is matched exactly as the report shows it, so one
    with spaces at its ends is refused (was `type= prod` meant as `prod`, or a value that
    begins with a space? Neither Kubernetes nor the report's groups have one)."""
    if not isinstance(text, str) or not text.strip():
        raise _fail(where, f"budgets.{_short(text)}", "expected a group: fleet or <key>=<value>")
    if text.strip() == FLEET:
        return Group(FLEET)
    keys: list[str] = []
    values: list[str] = []
    for part in text.split(","):
        key, equals, value = part.lstrip().partition("=")
        if not equals or not value.strip():
            raise _fail(where, f"budgets.{text}", f"expected <key>=<value> or fleet, got {part!r}")
        if value != value.strip():
            raise _fail(
                where,
                f"budgets.{text}",
                f"the value {_short(value)} begins or ends with a space; a group's "
                f"value is matched exactly: write {key.strip()}={value.strip()}",
            )
        try:
            (column,) = allocation_keys(key.strip())
        except ReportError as exc:
            raise _fail(where, f"budgets.{text}", str(exc)) from None
        keys.append(column)
        values.append(value)
    if len(set(keys)) != len(keys):
        raise _fail(where, f"budgets.{text}", "give each key once")
    return Group(text.strip(), tuple(keys), tuple(values))


def _budgets(where: str, value: object) -> tuple[tuple[Group, float], ...]:
    if not isinstance(value, dict):
        raise _fail(where, "budgets", "expected a mapping of group to US dollars a month")
    out = []
    for text, amount in value.items():
        group = parse_group(where, text)
        out.append((group, _dollars(where, f"budgets.{text}", amount, "US dollars a month >= 0")))
    return tuple(out)


def _versions_behind(where: str, value: object) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= sys.float_info.max
    ):
        raise _fail(
            where, "max_versions_behind", f"expected a whole number >= 0, got {_short(value)}"
        )
    return value


def _share(where: str, value: object) -> float:
    share = _number(where, "min_share_on_newest", value, "a share from 0 to 1")
    if share > 1:
        raise _fail(
            where, "min_share_on_newest", f"expected a share from 0 to 1, got {_short(value)}"
        )
    return share


def _types(where: str, value: object) -> tuple[str, ...]:
    """`no_unbounded_limits`: true (prod), false (off) or a list of deployment types."""
    if isinstance(value, bool):
        return PRODUCTION if value else ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(
            where,
            "no_unbounded_limits",
            f"expected true, false or a list of deployment types, got {_short(value)}",
        )
    return tuple(value)


def _date(where: str, value: object) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise _fail(
            where, "drift.against", f"expected a date (YYYY-MM-DD), got {_short(value)}"
        ) from None


def _drift(where: str, value: object) -> Drift:
    if not isinstance(value, dict):
        raise _fail(
            where,
            "drift",
            "expected a mapping (against, by, max_increase_percent, max_increase_usd)",
        )
    _known_keys(where, value, DRIFT_KEYS, "drift.")
    by = value.get("by", ["type"])
    by = [by] if isinstance(by, str) else by
    if not isinstance(by, list) or not by or not all(isinstance(k, str) for k in by):
        raise _fail(
            where,
            "drift.by",
            f"expected allocation keys (type, namespace, workspace, label:<key>), got {_short(by)}",
        )
    for key in by:
        try:
            allocation_keys(key)
        except ReportError as exc:
            raise _fail(where, "drift.by", str(exc)) from None
    limits = {}
    if "max_increase_percent" in value:
        limits["max_increase_percent"] = _number(
            where, "drift.max_increase_percent", value["max_increase_percent"]
        )
    if "max_increase_usd" in value:
        limits["max_increase_usd"] = _dollars(
            where, "drift.max_increase_usd", value["max_increase_usd"], "US dollars a month >= 0"
        )
    if not limits:
        raise _fail(where, "drift", "give max_increase_percent, max_increase_usd or both")
    against = _date(where, value["against"]) if "against" in value else None
    return Drift(against=against, by=tuple(by), **limits)


def parse_rules(data: object, where: str = "rules") -> Rules:
    """The rules of a mapping as a file holds them (`where` names it in errors).

    Raises `RulesError`, one line naming `where` and the key, for an unknown key, a value of
    the wrong type, a negative number, or a mapping with no rule at all.
    """
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a mapping of rules, got {type(data).__name__}")
    _known_keys(where, data, TOP_KEYS, "")
    if not any(key in data for key in RULE_KEYS):
        raise RulesError(f"{where}: no rule given (expected any of {', '.join(RULE_KEYS)})")
    readers: dict[str, Any] = {
        "basis": lambda v: _choice(where, "basis", v, BASES),
        "scale": lambda v: _choice(where, "scale", v, SCALES),
        "unknown_costs": lambda v: _choice(where, "unknown_costs", v, UNKNOWN_COSTS),
        "budgets": lambda v: _budgets(where, v),
        "max_versions_behind": lambda v: _versions_behind(where, v),
        "min_share_on_newest": lambda v: _share(where, v),
        "no_unbounded_limits": lambda v: _types(where, v),
        "no_inverted_scales": lambda v: _flag(where, "no_inverted_scales", v),
        "no_prod_at_dev_defaults": lambda v: _flag(where, "no_prod_at_dev_defaults", v),
        "drift": lambda v: _drift(where, v),
    }
    values: dict[str, Any] = {key: readers[key](value) for key, value in data.items()}
    return Rules(**values, source=where)


def load_rules(path: str | Path) -> Rules:
    """The rules of a YAML or TOML file (TOML by the suffix `.toml`); see `parse_rules`."""
    path = Path(path)
    return parse_rules(read_small_file(path, "rules", RulesError), str(path))
