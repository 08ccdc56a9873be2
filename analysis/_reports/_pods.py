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

from dims._reports._frames import text_column
from dims._reports._measures import MIB_PER_GIB
from dims._tables import quantity_problem


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
    """A snapshot's sidecars and init containers, their quantities under Kubernetes' rules.

    `owner` is each container's deployment by position among `deployment_ids` (-1 for a
    container of none of them), so that sums by deployment are `numpy.bincount`s.
    """

    def __init__(self, containers: pd.DataFrame, deployment_ids: pd.Series) -> None:
        self.containers = containers
        self.count_of_deployments = len(deployment_ids)
        ids = text_column(containers, "deployment_id")
        self.owner = pd.Index(deployment_ids).get_indexer(pd.Index(ids))
        kind = text_column(containers, "kind")
        policy = text_column(containers, "restart_policy")
        mine = self.owner >= 0
        self.init = (kind == "init").to_numpy() & mine
        self.native = self.init & (policy == "Always").to_numpy()
        self.sidecar = ((kind == "sidecar").to_numpy() & mine) | self.native
        self.position = numeric(containers, "position").to_numpy()
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
        why = [quantity_problem(value, quantity.key) for value in sent]
        keep = [reason is not None for reason in why]
        return Unreadable(
            texts.index[keep],
            [v for v, k in zip(sent, keep, strict=True) if k],
            [r for r in why if r is not None],
        )

    def unreadable_mask(self, measure: str) -> np.ndarray:
        return self.containers.index.isin(self.unreadable[measure].rows)

    def value(self, measure: str) -> np.ndarray:
        """Each container's figure of `measure` as Kubernetes applies it: a request left empty
        is the limit (0 when both are), a limit left empty is null (unbounded), and anything
        that depends on an unreadable quantity is null."""
        raw = self._raw[measure].to_numpy()
        unreadable = self.unreadable_mask(measure)
        if measure not in LIMIT_OF:
            return np.where(unreadable, np.nan, raw)
        limit = self.value(LIMIT_OF[measure])
        limit_absent = self.limit_absent(LIMIT_OF[measure])
        filled = np.where(np.isnan(raw), limit, raw)
        filled = np.where(np.isnan(raw) & limit_absent, 0.0, filled)
        return np.where(unreadable, np.nan, filled)

    def limit_absent(self, measure: str) -> np.ndarray:
        """Containers with no limit of `measure`'s resource (unbounded), unreadable aside."""
        limit = LIMIT_OF.get(measure, measure)
        return (self._raw[limit].isna() & ~self.unreadable_mask(limit)).to_numpy()

    def any_unreadable(self) -> np.ndarray:
        masks = [self.unreadable_mask(m) for m in QUANTITIES]
        return np.logical_or.reduce(masks) if masks else np.zeros(len(self.containers), bool)

    def per_deployment(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The sum of `values` over the containers in `mask`, by deployment (position): null
        where any of them is null (an unknown part makes the sum unknown), 0 for none."""
        owner, chosen = self.owner[mask], values[mask]
        known = ~np.isnan(chosen)
        count = self.count_of_deployments
        total = np.bincount(owner, weights=np.where(known, chosen, 0.0), minlength=count)
        unknown = np.bincount(owner, weights=~known, minlength=count) > 0
        return np.where(unknown, np.nan, total)

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.owner[mask], minlength=self.count_of_deployments)

    def flagged(self, mask: np.ndarray) -> np.ndarray:
        """By deployment (position): True where any of its containers is in `mask`."""
        return self.count(mask & (self.owner >= 0)) > 0

    def init_peak(self, values: np.ndarray) -> np.ndarray:
        """By deployment (position), the most the init phase asks at once: each init
        container with the native sidecars started before it, each native sidecar with those
        and itself; null where any of them is unknown, 0 without init containers."""
        at = np.flatnonzero(self.init)
        order = at[np.lexsort((self.position[at], self.owner[at]))]
        owner, native = self.owner[order], self.native[order]
        value = np.nan_to_num(values[order])
        started = np.where(native, value, 0.0)
        running = np.cumsum(started)
        first = np.r_[True, owner[1:] != owner[:-1]] if len(owner) else np.zeros(0, bool)
        before = (running - started)[
            np.maximum.accumulate(np.where(first, np.arange(len(owner)), 0))
        ]
        running = running - before  # native sidecars started so far, within the deployment
        asked = running + np.where(native, 0.0, value)
        peak = np.zeros(self.count_of_deployments)
        np.maximum.at(peak, owner, asked)
        unknown = np.bincount(owner, weights=np.isnan(values[order]), minlength=len(peak)) > 0
        return np.where(unknown, np.nan, peak)
