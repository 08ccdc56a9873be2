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

A price file is read as hostile input (`dims._smallfile`, as a rules file is): at most
64 KiB, YAML without anchors or aliases (an alias bomb is a few lines that expand beyond
memory), nesting too deep to parse is one line, rates are finite and at most what a month of
them can price, and an error quotes a value only shortened. A rate that is finite but makes
the fleet's monthly cost overflow is refused where the fleet is known (`add_costs`), naming
the rate.
"""

from __future__ import annotations

import hashlib
import re
import reprlib
import sys
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dims import _spec as spec
from dims._errors import PriceSheetError as PriceSheetError
from dims._errors import UnknownPriceTypeWarning as UnknownPriceTypeWarning
from dims._reports._measures import BASES, SCALES, total_column
from dims._smallfile import read_small_file

HOURS_PER_MONTH = 730.0
#: A month has at most 31 days of 24 hours.
MAX_HOURS_PER_MONTH = 744.0
#: The largest rate: a month of it (at most 744 hours) is still a finite number.
MAX_RATE = sys.float_info.max / MAX_HOURS_PER_MONTH
#: A price sheet is a few lines; a larger file is refused before it is read whole.
#: The most a fleet's monthly cost, summed over every deployment, may come to: no bill comes
#: near it, and it stays so far below float64's overflow (1.8e308) that a sum over any
#: grouping, in any order, of costs within it is finite.
COST_CEILING_USD = 1e300
RATES = ("cpu_core_hour", "memory_gib_hour", "storage_gib_month")
#: the keys a price file may hold at its top level
FILE_KEYS = (*RATES, "hours_per_month", "types")


#: How an error quotes a value from a price file: a few characters, a few items, two levels.
_QUOTE = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = _QUOTE.maxlong = 40
_QUOTE.maxlist = _QUOTE.maxdict = _QUOTE.maxtuple = _QUOTE.maxset = 4
_QUOTE.maxlevel = 2


def _quoted(value: object) -> str:
    """`value` for an error message, shortened: a file's value may be megabytes of text."""
    return _QUOTE.repr(value)


def _name(key: object, limit: int = 40) -> str:
    """A key, type name or parser's message for an error message, unquoted and shortened."""
    text = str(key)
    return text if len(text) <= limit else f"{text[:limit]}…"


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
    #: the scenario's name, part of where its report is written ("" for the defaults): the
    #: price file's name, and the rates given as options
    name: str = ""

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
        named = "-".join(f"{_SHORT[k]}{v:g}" for k, v in given.items())
        return _replaced(
            self,
            given,
            source=f"{self.source}, with rates from options",
            name=scenario_name(f"{self.name or 'defaults'}-{named}"),
        )

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


#: How a rate given as an option reads in a scenario's name.
_SHORT = {"cpu_core_hour": "cpu", "memory_gib_hour": "gib", "storage_gib_month": "storage"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def scenario_name(text: str) -> str:
    """`text` as a folder name that every file system and object store takes: letters,
    digits and `._+-`, at most 80 characters (a name of other characters keeps a short hash
    of itself, so two such names never meet)."""
    safe = _UNSAFE.sub("-", text).strip("-.")[:80]
    if safe != text:
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        safe = f"{safe[:71]}-{digest}" if safe else digest
    return safe


def _check_rate(value: object, where: str, key: str, highest: float = MAX_RATE) -> float:
    """`value` as a float from 0 to `highest`; anything else is one line naming `key`."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise PriceSheetError(f"{where}: {key}: expected a number >= 0, got {_quoted(value)}")
    if not value <= highest:  # an int too large for a float compares without converting
        raise PriceSheetError(
            f"{where}: {key}: expected a number from 0 to {highest:.4g}, got {_quoted(value)}"
        )
    return float(value)


def _unknown(path: Path, key: object, where: str, known: tuple[str, ...]) -> PriceSheetError:
    return PriceSheetError(
        f"{path}: {where}{_name(key)}: unknown key (expected one of {', '.join(known)})"
    )


def load_prices(path: str | Path, base: PriceSheet = DEFAULT_PRICES) -> PriceSheet:
    """A price sheet from a YAML or TOML file; rates it leaves out keep `base`'s values.

    Raises `PriceSheetError` (one line naming the file and the key) for a file that cannot be
    read or parsed, an unknown key, or a rate that is not a number >= 0.
    """
    path = Path(path)
    data = read_small_file(path, "price", PriceSheetError)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PriceSheetError(f"{path}: expected a mapping of prices, got {type(data).__name__}")
    values = _file_rates(path, data)
    overrides = _type_rates(path, data.get("types") or {})
    return _replaced(
        base,
        values,
        types=overrides,
        source=f"price file {path.name}",
        name=scenario_name(path.stem),
    )


def _file_rates(path: Path, data: Mapping[object, object]) -> dict[str, float]:
    """The file's top-level rates and hours a month, every key checked."""
    values: dict[str, float] = {}
    for key, value in data.items():
        if key not in FILE_KEYS:
            raise _unknown(path, key, "", FILE_KEYS)
        if key in RATES:
            values[key] = _check_rate(value, str(path), key)
        elif key == "hours_per_month":
            values[key] = _check_rate(value, str(path), key, MAX_HOURS_PER_MONTH)
    if values.get("hours_per_month") == 0:
        raise PriceSheetError(f"{path}: hours_per_month: expected a number > 0, got 0")
    return values


def _type_rates(path: Path, types: object) -> dict[str, dict[str, float]]:
    """The `types` section: deployment type -> the rates it overrides, every key checked."""
    if not isinstance(types, dict):
        raise PriceSheetError(f"{path}: types: expected a mapping of deployment types")
    overrides: dict[str, dict[str, float]] = {}
    for kind, rates in types.items():
        where = f"types.{_name(kind)}"
        if not isinstance(rates, dict):
            raise PriceSheetError(f"{path}: {where}: expected a mapping of rates")
        for key, value in rates.items():
            if key not in RATES:
                raise _unknown(path, key, f"{where}.", RATES)
            overrides.setdefault(str(kind), {})[key] = _check_rate(
                value, str(path), f"{where}.{key}"
            )
    return overrides


def _replaced(
    sheet: PriceSheet,
    numbers: Mapping[str, float],
    *,
    source: str,
    name: str,
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
        name=name,
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


#: Each part of a monthly cost: its column, the rate that prices it, the quantity it prices
#: and what that quantity is.
_PARTS = [
    *(
        (cost_column(b, s, r), rate, total_column(r, b, s), f"{unit}, {b}s at {s} scale")
        for r, rate, unit in (
            ("cpu", "cpu_core_hour", "cores"),
            ("memory", "memory_gib_hour", "GiB"),
        )
        for b in BASES
        for s in SCALES
    ),
    (STORAGE_COST, "storage_gib_month", "db_storage_gib", "GiB of DB storage"),
]
#: The quantities the cost columns are priced from: all `check_costs` reads beside them.
QUANTITY_COLUMNS = list(dict.fromkeys(quantity for _, _, quantity, _ in _PARTS))
#: What each rate is per, for an error message.
_PER = {
    "cpu_core_hour": "core-hour",
    "memory_gib_hour": "GiB-hour",
    "storage_gib_month": "GiB-month",
}


def rates_of(prices: PriceSheet, kinds: pd.Series) -> dict[str, np.ndarray]:
    """Each row's rates by its deployment type (`RATES` -> one float per row): the sheet is
    asked once per distinct type, never once per row."""
    codes, uniques = pd.factorize(kinds.astype("object"), use_na_sentinel=True)
    named: list[object] = [*uniques, None]  # code -1 (no type) takes the last entry
    return {
        rate: np.array([getattr(prices.rates(kind), rate) for kind in named], dtype="float64")[
            codes
        ]
        for rate in RATES
    }


def pricing_flags(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(priced, bounded) per row from the pricing flags (`dims._reports._pricing`); a frame
    without them is priced and bounded wherever its figures are known."""
    priced = np.ones(len(frame), dtype=bool)
    if "unpriced_reason" in frame.columns:
        priced = frame["unpriced_reason"].isna().to_numpy()
    bounded = priced.copy()
    if "limits_unbounded" in frame.columns:
        bounded &= ~frame["limits_unbounded"].to_numpy(dtype=bool)
    return priced, bounded


def _floats(frame: pd.DataFrame, column: str) -> np.ndarray:
    return frame[column].to_numpy("float64", na_value=np.nan)


def cost_arrays(
    frame: pd.DataFrame,
    rates: Mapping[str, np.ndarray],
    hours: float,
    priced: np.ndarray,
    bounded: np.ndarray,
) -> dict[str, np.ndarray]:
    """The `COST_COLUMNS` of rows with capacity totals and `db_storage_gib`, given each row's
    `rates` (`rates_of`) and whether its deployment is priced and its limits bounded: null
    where they are not, and where a quantity is unknown."""
    storage = np.nan_to_num(_floats(frame, "db_storage_gib"))
    out: dict[str, np.ndarray] = {}
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by check_costs
        out[STORAGE_COST] = np.where(priced, storage * rates["storage_gib_month"], np.nan)
        for basis in BASES:
            known = bounded if basis == "limit" else priced
            for scale in SCALES:
                cpu = _floats(frame, total_column("cpu", basis, scale))
                mem = _floats(frame, total_column("memory", basis, scale))
                cpu_cost = np.where(known, cpu * rates["cpu_core_hour"] * hours, np.nan)
                mem_cost = np.where(known, mem * rates["memory_gib_hour"] * hours, np.nan)
                out[cost_column(basis, scale, "cpu")] = cpu_cost
                out[cost_column(basis, scale, "memory")] = mem_cost
                out[cost_column(basis, scale)] = cpu_cost + mem_cost + out[STORAGE_COST]
    return {name: out[name] for name in COST_COLUMNS}


def add_costs(frame: pd.DataFrame, prices: PriceSheet = DEFAULT_PRICES) -> pd.DataFrame:
    """`frame` (rows with capacity totals, `db_storage_gib` and `deployment_type`) with the
    monthly cost of every row added as the `COST_COLUMNS`, priced by its deployment type.

    Never silently lower than the truth: a row whose deployment is unpriced
    (`unpriced_reason`) has null costs, storage included; one whose limits are unbounded
    (`limits_unbounded`) has null limits-basis costs; an unknown quantity gives a null cost.
    Raises `PriceSheetError` naming the rate when a part of the cost, summed over `frame`,
    passes `COST_CEILING_USD` because of the rate: no report shows a price's infinite cost.
    """
    rates = rates_of(prices, frame["deployment_type"])
    priced, bounded = pricing_flags(frame)
    costs = cost_arrays(frame, rates, prices.hours_per_month, priced, bounded)
    out = pd.concat(
        [frame.drop(columns=COST_COLUMNS, errors="ignore"), pd.DataFrame(costs, index=frame.index)],
        axis=1,
    )
    check_costs(out, out["deployment_type"], prices)
    return out


def replica_costs(frame: pd.DataFrame, prices: PriceSheet, basis: str) -> np.ndarray:
    """The monthly cost of one replica of each row (a `component_capacity` row) on `basis`:
    what a change of scale costs per replica. Null where the row's cost is null."""
    rates = rates_of(prices, frame["deployment_type"])
    priced, bounded = pricing_flags(frame)
    known = bounded if basis == "limit" else priced
    cpu = _floats(frame, f"cpu_{basis}_cores")
    mem = _floats(frame, f"memory_{basis}_gib")
    per = (cpu * rates["cpu_core_hour"] + mem * rates["memory_gib_hour"]) * prices.hours_per_month
    return np.where(known, per, np.nan)


def check_costs(frame: pd.DataFrame, kinds: pd.Series, prices: PriceSheet) -> None:
    """Every part of the cost within `COST_CEILING_USD` over all of `frame`, so every sum the
    report makes of them (parts, totals, any grouping) is finite, unless the quantities are
    out of range themselves (beyond the ceiling at the default rates): a record's absurd
    quantity is the data's problem, and no rate is to blame for it. `kinds` are the rows'
    deployment types."""
    for column, rate, quantity, what in _PARTS:
        with np.errstate(over="ignore", invalid="ignore"):  # an infinite sum is the finding
            if frame[column].sum() <= COST_CEILING_USD:
                continue
            hours = 1.0 if rate == "storage_gib_month" else HOURS_PER_MONTH
            at_defaults = frame[quantity].sum() * getattr(DEFAULT_PRICES, rate) * hours
        if at_defaults <= COST_CEILING_USD:
            raise _overflow(frame, kinds, prices, (column, rate, quantity, what))


def _overflow(
    frame: pd.DataFrame, kinds: pd.Series, prices: PriceSheet, part: tuple[str, str, str, str]
) -> PriceSheetError:
    """The error naming the rate (of the type costing most) that makes `part` overflow."""
    column, rate, quantity, what = part
    labels = kinds.astype("object").where(kinds.notna(), "").to_numpy()  # "": no type
    by_type = frame[[column, quantity]].astype("float64").groupby(labels).sum()
    label = str(by_type[column].idxmax())
    kind = label or None
    overridden = kind is not None and rate in prices.types.get(kind, {})
    key = f"types.{_name(kind)}.{rate}" if overridden else rate
    amount = float(by_type[quantity][label])
    hours = "" if rate == "storage_gib_month" else f", {prices.hours_per_month:g} hours a month"
    whose = f"deployment type {_name(kind)}" if kind else "deployments without a type"
    return PriceSheetError(
        f"{prices.source}: {key}: ${getattr(prices.rates(kind), rate):g} per {_PER[rate]} "
        f"makes the monthly cost of {whose} more than ${COST_CEILING_USD:.0e} "
        f"({amount:.4g} {what}{hours}); expected a smaller rate"
    )


def warn_unknown_types(prices: PriceSheet, deployment_types: Iterable[object]) -> None:
    """Warn of each per-type override naming a type neither `deployment_types` (the
    dataset's) nor the spec has: its prices apply to no deployment, most likely a typo."""
    found = {kind for kind in deployment_types if isinstance(kind, str)}
    known = sorted(found | set(spec.deployment_types()))
    shown = ", ".join(_name(kind) for kind in known[:12])
    if len(known) > 12:
        shown += f" and {len(known) - 12} more"
    for kind in prices.types:
        if kind not in found and kind not in spec.deployment_types():
            warnings.warn(
                UnknownPriceTypeWarning(
                    f"{prices.source}: types.{_name(kind)}: no deployment has this type, so "
                    f"its prices apply to none (known types: {shown})"
                ),
                stacklevel=2,
            )
