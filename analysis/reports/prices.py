"""Prices and monthly costs: what the capacity the fleet asks for costs a month.

A `PriceSheet` holds three rates, $ per core-hour of CPU, per GiB-hour of memory and per
GiB-month of storage, with optional overrides per deployment type. The defaults are
OpenCost's custom-pricing defaults (CPU 0.031611 $/core-hour, RAM 0.004237 $/GiB-hour,
storage 0.04 $/GiB-month), so a fleet without a price sheet still gets comparable figures.
A month is 730 hours (8,760 hours a year ÷ 12), as OpenCost and cloud price lists count it.

Costs price what is *reserved or allowed*, not what is used (the dataset has no usage):
CPU and memory at min or max scale, by their requests or their limits; DB storage is priced
once per deployment (it neither scales with replicas nor has a limit).

A price file is YAML or TOML (by its suffix: `.toml` is TOML, anything else YAML):

    cpu_core_hour: 0.031611
    memory_gib_hour: 0.004237
    storage_gib_month: 0.04
    hours_per_month: 730
    types:
      prod: {cpu_core_hour: 0.045, memory_gib_hour: 0.006}
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import yaml

from analysis.errors import ConfigurationError
from analysis.reports.measures import BASES, SCALES, total_column

HOURS_PER_MONTH = 730.0
RATES = ("cpu_core_hour", "memory_gib_hour", "storage_gib_month")
#: the keys a price file may hold at its top level
FILE_KEYS = (*RATES, "hours_per_month", "types")


class PriceSheetError(ConfigurationError):
    """A price file or price option cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class Rates:
    """The three prices that apply to one deployment type, in US dollars."""

    cpu_core_hour: float
    memory_gib_hour: float
    storage_gib_month: float


@dataclass(frozen=True)
class PriceSheet:
    """Prices in US dollars; `types` overrides any rate for one deployment type."""

    cpu_core_hour: float = 0.031611
    memory_gib_hour: float = 0.004237
    storage_gib_month: float = 0.04
    hours_per_month: float = HOURS_PER_MONTH
    types: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: where the prices came from, for the report's assumptions
    source: str = "OpenCost custom-pricing defaults"

    def rates(self, deployment_type: object) -> Rates:
        """The rates of one deployment type: its overrides, else the sheet's own rates."""
        base = {name: getattr(self, name) for name in RATES}
        if isinstance(deployment_type, str):
            base.update(self.types.get(deployment_type, {}))
        return Rates(**base)

    def with_rates(
        self,
        *,
        cpu_core_hour: float | None = None,
        memory_gib_hour: float | None = None,
        storage_gib_month: float | None = None,
    ) -> PriceSheet:
        """This sheet with the given base rates replaced (None leaves a rate as it is)."""
        options = {
            "cpu_core_hour": cpu_core_hour,
            "memory_gib_hour": memory_gib_hour,
            "storage_gib_month": storage_gib_month,
        }
        given = {name: value for name, value in options.items() if value is not None}
        for name, value in given.items():
            _check_rate(value, "price option", name)
        if not given:
            return self
        return _replaced(self, given, source=f"{self.source}, with rates from options")

    def describe(self) -> str:
        """One line for the report: the rates, the month and any per-type overrides."""
        text = (
            f"${self.cpu_core_hour:g} per core-hour, ${self.memory_gib_hour:g} per GiB-hour "
            f"of memory, ${self.storage_gib_month:g} per GiB-month of storage, "
            f"{self.hours_per_month:g} hours a month ({self.source})"
        )
        for kind, rates in sorted(self.types.items()):
            listed = ", ".join(f"{k} {v:g}" for k, v in sorted(rates.items()))
            text += f"; {kind}: {listed}"
        return text


DEFAULT_PRICES = PriceSheet()


def _check_rate(value: object, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise PriceSheetError(f"{where}: {key}: expected a number >= 0, got {value!r}")
    if value == float("inf"):
        raise PriceSheetError(f"{where}: {key}: expected a finite number, got {value!r}")
    return float(value)


def _parse(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceSheetError(f"{path}: cannot read the price file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PriceSheetError(f"{path}: the price file is not UTF-8 text") from None
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(text)
        return yaml.safe_load(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceSheetError(f"{path}: not valid TOML: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot parse"
        raise PriceSheetError(f"{path}: not valid YAML{line}: {problem}") from None


def _unknown(path: Path, key: object, where: str, known: tuple[str, ...]) -> PriceSheetError:
    return PriceSheetError(
        f"{path}: {where}{key}: unknown key (expected one of {', '.join(known)})"
    )


def load_prices(path: str | Path, base: PriceSheet = DEFAULT_PRICES) -> PriceSheet:
    """A price sheet from a YAML or TOML file; rates it leaves out keep `base`'s values.

    Raises `PriceSheetError` (one line naming the file and the key) for a file that cannot be
    read or parsed, an unknown key, or a rate that is not a number >= 0.
    """
    path = Path(path)
    data = _parse(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PriceSheetError(f"{path}: expected a mapping of prices, got {type(data).__name__}")
    values = _file_rates(path, data)
    overrides = _type_rates(path, data.get("types") or {})
    return _replaced(base, values, types=overrides, source=f"price file {path.name}")


def _file_rates(path: Path, data: Mapping[object, object]) -> dict[str, float]:
    """The file's top-level rates and hours a month, every key checked."""
    values: dict[str, float] = {}
    for key, value in data.items():
        if key not in FILE_KEYS:
            raise _unknown(path, key, "", FILE_KEYS)
        if key in (*RATES, "hours_per_month"):
            values[key] = _check_rate(value, str(path), key)
    if values.get("hours_per_month") == 0:
        raise PriceSheetError(f"{path}: hours_per_month: expected a number > 0, got 0")
    return values


def _type_rates(path: Path, types: object) -> dict[str, dict[str, float]]:
    """The `types` section: deployment type -> the rates it overrides, every key checked."""
    if not isinstance(types, dict):
        raise PriceSheetError(f"{path}: types: expected a mapping of deployment types")
    overrides: dict[str, dict[str, float]] = {}
    for kind, rates in types.items():
        if not isinstance(rates, dict):
            raise PriceSheetError(f"{path}: types.{kind}: expected a mapping of rates")
        for key, value in rates.items():
            if key not in RATES:
                raise _unknown(path, key, f"types.{kind}.", RATES)
            overrides.setdefault(str(kind), {})[key] = _check_rate(
                value, str(path), f"types.{kind}.{key}"
            )
    return overrides


def _replaced(
    sheet: PriceSheet,
    numbers: Mapping[str, float],
    *,
    source: str,
    types: Mapping[str, Mapping[str, float]] | None = None,
) -> PriceSheet:
    """`sheet` with the rates and hours a month named in `numbers` replaced (the others kept),
    field by field so that each keeps its type."""
    return replace(
        sheet,
        cpu_core_hour=numbers.get("cpu_core_hour", sheet.cpu_core_hour),
        memory_gib_hour=numbers.get("memory_gib_hour", sheet.memory_gib_hour),
        storage_gib_month=numbers.get("storage_gib_month", sheet.storage_gib_month),
        hours_per_month=numbers.get("hours_per_month", sheet.hours_per_month),
        types=sheet.types if types is None else types,
        source=source,
    )


def cost_column(basis: str, scale: str, resource: str | None = None) -> str:
    """`request`, `max` -> `cost_request_max_scale_usd_month` (`cpu_cost_…` for one part)."""
    prefix = f"{resource}_cost" if resource else "cost"
    return f"{prefix}_{basis}_{scale}_scale_usd_month"


STORAGE_COST = "storage_cost_usd_month"
#: the whole monthly cost (CPU + memory + storage), per basis and scale
COST_TOTALS = [cost_column(b, s) for b in BASES for s in SCALES]
#: every cost column, totals first, then the parts they sum
COST_COLUMNS = [
    *COST_TOTALS,
    *(cost_column(b, s, r) for r in ("cpu", "memory") for b in BASES for s in SCALES),
    STORAGE_COST,
]


def add_costs(frame: pd.DataFrame, prices: PriceSheet = DEFAULT_PRICES) -> pd.DataFrame:
    """`frame` (rows with capacity totals, `db_storage_gib` and `deployment_type`) with the
    monthly cost of every row added as the `COST_COLUMNS`, priced by its deployment type."""
    out = frame.copy()
    kinds = out["deployment_type"].astype("object")
    rates = {k: prices.rates(k) for k in pd.unique(kinds)}
    per_row = {name: kinds.map(lambda k, n=name: getattr(rates[k], n)) for name in RATES}
    hours = prices.hours_per_month
    storage = out["db_storage_gib"].astype("float64").fillna(0.0)
    out[STORAGE_COST] = storage * per_row["storage_gib_month"].astype("float64")
    for basis in BASES:
        for scale in SCALES:
            cpu = out[total_column("cpu", basis, scale)].astype("float64").fillna(0.0)
            mem = out[total_column("memory", basis, scale)].astype("float64").fillna(0.0)
            cpu_cost = cpu * per_row["cpu_core_hour"].astype("float64") * hours
            mem_cost = mem * per_row["memory_gib_hour"].astype("float64") * hours
            out[cost_column(basis, scale, "cpu")] = cpu_cost
            out[cost_column(basis, scale, "memory")] = mem_cost
            out[cost_column(basis, scale)] = cpu_cost + mem_cost + out[STORAGE_COST]
    return out
