"""Sidecars and init containers as the Kubernetes scheduler counts them, unknowns kept unknown.

Kubernetes fills a container's empty request from its limit, and a container with neither
asks for nothing (BestEffort) yet may use anything. So, per container and resource:

- request: the request; empty, the limit; both empty, 0;
- limit: the limit; empty, *unbounded* (null here, never 0: a missing limit is no cap);
- a quantity the export could not read (its column null, its JSON text holding a value
  Kubernetes refuses) is *unreadable*: the figures it feeds are null, never 0, and the
  deployment is unpriced (Kubernetes refuses such a pod spec, so what runs is unknown).

A native sidecar (an init container with `restartPolicy: Always`) starts in the init phase,
in its order, and runs beside the main container from then on: it counts among the sidecars
and beside every init container after it (kubernetes/enhancements KEP 753).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import quantities
from analysis.reports.frames import text_column
from analysis.reports.measures import MIB_PER_GIB


@dataclass(frozen=True)
class Quantity:
    """Where one container quantity lives in `deployment_containers`, and its unit."""

    column: str
    factor: float
    json_column: str
    section: str
    key: str


#: report measure -> the container quantity it reads (cores and GiB)
QUANTITIES = {
    "cpu_request_cores": Quantity("cpu_request", 1.0, "resources_requests_json", "requests", "cpu"),
    "cpu_limit_cores": Quantity("cpu_limit", 1.0, "resources_limits_json", "limits", "cpu"),
    "memory_request_gib": Quantity(
        "memory_request_mb", 1.0 / MIB_PER_GIB, "resources_requests_json", "requests", "memory"
    ),
    "memory_limit_gib": Quantity(
        "memory_limit_mb", 1.0 / MIB_PER_GIB, "resources_limits_json", "limits", "memory"
    ),
}
#: request measure -> the limit it defaults to (Kubernetes' defaulting)
LIMIT_OF = {"cpu_request_cores": "cpu_limit_cores", "memory_request_gib": "memory_limit_gib"}


def numeric(frame: pd.DataFrame, name: str | None) -> pd.Series:
    """A numeric column as float64, all-null when the spec or the file lacks it."""
    if name is None or name not in frame.columns:
        return pd.Series(np.nan, index=frame.index, dtype="float64")
    return pd.to_numeric(frame[name], errors="coerce").astype("float64")


def _member(text: str, key: str) -> object:
    """`key` of the JSON object `text` (None when it is no object or has no such key)."""
    value = json.loads(text)
    return value.get(key) if isinstance(value, dict) else None


@dataclass(frozen=True)
class Unreadable:
    """The containers (row labels) whose quantity of one measure is unreadable, the values
    sent and why each is not a Kubernetes quantity."""

    rows: pd.Index
    sent: list[object]
    reasons: list[str]


class PodContainers:
    """A snapshot's sidecars and init containers, their quantities under Kubernetes' rules."""

    def __init__(self, containers: pd.DataFrame) -> None:
        self.containers = containers
        self.ids = text_column(containers, "deployment_id")
        kind = text_column(containers, "kind")
        policy = text_column(containers, "restart_policy")
        self.init = (kind == "init").to_numpy()
        self.native = self.init & (policy == "Always").to_numpy()
        self.sidecar = (kind == "sidecar").to_numpy() | self.native
        self.position = numeric(containers, "position")
        self._raw = {m: numeric(containers, q.column) * q.factor for m, q in QUANTITIES.items()}
        self.unreadable = {m: self._find_unreadable(m) for m in QUANTITIES}

    def _find_unreadable(self, measure: str) -> Unreadable:
        """Quantities sent that the export could not read: null in the column, a value
        Kubernetes refuses in the JSON text (a dataset older than those columns has none)."""
        quantity = QUANTITIES[measure]
        frame = self.containers
        if quantity.json_column not in frame.columns:
            return Unreadable(pd.Index([]), [], [])
        candidates = self._raw[measure].isna() & frame[quantity.json_column].notna()
        texts = frame.loc[candidates, quantity.json_column]
        sent = [_member(text, quantity.key) for text in texts]
        why = [quantities.problem(value) for value in sent]
        keep = [reason is not None for reason in why]
        return Unreadable(
            texts.index[keep],
            [v for v, k in zip(sent, keep, strict=True) if k],
            [r for r in why if r is not None],
        )

    def unreadable_mask(self, measure: str) -> np.ndarray:
        return self.containers.index.isin(self.unreadable[measure].rows)

    def value(self, measure: str) -> pd.Series:
        """Each container's figure of `measure` as Kubernetes applies it: a request left empty
        is the limit (0 when both are), a limit left empty is null (unbounded), and anything
        that depends on an unreadable quantity is null."""
        raw = self._raw[measure]
        if measure not in LIMIT_OF:
            return raw.where(~self.unreadable_mask(measure))
        limit = self.value(LIMIT_OF[measure])
        limit_absent = self._raw[LIMIT_OF[measure]].isna() & ~self.unreadable_mask(
            LIMIT_OF[measure]
        )
        filled = raw.fillna(limit).where(~(raw.isna() & limit_absent), 0.0)
        return filled.where(~self.unreadable_mask(measure))

    def limit_absent(self, measure: str) -> np.ndarray:
        """Containers with no limit of `measure`'s resource (unbounded), unreadable aside."""
        limit = LIMIT_OF.get(measure, measure)
        return (self._raw[limit].isna() & ~self.unreadable_mask(limit)).to_numpy()

    def any_unreadable(self) -> np.ndarray:
        masks = [self.unreadable_mask(m) for m in QUANTITIES]
        return np.logical_or.reduce(masks) if masks else np.zeros(len(self.containers), bool)

    def per_deployment(self, values: pd.Series | np.ndarray, mask: np.ndarray) -> pd.Series:
        """The sum of `values` over the containers in `mask`, by deployment id: null for a
        deployment where any of them is null (an unknown part makes the sum unknown)."""
        series = pd.Series(values, index=self.containers.index)[mask]
        ids = self.ids[mask]
        sums = series.fillna(0.0).groupby(ids).sum()
        unknown = series.isna().groupby(ids).any()
        return sums.where(~unknown)

    def count(self, mask: np.ndarray) -> pd.Series:
        return self.ids[mask].value_counts()

    def flagged(self, mask: np.ndarray) -> pd.Series:
        """By deployment id: True where any container is in `mask`."""
        return pd.Series(mask, index=self.containers.index).groupby(self.ids).any()

    def init_peak(self, values: pd.Series) -> pd.Series:
        """By deployment id, the most the init phase asks at once: each init container with
        the native sidecars started before it, each native sidecar with those and itself;
        null where any of them is unknown."""
        init = pd.DataFrame(
            {
                "id": self.ids,
                "position": self.position,
                "value": values.fillna(0.0),
                "native": self.native,
                "unknown": values.isna(),
            }
        )[self.init].sort_values(["id", "position"], kind="stable")
        running = init["value"].where(init["native"], 0.0).groupby(init["id"]).cumsum()
        peak = (running + init["value"].where(~init["native"], 0.0)).groupby(init["id"]).max()
        return peak.where(~init["unknown"].groupby(init["id"]).any())
