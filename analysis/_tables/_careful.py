"""The careful reader: plans compiled from the spec into straight-line Python.

It reads parsed records (dicts), checks every field and gives every reject its reason: the
reference the compiled lane (`_gathered.py`) must agree with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import pyarrow as pa

from dims import _spec as spec
from dims._secrets import REDACTED

from ._rules import (
    ARROW_TYPES,
    BOOLEAN,
    CALL,
    CHECK,
    EXACT_INT,
    EXPECTED,
    JSON,
    NESTED,
    NUMBER,
    ORIGINAL,
    OTHER_SCALAR,
    PASSWORD,
    SCALAR_OPS,
    TEXT,
    Plan,
    ReadFn,
    Reject,
    RoutedFn,
    Row,
    Step,
    Unknown,
    check_shape,
    compile_function,
    convert,
    describe,
    has_own_password,
    is_nullable,
    is_password,
    json_type,
    must_be_object,
    shape_test,
    snake_case,
    to_json_text,
)


def _read_one(key: str, value: Any, plan: Plan, path: str, row: Row, unknown: Unknown) -> None:
    """Read one property of an object (the careful path: every case, every reason)."""
    step = plan.steps.get(key)
    if step is None:
        unknown[path + key] = REDACTED if plan.sensitive else value
        return
    if value is None:
        if step[3]:
            return
        raise Reject(path + key, f"expected {EXPECTED.get(step[1], step[1])}, got null")
    read = _CAREFUL.get(step[0])
    if read is None or not read(key, value, step, plan, path, row, unknown):
        # A scalar of another kind, or of the wrong type: converted, or rejected with why.
        row[cast(int, step[2])] = convert(value, step[1], path + key, not plan.sensitive)


# Each careful step returns True when it has read the value, False to let `convert` decide.
_CarefulStep = Callable[[str, Any, Step, Plan, str, Row, Unknown], bool]


def _number(key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, _u: Unknown) -> bool:
    if type(value) is float:
        row[cast(int, step[2])] = value
        return True
    if type(value) is int and -EXACT_INT <= value <= EXACT_INT:
        # exact as a float; stored as one, so that the row's layout in C takes it
        row[cast(int, step[2])] = float(value)
        return True
    return False


def _text(key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, _u: Unknown) -> bool:
    if type(value) is str:
        row[cast(int, step[2])] = value
        return True
    return False


def _boolean(
    key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, _u: Unknown
) -> bool:
    if type(value) is bool:
        row[cast(int, step[2])] = value
        return True
    return False


def _nested(key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, u: Unknown) -> bool:
    if type(value) is not dict:
        raise Reject(path + key, f"expected object, got {describe(value, False)}")
    step[4].read(value, f"{path}{key}.", row, u)
    return True


def _call(key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, _u: Unknown) -> bool:
    step[4](value, path + key, row)
    return True


def _password(
    key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, _u: Unknown
) -> bool:
    if type(value) is not str:
        raise Reject(path + key, f"expected string, got {json_type(value)}")
    if step[2] is not None:
        row[step[2]] = value
    return True


def _shaped(key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, _u: Unknown) -> bool:
    prop, must_object, hide = step[4]
    check_shape(value, prop, must_object, path + key, not (plan.sensitive or hide))
    if step[0] == JSON:
        row[cast(int, step[2])] = to_json_text(value)
    return True


def _original(
    key: str, value: Any, step: Step, plan: Plan, path: str, row: Row, unknown: Unknown
) -> bool:
    index = cast(int, step[2])
    converted = convert(value, step[1], path + key, not plan.sensitive)
    if row[index] is None:
        row[index] = converted
    elif row[index] != converted:  # the spec's name wins; the other value is not lost
        unknown[path + key] = converted
    return True


_CAREFUL: dict[int, _CarefulStep] = {
    NUMBER: _number,
    TEXT: _text,
    BOOLEAN: _boolean,
    NESTED: _nested,
    CALL: _call,
    PASSWORD: _password,
    JSON: _shaped,
    CHECK: _shaped,
    ORIGINAL: _original,
}


def _compile_reader(plan: Plan) -> ReadFn:
    """The plan as straight-line Python: the hot loop of every export.

    One generated function per object schema reads each property the spec names with
    `obj.get` and stores it when its type is the expected one (a type test and a store);
    anything else (null where null is not allowed, a wrong type, a datetime, a JSON column)
    goes to `_read_one`, the careful path, which converts or rejects with a reason.
    Unknown keys are found with one set test. Properties are read in spec order, so when a
    record has several problems the reason names the first in spec order.
    """
    names: dict[str, Any] = {
        "_KNOWN": frozenset(plan.steps),
        "_STEPS": plan.steps,
        "_PLAN": plan,
        "_one": _read_one,
        "Reject": Reject,
        "_E": EXACT_INT,
        "_json": to_json_text,
        "REDACTED": REDACTED,
    }
    lines = [
        "def read(obj, path, row, unknown):",
        "    if not _KNOWN.issuperset(obj):",
        "        for key in obj:",
        "            if key not in _STEPS:",
        f"                unknown[path + key] = {'REDACTED' if plan.sensitive else 'obj[key]'}",
        "    get = obj.get",
    ]
    for n, (key, step) in enumerate(plan.steps.items()):
        lines += _step_lines(n, key, step, names)
    for key in plan.required:
        lines += [
            f"    if {key!r} not in obj:",
            f"        raise Reject(path + {key!r}, 'missing')",
        ]
    read: ReadFn = compile_function(lines, f"careful reader {plan.schema}", names)
    return read


def _step_lines(n: int, key: str, step: Step, names: dict[str, Any]) -> list[str]:
    """One property's lines: the expected type stored at once, anything else (null where
    null is not allowed, a wrong type, a datetime, a JSON column) to the careful path."""
    op, _kind, index, nullable, extra = step
    k = repr(key)
    careful = f"_one({k}, v, _PLAN, path, row, unknown)"
    other = "v is not None" if nullable else f"v is not None or {k} in obj"
    fits = shape_test(extra) if op in (JSON, CHECK) else None
    lines = [f"    v = get({k})"]
    if op == NUMBER:
        lines += [
            "    if type(v) is float:",
            f"        row[{index}] = v",
            "    elif type(v) is int and -_E <= v <= _E:",  # exact as a float (C lays it out)
            f"        row[{index}] = float(v)",
        ]
    elif op in (TEXT, BOOLEAN):
        lines += [
            f"    if type(v) is {'str' if op == TEXT else 'bool'}:",
            f"        row[{index}] = v",
        ]
    elif op == NESTED:
        names[f"_sub{n}"] = extra
        lines += [
            "    if type(v) is dict:",
            f"        _sub{n}.read(v, path + {key + '.'!r}, row, unknown)",
        ]
    elif op == CALL:
        names[f"_call{n}"] = extra
        lines += ["    if v is not None:", f"        _call{n}(v, path + {k}, row)"]
    elif op in (JSON, CHECK) and fits is not None:
        store = f"row[{index}] = _json(v)" if op == JSON else "pass"
        lines += [f"    if {fits}:", f"        {store}"]
    elif op == ORIGINAL:  # rare: read on the careful path, after the spec's name
        return [*lines, f"    if {other}:", f"        {careful}"]
    else:
        return [*lines, f"    if {other}:", f"        {careful}"]
    return [*lines, f"    elif {other}:", f"        {careful}"]


@dataclass
class Columns:
    """Column names and types of a table under construction, with name -> index."""

    names: list[str] = field(default_factory=list)
    types: list[pa.DataType] = field(default_factory=list)
    #: Columns placed in advance (the wide table's order) that a plan may claim once.
    reserved: set[str] = field(default_factory=set)

    def add(self, name: str, arrow_type: pa.DataType) -> int:
        if name in self.reserved:
            self.reserved.discard(name)
            index = self.names.index(name)
            if self.types[index] != arrow_type:
                raise ValueError(f"openapi.yaml: column {name!r} changes type")
            return index
        if name in self.names:
            raise ValueError(f"openapi.yaml: column {name!r} would appear twice")
        self.names.append(name)
        self.types.append(arrow_type)
        return len(self.names) - 1

    def schema(self) -> pa.Schema:
        return pa.schema(list(zip(self.names, self.types, strict=True)))


def plan_for(
    schema_name: str,
    columns: Columns,
    *,
    column_of: Callable[[str, str], str] = lambda prefix, name: prefix + snake_case(name),
    prefix: str = "",
    calls: Mapping[str, RoutedFn | None] | None = None,
    checks: Iterable[str] = (),
    include_passwords: bool = False,
    enforce_required: bool = False,
) -> Plan:
    """Compile the reading plan of an object schema, adding its columns to `columns`.

    Scalars get typed columns; arrays and free-form values `<name>_json` text columns;
    nested objects are expanded with their name as a column prefix; `calls` routes a
    property to a handler (a child table); `checks` are validated but stored by the caller.
    """
    options = _PlanOptions(
        column_of, dict(calls or {}), frozenset(checks), include_passwords, enforce_required
    )
    return _plan(schema_name, columns, prefix, options)


@dataclass(frozen=True)
class _PlanOptions:
    """What `plan_for` was asked, the same for every nested object of the schema."""

    column_of: Callable[[str, str], str]
    calls: Mapping[str, RoutedFn | None]
    checks: frozenset[str]
    include_passwords: bool
    enforce_required: bool


def _plan(schema_name: str, columns: Columns, prefix: str, options: _PlanOptions) -> Plan:
    plan = Plan(schema=schema_name, sensitive=has_own_password(schema_name))
    deferred_passwords: list[str] = []
    for prop in spec.schema(schema_name).properties.values():
        if prop.name not in options.calls and is_password(schema_name, prop.name):
            deferred_passwords.append(prop.name)
        else:
            plan.steps[prop.name] = _step(schema_name, prop, columns, prefix, options)
    # Password columns (env values, with the flag) go last, away from the usual columns.
    for name in deferred_passwords:
        column = options.column_of(prefix, name)
        stored = columns.add(column, pa.string()) if options.include_passwords else None
        plan.steps[name] = (PASSWORD, "string", stored, is_nullable(schema_name, name), None)
    _plan_originals(schema_name, plan)
    if options.enforce_required:
        plan.required = tuple(
            p.name for p in spec.schema(schema_name).properties.values() if p.required
        )
    plan.read = _compile_reader(plan)
    return plan


#: Kinds whose decoded value (in the compiled lane's Structs) is the value the column holds,
#: so that the two spellings of a property can be compared alike by every reader.
_ORIGINAL_KINDS = frozenset({"number", "integer", "string", "uuid", "boolean"})


def _plan_originals(schema_name: str, plan: Plan) -> None:
    """A step for each property's published spelling (`x-dims-original-name`), after all
    the others: it fills the same column as the spec's name."""
    for prop in spec.schema(schema_name).properties.values():
        if prop.original is None:
            continue
        op, kind, index, nullable, _extra = plan.steps[prop.name]
        if index is None or kind not in _ORIGINAL_KINDS or op in (CALL, PASSWORD):
            raise ValueError(
                f"openapi.yaml: {schema_name}.{prop.name}: {spec.ORIGINAL_NAME_KEY} is read "
                "for scalar columns only (number, integer, string, boolean)"
            )
        plan.steps[prop.original] = (ORIGINAL, kind, index, nullable, prop.name)


def _step(
    schema_name: str, prop: spec.Prop, columns: Columns, prefix: str, options: _PlanOptions
) -> Step:
    """How one property is read: its op, kind, column, nullability and what the op needs."""
    name, nullable = prop.name, is_nullable(schema_name, prop.name)
    if name in options.calls:
        return (CALL, prop.kind, None, nullable, options.calls[name])
    if prop.kind in ARROW_TYPES:
        index = columns.add(options.column_of(prefix, name), ARROW_TYPES[prop.kind])
        return (SCALAR_OPS.get(prop.kind, OTHER_SCALAR), prop.kind, index, nullable, None)
    if prop.kind == "object" and prop.ref:
        sub = _plan(prop.ref, columns, f"{prefix}{snake_case(name)}_", options)
        return (NESTED, "object", None, nullable, sub)
    # Items that hold secret values (env entries) are never quoted in a reason.
    hide = bool(prop.ref) and has_own_password(prop.ref)
    shape = (prop, must_be_object(schema_name, name), hide)
    if name in options.checks:
        return (CHECK, prop.kind, None, nullable, shape)
    index = columns.add(f"{prefix}{snake_case(name)}_json", pa.string())
    return (JSON, prop.kind, index, nullable, shape)
