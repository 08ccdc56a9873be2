"""The compiled lane: decoded records read straight into Arrow buffers (`_gather.c`).

Why it exists: msgspec decodes a record into Structs in C (`_typed.py`); copying their values
into Python rows and the rows into Arrow buffers would be Python work per value, twice.
Here the plans are compiled into a program that `_gather.c` runs over the Structs,
appending each value to its column once.

What stays in Python is judgement, called from C with one value: a date-time not of the
common form (`rules.parse_datetime`), a free-form part's shape where no msgspec type checks
it, a container's quantities; JSON text is orjson's, called from C. These are the careful
reader's own rules, so the result is the same; `tests/tables/test_compiled_lane.py` holds it
to the careful reader's, table by table.

Where `gather` was not built (no C compiler at install), `Flattener` gives raw records to the
careful reader and says so once (`say_not_built`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
import orjson
import pyarrow as pa

from dims._compiled import left_out
from dims._errors import NotCompiledWarning
from dims._pages import Page

from . import _rules as t
from ._arrays import arrays_from_buffers, kinds_of
from ._layout import (
    CONTAINER_KINDS,
    ENV_PROP,
    ITEM_TABLES,
    LABEL_KINDS,
    RESOURCES_PROP,
    Layout,
    volume_sources,
)
from ._rules import Plan, compile_function
from ._typed import (
    OWN_TYPE,
    UNSET,
    Fallback,
    RecordDecoder,
    attributes,
    extra_attribute,
    extras,
    shape_type,
)

try:
    if left_out("gather"):  # DIMS_NO_C, for benchmarks/cmodules.py
        raise ImportError("_gather left out (DIMS_NO_C)")
    from . import _gather as gather
except ImportError:  # built by `pip install` (hatch_build.py); the careful reader works
    gather = None  # type: ignore[assignment]

#: The tables the compiled lane writes: the deployment and every table a record routes to.
GATHERED = (
    "deployments",
    *ITEM_TABLES.values(),
    "deployment_containers",
    "deployment_container_env",
    "deployment_labels",
)

# _gather.c's operations and the sources of an item row's leading columns (its enums).
SCALAR, DATETIME, NESTED, JSON, ITEMS, LABELS, EXTRA, SOURCES, ORIGINAL = range(9)
FROM_ID, FROM_POSITION, FROM_CONST, FROM_OUTER_POSITION, FROM_OUTER_COL = range(5)

#: JSON text with sorted keys, as bytes (_gather.c copies them as they are).
_json_bytes = functools.partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)

Op = tuple[Any, ...]


def row_fields(name: str, schema: pa.Schema) -> list[pa.Field]:
    """The columns a table's rows hold: all but the last two, given apart: snapshot_at, and
    before it a child table's tenant_id (from its deployment) or the deployments'
    unreadable_values_json (from their figures, once a batch is read)."""
    return list(schema)[:-2]


class _Program:
    """The levels (Struct type, ops) of one set of Structs, strict or lenient."""

    def __init__(
        self,
        layout: Layout,
        types: Mapping[int, Any],
        tables: Mapping[str, int],
        rules: _Rules,
        levels: list[tuple[Any, list[Op]]],
    ) -> None:
        self._layout, self._types, self._tables, self._rules = layout, types, tables, rules
        self._levels = levels
        self.root = self._level(layout.deployment_plan, "deployments", path="")

    def _level(
        self, plan: Plan, table: str, *, path: str, typed: frozenset[str] = frozenset()
    ) -> int:
        """A new level reading `plan`'s Struct into `table`'s row; its index."""
        index = len(self._levels)
        ops: list[Op] = []
        self._levels.append((self._types[id(plan)], ops))
        ops += self._ops(plan, table, path, typed)
        return index

    def _ops(self, plan: Plan, table: str, path: str, typed: frozenset[str]) -> list[Op]:
        """The operations reading one plan's Struct into its table's row."""
        at = self._tables[table]
        names = attributes(plan)
        ops: list[Op] = []
        for key, step in plan.steps.items():
            ops += self._step_ops(key, names[key], step, (table, at, path, typed))
        layout = self._layout
        for extra_name in extras(plan):
            service = layout.service_columns.get(path + extra_name, -1)
            own = int((plan.schema, extra_name) == OWN_TYPE)
            ops.append((EXTRA, extra_attribute(extra_name), path + extra_name, own, service))
        return ops

    def _step_ops(
        self, key: str, name: str, step: t.Step, where: tuple[str, int, str, frozenset[str]]
    ) -> list[Op]:
        """One step's operations; `where`: (table, its index, dotted path, typed parts)."""
        op, kind, index, nullable, extra = step
        table, at, path, typed = where
        if op in (t.NUMBER, t.TEXT, t.BOOLEAN) or (op == t.OTHER_SCALAR and kind != "datetime"):
            return [(SCALAR, name, at, index)]
        if op == t.PASSWORD:
            return [] if index is None else [(SCALAR, name, at, index)]
        if op == t.OTHER_SCALAR:
            return [(DATETIME, name, at, index, t.parse_datetime)]
        if op == t.NESTED:
            inner = self._level(extra, table, path=f"{path}{key}.", typed=typed)
            return [(NESTED, name, inner)]
        if op == t.CALL:
            return [self._routed(key, name)]
        if op == t.ORIGINAL:  # planned last: the spec's name is in the row by then
            return [(ORIGINAL, name, at, index, path + key)]
        if key in typed:
            return []
        col = index if op == t.JSON and index is not None else -1  # JSON text, or only checked
        return self._free_form(name, at, col, nullable, extra)

    def _free_form(
        self, name: str, at: int, col: int, nullable: bool, shape: tuple[Any, bool, bool]
    ) -> list[Op]:
        """A free-form part stored as JSON text (`col`), or only checked (-1)."""
        checked = shape_type(shape)  # None: the careful check judges what the test fails
        if checked is None or (checked is Any and not nullable):  # (null refused here)
            return [(JSON, name, at, col, self._rules.json(shape, col >= 0), int(nullable))]
        if col >= 0:  # the decode checked its shape, and null only where the spec allows it
            return [(JSON, name, at, col, _json_bytes, int(nullable))]
        return []

    def _routed(self, key: str, name: str) -> Op:
        """A routed array or object: its child table's operation."""
        layout = self._layout
        if key in LABEL_KINDS:
            return (LABELS, name, self._tables["deployment_labels"], LABEL_KINDS[key], _json_bytes)
        if key in CONTAINER_KINDS:
            return self._containers(name, CONTAINER_KINDS[key])
        table = layout.items[ITEM_TABLES[key]]
        width, at = len(table.columns.names), self._tables[table.name]
        level = self._level(table.plan, table.name, path="")
        if table.name == "deployment_volumes":  # the one source a volume names, as JSON
            # (by the spec's names, which _gather.c also finds the Struct's fields by)
            sources = volume_sources(table.plan.schema)
            self._levels[level][1].append((SOURCES, sources, at, width - 2, width - 1))
        count = layout.secret_count_index if table.name == "deployment_secrets" else -1
        prefix = ((0, FROM_ID, None), (1, FROM_POSITION, None))
        return (ITEMS, name, at, level, prefix, None, (), count)

    def _containers(self, name: str, kind: str) -> Op:
        """Init containers or sidecars: their rows, quantities and env entries."""
        table, env = self._layout.containers, self._layout.env
        width = len(table.columns.names)
        level = self._level(table.plan, table.name, path="", typed=frozenset({ENV_PROP}))
        env_level = self._level(env.plan, env.name, path="")
        names = attributes(table.plan)
        env_prefix = (
            (0, FROM_ID, None),
            (1, FROM_CONST, kind),
            (2, FROM_OUTER_POSITION, None),
            (3, FROM_OUTER_COL, table.columns.names.index("name")),
            (4, FROM_POSITION, None),
        )
        # after every other op of the container: its name is in its row by then
        self._levels[level][1].append(
            (ITEMS, names[ENV_PROP], self._tables[env.name], env_level, env_prefix, None, (), -1)
        )
        prefix = ((0, FROM_ID, None), (1, FROM_CONST, kind), (2, FROM_POSITION, None))
        quantities = self._rules.quantities(names[RESOURCES_PROP])
        post_cols = tuple(range(width - 4, width))
        return (ITEMS, name, self._tables[table.name], level, prefix, quantities, post_cols, -1)


class _Rules:
    """The Python rules the program calls, generated from the plans (the careful reader's rules)."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {
            "UNSET": UNSET,
            "_json": _json_bytes,
            "_shape": t.check_shape,
            "_quantities": t.container_quantities,
        }

    def _name(self, value: Any) -> str:
        name = f"_v{len(self.names)}"
        self.names[name] = value
        return name

    def json(self, shape: tuple[Any, bool, bool], store: bool) -> Callable[[Any], Any]:
        """A free-form part (never null here): its JSON text (`store`; else None) once its
        shape is checked, the careful check running only where the inline test fails."""
        prop, must_object, _hide = shape
        test = t.shape_test(shape) or "False"
        source = [
            "def read(v):",
            f"    if not ({test}):",
            f"        _shape(v, {self._name(prop)}, {must_object!r}, '', False)",
            f"    return {'_json(v)' if store else 'None'}",
        ]
        return compile_function(source, f"gathered rule {prop.name}", self.names)  # type: ignore[no-any-return]

    def quantities(self, resources: str) -> Callable[[Any], Any]:
        source = [
            "def read(o):",
            f"    r = o.{resources}",
            "    if r is None:",
            "        return None",
            "    return _quantities(r.requests or {}, r.limits or {})",
        ]
        return compile_function(source, "gathered rule quantities", self.names)  # type: ignore[no-any-return]


class GatheredReader:
    """Reads raw deployment records into the column buffers of `GATHERED`'s tables.

    `read` raises one of `typed.FALLBACK_ERRORS` (or the careful checks' `Reject`) for a
    record the careful reader must read, every table left as it was before the record.
    """

    def __init__(self, layout: Layout, schemas: Mapping[str, pa.Schema]) -> None:
        self._decoder = RecordDecoder(layout)
        self.fields = {name: row_fields(name, schemas[name]) for name in GATHERED}
        kinds = []
        for name in GATHERED:
            letters = kinds_of(self.fields[name])
            if letters is None:
                raise TypeError(f"{name}: a column type gather.c does not lay out")
            kinds.append(letters)
        tables = {name: n for n, name in enumerate(GATHERED)}
        rules = _Rules()
        levels: list[tuple[Any, list[Op]]] = []
        roots = tuple(
            _Program(layout, types, tables, rules, levels).root
            for types in self._decoder.struct_types
        )
        self._gatherer = gather.Gatherer(
            kinds,
            levels,
            roots,
            tables["deployments"],
            layout.unknown_index,
            layout.deployment_type_index,
            _json_bytes,
            Fallback,
            UNSET,
            attributes(layout.deployment_plan)["id"],
            msgspec.Raw,
        )

    def read_many(self, page: Page, start: int) -> tuple[int, BaseException | None]:
        """The page's records from `start` on, in one call into C, while they are raw and
        the strict Structs take them: (where it stopped, why). None at the end or at a
        parsed record; else the error that gave record `stop` back (`read_given_back`)."""
        tags = page.tags if page.deployment_type is None else None
        return self._gatherer.read_many(
            page.records, start, self._decoder.strict, page.deployment_type, tags
        )

    def read_given_back(self, raw: msgspec.Raw, refused: BaseException, page: Page) -> None:
        """The record `read_many` stopped at, when the strict Structs refused a field the
        spec does not name; raises (`refused` itself, for anything else) when the careful
        reader must read it."""
        if not isinstance(refused, Exception):
            raise refused  # KeyboardInterrupt and the like: not the record's doing
        unknown: dict[str, Any] = {}
        record = self._decoder.lenient(raw, refused, unknown)
        if record.id is None:
            raise Fallback  # the careful reader rejects it: "id: missing" or "id: null"
        self._gatherer.read(record, record.id, unknown, page.listed_type(record.id))

    def rows(self) -> int:
        """Deployments held (every other table's rows come from them)."""
        rows: int = self._gatherer.rows(0)
        return rows

    def held(self) -> list[int]:
        """Rows held of each of GATHERED's tables, in its order."""
        rows = self._gatherer.rows
        return [rows(n) for n in range(len(GATHERED))]

    def take(self) -> dict[str, list[pa.Array]]:
        """Every gathered table's arrays (row columns, `row_fields`); empties them."""
        out = {}
        for n, name in enumerate(GATHERED):
            rows, buffers = self._gatherer.take(n)
            out[name] = arrays_from_buffers(rows, buffers, self.fields[name])
        return out


def available() -> bool:
    """Whether the compiled lane was built (hatch_build.py)."""
    return gather is not None


@functools.cache
def say_not_built() -> None:
    """Once per process, where the compiled lane was not built: which module is missing,
    what the export does instead and what it costs, so a slow export says why."""
    warnings.warn(
        NotCompiledWarning(
            "dims' C module _gather was not built at install (no C compiler found): every "
            "record is read by the careful reader: the same tables, read about three times more "
            "slowly (docs/benchmarks.md); reinstall dims where a C compiler is found"
        ),
        stacklevel=3,
    )
