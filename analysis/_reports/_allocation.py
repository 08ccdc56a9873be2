"""Allocation by key, OpenCost's convention: cost and capacity per value of a label (or of
the namespace, workspace or type), deployments without it in one `__unallocated__` row.

`__unallocated__` is dims' own name for a group, never a real value's: a real value written
in that form (two underscores at each end: `__unallocated__`, `__other__`) is shown wrapped in
two more (`____unallocated____`), with a `GroupNameWarning`. Wrapping is one to one, so two
real values never meet either, and every output that names groups (these tables, `dims
check`'s groups, `dims metrics`' labels) names them by `group_name`.

A FinOps engineer asks OpenCost for `aggregate=label:team` or `aggregate=namespace,label:app`;
`cost_by(snapshot, "label:team")` and `dims report --by label:team` answer the same
question from a snapshot: one row per value (per combination for several keys at once),
with the counts of deployments left out of its figures, its share of the month, and the rows
most expensive first.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from dims._errors import GroupNameWarning, NameCollisionWarning, ReportError
from dims._reports import _prices as pr
from dims._reports._capacity import aggregate, identity_of, keyed
from dims._reports._frames import Snapshot, as_snapshot

#: The value of a deployment that lacks the key (OpenCost's name for it).
UNALLOCATED = "__unallocated__"
#: dims' own names for groups have this at both ends; a real value that has it is wrapped.
RESERVED_EDGE = "__"


def is_reserved(text: str) -> bool:
    """Whether `text` has the form of dims' own group names (`__unallocated__`)."""
    edge = len(RESERVED_EDGE)
    return len(text) >= 2 * edge and text.startswith(RESERVED_EDGE) and text.endswith(RESERVED_EDGE)


def group_name(value: object) -> str:
    """A group's value as every output names it: the value itself, `UNALLOCATED` for none
    (null, NaN), and a real value of the reserved form wrapped (`__x__` -> `____x____`)."""
    if not isinstance(value, str):
        return UNALLOCATED
    return f"{RESERVED_EDGE}{value}{RESERVED_EDGE}" if is_reserved(value) else value


def warn_renamed(key: str, renamed: Iterable[tuple[str, str]], why: str) -> None:
    """One `GroupNameWarning` for the real values of `key` shown under another name
    (`renamed`: (value, name)), the first few quoted."""
    pairs = list(renamed)
    if not pairs:
        return
    shown = ", ".join(f"{value[:60]!r} is shown as {name[:70]!r}" for value, name in pairs[:3])
    more = f" (and {len(pairs) - 3:,} more)" if len(pairs) > 3 else ""
    warnings.warn(GroupNameWarning(f"{key} {shown}{more}, {why}"), stacklevel=3)


def group_names(values: pd.Series, key: str) -> pd.Series:
    """`group_name` of each value (asked once per distinct value), warning of each real
    value shown under another name."""
    codes, uniques = pd.factorize(values.astype("object"), use_na_sentinel=True)
    names = [group_name(value) for value in uniques]
    warn_renamed(
        key,
        ((v, n) for v, n in zip(uniques, names, strict=True) if v != n),
        f"so it is not taken for a group dims names itself ({UNALLOCATED}: the deployments "
        "without one)",
    )
    table = np.array([*names, UNALLOCATED], dtype=object)  # code -1 (none) takes the last
    return pd.Series(table[codes], index=values.index, dtype="str")


#: Keys by name -> the identity column they read (a label is `label:<its key>`).
ALIASES = {
    "namespace": "k8s_namespace",
    "k8s_namespace": "k8s_namespace",
    "workspace": "tenant_id",
    "tenant_id": "tenant_id",
    "type": "deployment_type",
    "deployment_type": "deployment_type",
}
LABEL = "label:"


def parse_keys(by: str | Sequence[str]) -> list[str]:
    """`"namespace,label:team"` (or a list of keys) as the columns grouped by:
    `["k8s_namespace", "label:team"]`. Raises `ReportError` (one line) for an unknown key."""
    items = by.split(",") if isinstance(by, str) else [k for text in by for k in text.split(",")]
    keys = []
    for item in (k.strip() for k in items):
        if item.startswith(LABEL) and item[len(LABEL) :].strip():
            keys.append(LABEL + item[len(LABEL) :].strip())
        elif item in ALIASES:
            keys.append(ALIASES[item])
        else:
            known = ", ".join([*dict.fromkeys(ALIASES), "label:<key>"])
            raise ReportError(f"cannot allocate by {item[:60]!r}: expected one of {known}")
    if not keys or len(set(keys)) != len(keys):
        raise ReportError(f"cannot allocate by {str(by)[:60]!r}: give each key once")
    return keys


def table_name(keys: Sequence[str]) -> str:
    """`cost_by_<keys>` for an allocation (`label:team` -> `cost_by_label_team`), before
    `allocation_tables` makes it distinct from the others of a report."""
    parts = ["".join(c if c.isalnum() else "_" for c in key) for key in keys]
    return f"cost_by_{'__'.join(parts)}"


def allocation_tables(by: Sequence[str]) -> dict[tuple[str, ...], str]:
    """Each allocation of `by` (its keys; one given twice, as `namespace` and `k8s_namespace`,
    is one) -> the name of its table and file, one per allocation, whatever the names clean to.

    Two allocations whose names are one once cleaned (`label:a.b`, `label:a b`) or once case
    is ignored (`label:Team`, `label:team`: DuckDB's names and a macOS disk ignore it) would
    write one file holding the second's rows: the first given keeps its name, a later one
    gets its keys' digest after it (the same whatever else is asked for), with a
    `NameCollisionWarning` saying so. Raises ReportError where even that would collide."""
    tables: dict[tuple[str, ...], str] = {}
    taken: dict[str, tuple[str, ...]] = {}
    for text in by:
        keys = tuple(parse_keys(text))
        if keys in tables:
            continue
        name = table_name(keys)
        other = taken.get(name.casefold())
        if other is not None:
            name = f"{name}_{hashlib.sha256(repr(keys).encode()).hexdigest()[:8]}"
            if name.casefold() in taken:
                raise ReportError(f"--by {','.join(keys)[:60]!r}: its table's name {name} is taken")
            warnings.warn(
                NameCollisionWarning(
                    f"--by {','.join(keys)}: its table's name {table_name(keys)} is that of "
                    f"--by {','.join(other)} (names ignore case and every character but "
                    f"letters and digits): written as {name}.parquet"
                ),
                stacklevel=2,
            )
        tables[keys] = name
        taken[name.casefold()] = keys
    return tables


def label_values(snap: Snapshot, key: str) -> pd.Series:
    """Each deployment's value of label `key` (by position), None without it (or with a
    JSON null)."""
    labels = snap.labels
    mine = labels[(labels["key"] == key) & labels["value"].notna()]
    mine = mine.drop_duplicates("deployment_id")
    at = pd.Index(mine["deployment_id"]).get_indexer(identity_of(snap)["deployment_id"])
    values = np.array([*mine["value"].to_numpy(dtype=object), None], dtype=object)
    return pd.Series(values[at], dtype="object")


def _values(snap: Snapshot, key: str) -> pd.Series:
    """Each deployment's group of `key` by position, as `group_names` names it."""
    if key.startswith(LABEL):
        values = label_values(snap, key[len(LABEL) :])
    else:
        values = identity_of(snap)[key].reset_index(drop=True)
    return group_names(values, key)


def warn_labels_nobody_has(snap: Snapshot, tables: Iterable[Sequence[str]]) -> None:
    """One warning per `label:KEY` of `--by` that no deployment has: its allocation is all
    unallocated, which is most likely a misspelt key (label keys are case-sensitive)."""
    asked = sorted({key for keys in tables for key in keys if key.startswith(LABEL)})
    for key in asked:
        if not label_values(snap, key[len(LABEL) :]).notna().any():
            warnings.warn(
                f"no deployment has the label {key[len(LABEL) :]!r}: 100% of the cost by "
                f"{key} is unallocated (label keys are case-sensitive)",
                stacklevel=3,
            )


def cost_by(
    source: Snapshot | str, by: str | Sequence[str], prices: pr.PriceSheet = pr.DEFAULT_PRICES
) -> pd.DataFrame:
    """Cost and capacity per value of `by`: a label (`"label:team"`), `namespace`,
    `workspace`, `type`, or several at once (`"namespace,label:team"`: per combination).

    One row per value, most expensive first (requests at max scale), with `cost_share`;
    deployments without the key (or without one of the keys) are in the `__unallocated__`
    row, and a real value named like it is wrapped (`group_name`). The columns are those of
    `capacity_by`: the keys (`k8s_namespace`, `tenant_id`, `deployment_type`,
    `label:<key>`), `deployments`, `deployments_unpriced`,
    `deployments_unbounded`, replicas, capacity at min and max scale, DB storage and
    connections, and every cost column.
    """
    snap = as_snapshot(source)
    keys = parse_keys(by)

    def build(s: Snapshot) -> pd.DataFrame:
        return aggregate(keyed(s, prices, [], {key: _values(s, key) for key in keys}))

    return snap.memo(f"cost by {keys} {prices!r}", build).copy()


def allocated(source: Snapshot | str, by: str | Sequence[str]) -> pd.DataFrame:
    """Each deployment's value of every key of `by`, exactly as `cost_by` allocates it: one
    row per deployment (`deployment_id`, `name`, then a column per key as `cost_by` names
    it), `__unallocated__` where it lacks the key. What a group of `cost_by` is made of, for
    a caller that names the deployments behind a group's figure (`dims check`)."""
    snap = as_snapshot(source)
    identity = identity_of(snap).reset_index(drop=True)
    out = identity[["deployment_id", "name"]].copy()
    for key in parse_keys(by):
        out[key] = _values(snap, key).to_numpy()
    return out


#: Its name at the package `dims._reports` (imported from here on first use, dims._lazy).
allocation_keys = parse_keys
