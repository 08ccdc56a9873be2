"""Where a deployment's routed parts go: one row per item, in the child tables' row lists.

`RowState` is shared by the careful reader (through the plans' routed steps) and the fast
reader: it holds the rows and what they need to know of the record being read.
"""

from __future__ import annotations

from typing import Any

from ._layout import ENV_PROP, RESOURCES_PROP, ItemTable, volume_sources
from ._rules import (
    Reject,
    RoutedFn,
    Row,
    container_quantities,
    describe,
    json_type,
    label_text,
    volume_source,
)


class RowState:
    """The rows of every table, and the record being read (its id, secrets, unknown fields)."""

    def __init__(self, table_names: tuple[str, ...]) -> None:
        self.rows: dict[str, list[Any]] = {name: [] for name in table_names}
        self.deployment_id: str | None = None
        #: len(secrets) of the record being read; None when it has no secrets array.
        self.secret_count: int | None = None
        #: Fields the spec does not name, by dotted path, of the record being read.
        self.unknown: dict[str, Any] = {}

    def begin(self, deployment_id: str) -> dict[str, Any]:
        """Start reading a record; returns its (new) unknown-fields dict."""
        self.deployment_id = deployment_id
        self.secret_count = None
        self.unknown = {}
        return self.unknown

    def item_reader(self, table: ItemTable) -> RoutedFn:
        table_name = table.name
        rows = self.rows[table_name]
        plan, width = table.plan, len(table.columns.names)
        is_secrets = table_name == "deployment_secrets"
        sources = volume_sources(plan.schema) if table_name == "deployment_volumes" else ()
        source_set = frozenset(sources)

        def read(value: Any, path: str, _row: Row) -> None:
            if type(value) is not list:
                raise Reject(path, f"expected array, got {json_type(value)}")
            read_item, unknown, deployment_id = plan.read, self.unknown, self.deployment_id
            for position, item in enumerate(value):
                if type(item) is not dict:
                    raise Reject(
                        f"{path}[{position}]",
                        f"expected object, got {describe(item, not plan.sensitive)}",
                    )
                row: Row = [None] * width
                row[0] = deployment_id
                row[1] = position
                read_item(item, f"{path}[{position}].", row, unknown)
                if sources and not source_set.isdisjoint(item):
                    present = {s: item[s] for s in sources if item.get(s) is not None}
                    if present:
                        row[-2], row[-1] = volume_source(present)
                rows.append(row)
            if is_secrets:
                self.secret_count = len(value)

        return read

    def container_reader(self, containers: ItemTable, env: ItemTable, kind: str) -> RoutedFn:
        table = containers
        rows, env_rows = self.rows[table.name], self.rows[env.name]
        width, env_width = len(table.columns.names), len(env.columns.names)
        name_i = table.columns.names.index("name")

        def read(value: Any, path: str, _row: Row) -> None:
            if type(value) is not list:
                raise Reject(path, f"expected array, got {json_type(value)}")
            for position, item in enumerate(value):
                item_path = f"{path}[{position}]"
                if type(item) is not dict:
                    raise Reject(item_path, f"expected object, got {describe(item, True)}")
                row: Row = [None] * width
                row[0], row[1], row[2] = self.deployment_id, kind, position
                table.plan.read(item, item_path + ".", row, self.unknown)
                resources = item.get(RESOURCES_PROP) or {}
                requests = resources.get("requests") or {}
                limits = resources.get("limits") or {}
                if type(requests) is dict and type(limits) is dict:
                    row[-4:] = container_quantities(requests, limits)
                rows.append(row)
                for env_position, entry in enumerate(item.get(ENV_PROP) or ()):
                    env_path = f"{item_path}.{ENV_PROP}[{env_position}]"
                    if type(entry) is not dict:
                        raise Reject(env_path, f"expected object, got {json_type(entry)}")
                    env_row: Row = [None] * env_width
                    env_row[:5] = (self.deployment_id, kind, position, row[name_i], env_position)
                    env.plan.read(entry, env_path + ".", env_row, self.unknown)
                    env_rows.append(env_row)

        return read

    def label_reader(self, kind: str) -> RoutedFn:
        rows = self.rows["deployment_labels"]

        def read(value: Any, path: str, _row: Row) -> None:
            if type(value) is not dict:
                raise Reject(path, f"expected object, got {describe(value, True)}")
            for key, item in value.items():
                rows.append((self.deployment_id, kind, key, label_text(item)))

        return read
