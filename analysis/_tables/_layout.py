"""Every table's columns and reading plans: the dataset's schema, derived from the spec."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from dims import _spec as spec
from dims._tables import _quantities as quantities

from ._arrays import column, int64_array
from ._careful import Columns, plan_for
from ._figures import UNREADABLE_VALUES_COLUMN, unreadable_at
from ._rules import ARROW_TYPES, NESTED, ORIGINAL, TIMESTAMP, Plan, RoutedFn

#: Bumped whenever a table or column changes meaning; written into every Parquet file.
#: 2: every table has `tenant_id` (the workspace), not only deployments.
#: 3: deployments have `unreadable_values_json`: a resource figure no cluster runs (negative,
#: or above 2^32) is null in its column and kept there (`_figures`); days of schema 2 hold
#: such figures in their columns, and the reports read them by the same rule.
SCHEMA_VERSION = 3
SCHEMA_VERSION_KEY = b"dims.schema_version"

#: Named arrays of objects -> the child table holding their items (the only hand routing).
LABEL_KINDS = {"labels": "label", "annotations": "annotation"}
CONTAINER_KINDS = {"init_containers": "init", "sidecars": "sidecar"}
ITEM_TABLES = {
    "secrets": "deployment_secrets",
    "secret_references": "deployment_secret_references",
    "image_pull_secrets": "deployment_image_pull_secrets",
    "volumes": "deployment_volumes",
    "volume_mounts": "deployment_volume_mounts",
}
#: Container property holding env entries (its own table) and holding resources.
ENV_PROP = "env"
RESOURCES_PROP = "resources"


@dataclass
class ItemTable:
    """A child table: one row per item of an array (or of several arrays)."""

    name: str
    columns: Columns
    plan: Plan


def snapshot_field() -> pa.Field:
    return pa.field("snapshot_at", TIMESTAMP)


def _tenant_column() -> str:
    """The deployment's workspace field (`tenant_id`): every other table repeats it."""
    names = [f.name for f in spec.deployment_scalar_fields() if f.path == ("tenant_id",)]
    if len(names) != 1:
        raise ValueError("openapi.yaml: the Deployment schema has no scalar `tenant_id`")
    return names[0]


#: The workspace column of every table: the deployment record's own field, repeated by its
#: child tables and set to the workspace fetched from in the other tables.
TENANT_COLUMN = _tenant_column()


def tenant_field() -> pa.Field:
    return pa.field(TENANT_COLUMN, pa.string())


def _deployment_columns() -> Columns:
    """The wide table: `id` first, then every spec scalar under its leaf name, then extras."""
    columns = Columns()
    fields = spec.deployment_scalar_fields()
    ordered = sorted(fields, key=lambda f: f.path != ("id",))  # stable: id first
    for f in ordered:
        columns.add(f.name, ARROW_TYPES[f.kind])
    columns.reserved = {f.name for f in ordered}
    return columns


class Handlers(Protocol):
    """What reads the routed parts of a deployment into their child tables (`_rows.py`)."""

    def item_reader(self, table: ItemTable) -> RoutedFn: ...

    def container_reader(self, containers: ItemTable, env: ItemTable, kind: str) -> RoutedFn: ...

    def label_reader(self, kind: str) -> RoutedFn: ...


def _item_table(prop_name: str, table: str) -> ItemTable:
    """A child table of one item per row: its deployment, position, then the item's fields."""
    ref = _find_array_ref(prop_name)
    cols = Columns()
    cols.add("deployment_id", pa.string())
    cols.add("position", pa.int64())
    checks = volume_sources(ref) if table == "deployment_volumes" else ()
    plan = plan_for(ref, cols, checks=checks)
    if checks:
        cols.add("source_type", pa.string())
        cols.add("source_json", pa.string())
    return ItemTable(table, cols, plan)


def _containers_table(container_ref: str) -> ItemTable:
    cols = Columns()
    for name, arrow_type in (
        ("deployment_id", pa.string()),
        ("kind", pa.string()),
        ("position", pa.int64()),
    ):
        cols.add(name, arrow_type)
    plan = plan_for(container_ref, cols, checks=(ENV_PROP,))
    for name, text_column, _key in QUANTITY_SOURCES:
        if text_column not in cols.names:
            raise ValueError(f"openapi.yaml: containers have no {text_column} to read {name}")
        cols.add(name, pa.float64())
    return ItemTable("deployment_containers", cols, plan)


#: A container's quantity columns, each with the JSON text column and key it is read from.
QUANTITY_SOURCES = (
    ("cpu_request", "resources_requests_json", "cpu"),
    ("cpu_limit", "resources_limits_json", "cpu"),
    ("memory_request_mb", "resources_requests_json", "memory"),
    ("memory_limit_mb", "resources_limits_json", "memory"),
)


def unreadable_quantities(containers: pa.Table) -> int:
    """Container quantities sent but not Kubernetes quantities, or none a cluster runs
    (`quantities.problem`): their column is null while their text, kept in the JSON column,
    holds a value."""
    found = 0
    for name, text_column, key in QUANTITY_SOURCES:
        unread = pc.and_(pc.is_null(containers[name]), pc.is_valid(containers[text_column]))
        for text in containers[text_column].filter(unread).to_pylist():
            sent = orjson.loads(text)
            found += type(sent) is dict and quantities.problem(sent.get(key), key) is not None
    return found


def _env_table(env_ref: str, include_env_values: bool) -> ItemTable:
    cols = Columns()
    for name, arrow_type in (
        ("deployment_id", pa.string()),
        ("container_kind", pa.string()),
        ("container_position", pa.int64()),
        ("container", pa.string()),
        ("position", pa.int64()),
    ):
        cols.add(name, arrow_type)
    plan = plan_for(env_ref, cols, include_passwords=include_env_values)
    return ItemTable("deployment_container_env", cols, plan)


class Layout:
    """Every table's columns and reading plans, for one include_env_values setting.

    Without `handlers` it only describes the tables (their schemas); with them its plans
    read records into the handlers' rows.
    """

    def __init__(self, include_env_values: bool, handlers: Handlers | None = None) -> None:
        # Child tables first: the deployment plan routes arrays to them.
        self.items: dict[str, ItemTable] = {
            table: _item_table(prop_name, table) for prop_name, table in ITEM_TABLES.items()
        }
        container_ref = _find_array_ref(next(iter(CONTAINER_KINDS)))
        self.containers = _containers_table(container_ref)
        self.env = _env_table(spec.ref_of(container_ref, ENV_PROP), include_env_values)
        for table in (*self.items.values(), self.containers, self.env):
            _refuse_originals(table)
        self._add_deployments(handlers)
        self.providers, self.provider_plan = _record_table("OAuthProvider")
        self.repositories, self.repository_plan = _record_table("Repository")

    def _add_deployments(self, handlers: Handlers | None) -> None:
        """The wide deployments table, its plan routing arrays to the child tables."""
        self.wide = _deployment_columns()
        self.deployment_plan = plan_for(
            "Deployment",
            self.wide,
            column_of=lambda _prefix, name: name,  # columns already made, by leaf name
            calls=self._routes(handlers),
        )
        if self.wide.reserved:
            raise ValueError(f"openapi.yaml: scalar fields not reached: {self.wide.reserved}")
        self.deployment_type_index = self.wide.add("deployment_type", pa.string())
        #: dotted path of a field the real service sends beyond the spec -> its column
        self.service_columns = {
            path: self.wide.add(column, pa.string())
            for path, column in spec.service_fields().items()
            if column != "deployment_type"
        }
        self.secret_count_index = self.wide.add("secret_count", pa.int64())
        self.unknown_index = self.wide.add("unknown_fields_json", pa.string())
        #: Dotted paths of the published spellings (`source_config.resource_spec.redis_cpu`):
        #: one is in a record's unknown fields only when it differed from the spec's name.
        self.original_paths = _original_paths(self.deployment_plan)

    def original_conflicts(self, deployments: pa.Table) -> int:
        """Deployments whose record sent a field under both its names, with different
        values (the spec's name was kept; the other is in `unknown_fields_json`)."""
        if not self.original_paths or not deployments.num_rows:
            return 0
        # A key of the JSON object: the quote after it is a delimiter, never inside a string.
        keys = "|".join(re.escape(path) for path in self.original_paths)
        found = pc.match_substring_regex(deployments["unknown_fields_json"], f'"(?:{keys})":')
        return int(pc.sum(found).as_py() or 0)

    def _routes(self, handlers: Handlers | None) -> dict[str, RoutedFn | None]:
        """Routed property -> the handler of its child table (None: schemas only)."""
        routed = (*ITEM_TABLES, *CONTAINER_KINDS, *LABEL_KINDS)
        if handlers is None:
            return dict.fromkeys(routed, None)
        calls: dict[str, RoutedFn | None] = {}
        calls.update({k: handlers.item_reader(self.items[t]) for k, t in ITEM_TABLES.items()})
        for prop, kind in CONTAINER_KINDS.items():
            calls[prop] = handlers.container_reader(self.containers, self.env, kind)
        calls.update({k: handlers.label_reader(kind) for k, kind in LABEL_KINDS.items()})
        return calls

    def schemas(self) -> dict[str, pa.Schema]:
        def with_snapshot(columns: Columns) -> pa.Schema:
            return columns.schema().append(tenant_field()).append(snapshot_field())

        unreadable = pa.field(UNREADABLE_VALUES_COLUMN, pa.string())
        out = {"deployments": self.wide.schema().append(unreadable).append(snapshot_field())}
        out["deployment_components"] = _components_schema()
        for table in self.items.values():
            out[table.name] = with_snapshot(table.columns)
        out[self.containers.name] = with_snapshot(self.containers.columns)
        out[self.env.name] = with_snapshot(self.env.columns)
        out["deployment_labels"] = pa.schema(
            [
                ("deployment_id", pa.string()),
                ("kind", pa.string()),
                ("key", pa.string()),
                ("value", pa.string()),
                tenant_field(),
                snapshot_field(),
            ]
        )
        out["oauth_providers"] = with_snapshot(self.providers)
        out["repositories"] = with_snapshot(self.repositories)
        out["rejected_records"] = pa.schema(
            [
                ("source", pa.string()),
                ("record_index", pa.int64()),
                ("reason", pa.string()),
                ("record_json", pa.string()),
                tenant_field(),
                snapshot_field(),
            ]
        )
        return out


def _original_paths(plan: Plan, prefix: str = "") -> tuple[str, ...]:
    """The dotted path of every published spelling (rules.ORIGINAL) in a plan's objects."""
    out: list[str] = []
    for key, (op, _kind, _index, _nullable, extra) in plan.steps.items():
        if op == ORIGINAL:
            out.append(prefix + key)
        elif op == NESTED:
            out.extend(_original_paths(extra, f"{prefix}{key}."))
    return tuple(out)


def _refuse_originals(table: ItemTable) -> None:
    """Published spellings are read in objects nested in a deployment only: the readers of
    array items keep no unknown fields of their own to put a differing value in."""
    if _original_paths(table.plan):
        raise ValueError(
            f"openapi.yaml: {table.plan.schema} ({table.name}): {spec.ORIGINAL_NAME_KEY} is "
            "read in objects nested in Deployment only, not in array items"
        )


def _find_array_ref(prop_name: str) -> str:
    """The item schema of the array property `prop_name`, wherever it sits under Deployment."""
    found = {
        prop.ref
        for name in _schemas_under("Deployment")
        for prop in spec.schema(name).properties.values()
        if prop.name == prop_name and prop.kind == "array" and prop.ref
    }
    if len(found) != 1:
        raise ValueError(
            f"openapi.yaml: expected one array {prop_name!r} of objects, found {found}"
        )
    return found.pop()


def _schemas_under(root: str) -> list[str]:
    out, todo = [], [root]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.append(name)
        todo.extend(p.ref for p in spec.schema(name).properties.values() if p.ref)
    return out


def volume_sources(volume_ref: str) -> tuple[str, ...]:
    """A volume's source properties: its free-form objects (configMap, secret, ...)."""
    return tuple(
        p.name for p in spec.schema(volume_ref).properties.values() if p.kind == "freeform"
    )


def _record_table(schema_name: str) -> tuple[Columns, Plan]:
    columns = Columns()
    plan = plan_for(schema_name, columns, enforce_required=True)
    columns.add("unknown_fields_json", pa.string())
    return columns, plan


def defaults(schema_name: str) -> dict[str, Any]:
    return {
        p.name: p.default
        for p in spec.schema(schema_name).properties.values()
        if p.default is not None
    }


# --- deployment_components, derived from the wide table ------------------------------------

_SCALE = ("min_scale", "max_scale")


def _component_measures() -> tuple[list[str], list[str]]:
    """(every measure in spec order, the per-replica ones that get totals).

    Per-replica measures are those every component has, scale excluded: cpu, cpu_limit,
    memory_mb, memory_limit_mb. Component-specific ones (db storage_gi, max_connections)
    are not multiplied by replicas.
    """
    by_component = spec.component_measures()
    measures: list[str] = []
    for fields_ in by_component.values():
        measures.extend(m for m in fields_ if m not in measures)
    shared = [m for m in measures if all(m in f for f in by_component.values())]
    return measures, [m for m in shared if m not in _SCALE]


def _components_schema() -> pa.Schema:
    measures, per_replica = _component_measures()
    names = ["deployment_id", "component"]
    types: list[pa.DataType] = [pa.string(), pa.string()]
    for m in (*measures, "replicas_min", "replicas_max"):
        names.append(m)
        types.append(pa.float64())
    for m in per_replica:
        for end in ("min", "max"):
            names.append(f"{m}_total_{end}")
            types.append(pa.float64())
    names += ["deployment_type", TENANT_COLUMN, "snapshot_at"]
    types += [pa.string(), pa.string(), TIMESTAMP]
    return pa.schema(list(zip(names, types, strict=True)))


def components_from(deployments: pa.Table) -> pa.Table:
    schema = _components_schema()
    measures, per_replica = _component_measures()
    n = deployments.num_rows
    nulls = pa.nulls(n, pa.float64())
    ones = column([1.0] * n, pa.float64())
    parts = []
    for component, fields_ in spec.component_measures().items():
        values = {
            m: deployments[fields_[m]].combine_chunks() if m in fields_ else nulls for m in measures
        }
        # One replica where the component has no scale fields or its scale is null: the
        # documented assumption the capacity reports share; none known where the scale
        # sent was unreadable (`_figures`): its totals are null too.
        for end in ("min", "max"):
            field = fields_.get(f"{end}_scale")
            replicas = pc.coalesce(values[f"{end}_scale"], ones)
            if field is not None:
                replicas = pc.if_else(unreadable_at(deployments, field), nulls, replicas)
            values[f"replicas_{end}"] = replicas
        for m in per_replica:
            values[f"{m}_total_min"] = pc.multiply(values[m], values["replicas_min"])
            values[f"{m}_total_max"] = pc.multiply(values[m], values["replicas_max"])
        values["deployment_id"] = deployments["id"].combine_chunks()
        values["component"] = column([component] * n, pa.string())
        values["deployment_type"] = deployments["deployment_type"].combine_chunks()
        values[TENANT_COLUMN] = deployments[TENANT_COLUMN].combine_chunks()
        values["snapshot_at"] = deployments["snapshot_at"].combine_chunks()
        parts.append(pa.table([values[name] for name in schema.names], schema=schema))
    if not parts:
        return schema.empty_table()
    # Each deployment's components together, in component order: the same rows in the same
    # order however the deployments were batched.
    by_deployment = np.arange(n * len(parts)).reshape(len(parts), n).T.ravel()
    return pa.concat_tables(parts).take(int64_array(by_deployment))


# --- the public schemas ------------------------------------------------------------------


def table_schemas(include_env_values: bool = False) -> dict[str, pa.Schema]:
    """Every table's explicit Arrow schema (the env table differs with include_env_values)."""
    return Layout(include_env_values).schemas()


#: The schemas of an export without env values: what readers, tests and docs rely on.
TABLE_SCHEMAS: dict[str, pa.Schema] = table_schemas()
TABLE_NAMES: tuple[str, ...] = tuple(TABLE_SCHEMAS)
