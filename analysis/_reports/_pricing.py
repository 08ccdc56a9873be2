"""What of a deployment can be priced: the rules that keep every figure from being silently
lower than the truth.

- *Unpriced* (`unpriced_reason`): every capacity and cost figure of the deployment is null and
  it is in no total, which says how many it leaves out (`deployments_unpriced`):
  `resource_spec_absent` (no resource field at all), `missing_resources` (a component that
  sets CPU or memory lacks its CPU or memory request: the service's default is unknown here)
  and `unreadable_quantity` (a quantity no cluster runs: a sidecar's or init container's
  quantity Kubernetes refuses, or a resource_spec figure that is negative or above 2^32,
  null in its column and kept in `unreadable_values_json` (`dims._tables`): the pod as
  sent cannot run, so what does run is unknown; DB storage is left out too, so that every
  total leaves the deployment out whole). An unreadable figure is one that was sent: it is
  neither absent nor missing, and sets its component.
- *Limits unbounded* (`limits_unbounded`): a component that sets CPU or memory, or a sidecar or
  init container, has no CPU or memory limit, so it may use what the node has. Its limits
  basis (cores, GiB and dollars) is null, and totals of the limits basis leave it out
  (`deployments_unbounded`). Requests are priced as usual.
- *Scale inverted* (`scale_inverted`): a component's max_scale is below its min_scale (as
  whole replicas, an empty scale counting one). Max-scale figures use max(min, max): the
  autoscaler never runs fewer than min_scale.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from dims import _spec as spec
from dims._reports._frames import text_column
from dims._reports._pods import PodContainers, numeric
from dims._tables import UNREADABLE_VALUES_COLUMN, figure_paths

#: Why a deployment is unpriced, strongest first (each is also an anomaly kind).
REASONS = ("resource_spec_absent", "missing_resources", "unreadable_quantity")
#: the component fields of CPU and memory, requests then limits
_COMPUTE = ("cpu", "memory_mb", "cpu_limit", "memory_limit_mb")


def any_unreadable(deployments: pd.DataFrame) -> pd.Series:
    """Deployments that sent a resource figure no cluster runs (`unreadable_values_json`)."""
    return text_column(deployments, UNREADABLE_VALUES_COLUMN).notna()


def unreadable(deployments: pd.DataFrame, field: str | None) -> pd.Series:
    """Deployments whose `field` (a numeric resource field) was sent as a figure no cluster
    runs: null in its column, its value in `unreadable_values_json` under its dotted path."""
    found = np.zeros(len(deployments), dtype=bool)
    texts = text_column(deployments, UNREADABLE_VALUES_COLUMN).to_numpy(dtype=object)
    sent = np.flatnonzero(pd.notna(texts))  # few rows: only those are searched
    if field in figure_paths() and len(sent):
        key = json.dumps(figure_paths()[field]) + ":"  # a key of the object: quotes delimit it
        found[sent] = [key in text for text in texts[sent]]
    return pd.Series(found, index=deployments.index)


def unreadable_sent(deployments: pd.DataFrame) -> dict[Any, dict[str, object]]:
    """Row label -> {resource field: the value sent} for each deployment that sent figures
    no cluster runs (only those rows are read)."""
    fields = {path: field for field, path in figure_paths().items()}
    out: dict[Any, dict[str, object]] = {}
    for label, text in text_column(deployments, UNREADABLE_VALUES_COLUMN).dropna().items():
        found = json.loads(text)
        out[label] = {fields[p]: v for p, v in found.items() if p in fields}
    return out


def replicas(frame: pd.DataFrame, field: str | None) -> pd.Series:
    """Replicas as a count: an empty scale is one replica, a fractional one rounds up (a
    scheduler cannot run part of a pod)."""
    values = np.ceil(numeric(frame, field).fillna(1.0).to_numpy())
    return pd.Series(values, index=frame.index).astype("int64")


def resource_spec_absent(deployments: pd.DataFrame) -> pd.Series:
    """No numeric resource field at all (the dataset cannot tell an absent resource_spec
    from an empty one)."""
    fields = [f for f in spec.resource_numeric_fields() if f in deployments.columns]
    if not fields:
        return ~any_unreadable(deployments)
    return deployments[fields].isna().all(axis=1) & ~any_unreadable(deployments)


def compute_set(deployments: pd.DataFrame, component: str, absent: pd.Series) -> pd.Series:
    """Does the component ask for compute? main does wherever a resource field is set; the
    others where any of their CPU or memory fields is set (a DB with storage alone asks none),
    or was sent unreadable."""
    if component == "main":
        return ~absent
    fields = spec.component_measures()[component]
    columns = [
        numeric(deployments, fields.get(f)).notna() | unreadable(deployments, fields.get(f))
        for f in _COMPUTE
    ]
    return pd.concat(columns, axis=1).any(axis=1)


def not_set(deployments: pd.DataFrame, field: str | None) -> pd.Series:
    """Deployments that did not send `field`: null in its column, and not unreadable."""
    return numeric(deployments, field).isna() & ~unreadable(deployments, field)


def _component_flags(deployments: pd.DataFrame, absent: pd.Series) -> dict[str, pd.Series]:
    """Per deployment, over its components: a request missing, a limit missing, a scale
    inverted."""
    missing = pd.Series(False, index=deployments.index)
    unbounded, inverted = missing.copy(), missing.copy()
    for component in spec.COMPONENTS:
        fields = spec.component_measures()[component]
        unset = {f: not_set(deployments, fields.get(f)) for f in _COMPUTE}
        asks = compute_set(deployments, component, absent)
        missing |= asks & (unset["cpu"] | unset["memory_mb"])
        unbounded |= asks & (unset["cpu_limit"] | unset["memory_limit_mb"])
        inverted |= scale_inverted(deployments, fields)
    return {"missing": missing, "unbounded": unbounded, "inverted": inverted}


def scale_inverted(deployments: pd.DataFrame, fields: dict[str, str]) -> pd.Series:
    """A component's max_scale below its min_scale, as whole replicas (an empty scale counts
    one); never where either was sent unreadable (what it is is unknown)."""
    low_field, high_field = fields.get("min_scale"), fields.get("max_scale")
    low, high = replicas(deployments, low_field), replicas(deployments, high_field)
    known = ~(unreadable(deployments, low_field) | unreadable(deployments, high_field))
    return (high < low) & known


def pricing_status(deployments: pd.DataFrame, pods: PodContainers) -> pd.DataFrame:
    """Per deployment (aligned with `deployments`): `unpriced_reason` (null when priced),
    `limits_unbounded` and `scale_inverted`."""
    absent = resource_spec_absent(deployments)
    flags = _component_flags(deployments, absent)
    no_limit = pods.limit_absent("cpu_limit_cores") | pods.limit_absent("memory_limit_gib")
    containers_unbounded = pd.Series(pods.flagged(no_limit), index=deployments.index)
    sent = pods.flagged(pods.any_unreadable()) | any_unreadable(deployments).to_numpy()
    reason = pd.Series(None, index=deployments.index, dtype="str")
    reason[sent] = "unreadable_quantity"
    reason[flags["missing"].to_numpy()] = "missing_resources"
    reason[absent.to_numpy()] = "resource_spec_absent"
    return pd.DataFrame(
        {
            "unpriced_reason": reason,
            "limits_unbounded": (flags["unbounded"] | containers_unbounded) & ~absent,
            "scale_inverted": flags["inverted"],
        },
        index=deployments.index,
    )
