"""Property tests: records drawn from openapi.yaml's Deployment schema, through a real export.

(a) Any record valid by the spec flattens, and every scalar read back from the Parquet file
    equals the record's value: timestamps as the same instant, numbers as float64, strings
    exactly (any unicode). Fields the spec does not name come back in unknown_fields_json,
    and resource figures no cluster runs (negative, above 2^32) come back null with their
    value in unreadable_values_json, under their dotted path, and nowhere else.
(b) Any JSON that is not a valid record (a wrong type at a random path, or not an object at
    all) is rejected with a reason naming that path and kept in rejected_records: exported
    plus rejected always equals the input, so nothing is dropped silently.

The strategy comes from the spec itself (tests/spec_records.py: `$ref`s inlined from
`spec.document()`, the resolved schema turned into a strategy), so a field added to
openapi.yaml is generated here without touching this file; a JSON Schema validator on the
same resolved schema is the oracle of what "valid" means. Sizes are bounded (arrays,
free-form objects) to keep an example small; profiles in conftest.py set how many run.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker
from spec_records import (
    ANY_JSON,
    deployment_schema,
    in_years_1_to_9999,
    types_of,
    unique_ids,
    valid_records,
)

from dims import _spec as spec
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._tables import LARGEST_FIGURE, figure_paths, redact

DAY = datetime(2025, 6, 1, tzinfo=UTC).date()
AT = datetime(2025, 6, 1, 12, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_ITEMS = 2
MAX_FREEFORM_KEYS = 3
#: Child tables and the arrays (relative to the record) whose items they hold.
CHILD_ARRAYS = {
    "deployment_secrets": [("secrets",)],
    "deployment_secret_references": [("secret_references",)],
    "deployment_volumes": [("source_config", "resource_spec", "volumes")],
    "deployment_volume_mounts": [("source_config", "resource_spec", "volume_mounts")],
    "deployment_containers": [
        ("source_config", "resource_spec", "init_containers"),
        ("source_config", "resource_spec", "sidecars"),
    ],
}


# --- reading back -------------------------------------------------------------------------------


def read(out: Path, table: str):
    return pq.read_table(out / table / f"snapshot_date={DAY.isoformat()}" / "part-0.parquet")


def get(record: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(record, dict):
            return None
        record = record.get(step)
    return record


def micros(text: str) -> int:
    """The instant of an RFC 3339 string as microseconds since the epoch."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    delta = parsed - EPOCH  # aware arithmetic: no conversion that could leave year 1..9999
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def export(records: list[Any], out: Path):
    page = Page(records, source="hypothesis", first_index=0)
    return export_snapshot([page], out, snapshot_date=DAY, snapshot_at=AT)


#: Exports fsync every file; on tmpfs that is free, so examples run 10x faster there.
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


@contextlib.contextmanager
def scratch_dir() -> Iterator[Path]:
    """A fresh output folder per example, removed afterwards (examples run by hundreds)."""
    with tempfile.TemporaryDirectory(prefix="dims-prop-", dir=SCRATCH) as folder:
        yield Path(folder)


# --- (a) valid records ----------------------------------------------------------------------


@given(records=st.lists(valid_records(), min_size=1, max_size=4).filter(unique_ids))
def test_any_valid_record_reads_back_equal_from_parquet(records):
    """The core promise of the dataset: what the service said is what the file says."""
    with scratch_dir() as out:
        check_valid_records_read_back(records, out)


def check_valid_records_read_back(records: list[dict[str, Any]], out: Path) -> None:
    assert all(validator().is_valid(record) for record in records)  # the strategy is the spec
    result = export(records, out)
    assert result.rejected == 0, read(out, "rejected_records").to_pylist()
    assert result.rows["deployments"] == len(records)

    table = read(out, "deployments")
    for field in spec.deployment_scalar_fields():
        if field.kind == "datetime":
            table = table.set_column(
                table.schema.get_field_index(field.name),
                field.name,
                pc.cast(table[field.name], "int64"),  # instants, whatever the year
            )
    rows = {row["id"]: row for row in table.to_pylist()}
    for record in records:
        row = rows[record["id"]]
        unreadable = {}  # resource figures no cluster runs: null, their value kept aside
        for field in spec.deployment_scalar_fields():
            value = get(record, field.path)
            if value is None:
                want = None
            elif field.kind == "datetime":
                want = micros(value)
            elif field.kind == "number":
                want = float(value)
                if field.name in figure_paths() and not 0 <= want <= LARGEST_FIGURE:
                    unreadable[field.dotted], want = want, None
            else:
                want = value
            got = row[field.name]
            assert got == want and type(got) is type(want), (field.dotted, value, got)
        kept = row["unreadable_values_json"]
        assert (json.loads(kept) if kept else {}) == unreadable
        secrets = record.get("secrets")
        assert row["secret_count"] == (None if secrets is None else len(secrets))
        named = set(deployment_schema()["properties"])
        unknown = {k: v for k, v in record.items() if k not in named}
        stored = row["unknown_fields_json"]
        # json, not orjson: the text keeps integers beyond 64 bits exact, orjson would not
        assert (json.loads(stored) if stored else {}) == unknown

    for table_name, paths in CHILD_ARRAYS.items():
        expected = sum(len(get(r, path) or []) for r in records for path in paths)
        assert read(out, table_name).num_rows == expected, table_name


# --- (b) invalid JSON -------------------------------------------------------------------------

_WRONG_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=5),
    "integer": st.integers(),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "object": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    "array": st.lists(st.integers(), max_size=2),
}


def _not_a_date_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return True
    return False


@functools.cache
def schema_locations() -> tuple[tuple[tuple, dict[str, Any]], ...]:
    """Every typed place of the Deployment schema: (path, node), array items as index 0."""
    found: list[tuple[tuple, dict[str, Any]]] = []

    def walk(node: dict[str, Any], path: tuple) -> None:
        for option in node.get("anyOf", ()):
            walk(option, path)
        for key, child in node.get("properties", {}).items():
            found.append(((*path, key), child))
            walk(child, (*path, key))
        if "items" in node:
            found.append(((*path, 0), node["items"]))
            walk(node["items"], (*path, 0))

    walk(deployment_schema(), ())
    return tuple(found)


def _put(record: dict[str, Any], path: tuple, value: Any) -> None:
    """Set `value` at `path`, creating the (valid, empty) objects and arrays on the way."""
    parent: Any = record
    for step, following in zip(path, (*path[1:], None), strict=True):
        if following is None:
            if isinstance(parent, list) and not parent:
                parent.append(value)
            else:
                parent[step] = value
            return
        want = list if isinstance(following, int) else dict
        present = (
            parent[step]
            if isinstance(parent, list) and parent
            else (parent.get(step) if isinstance(parent, dict) else None)
        )
        if not isinstance(present, want):
            present = want()
            if isinstance(parent, list) and not parent:
                parent.append(present)
            else:
                parent[step] = present
        if isinstance(present, list) and not present:
            present.append({})  # an item on the way to `path`: all its fields are optional
        parent = present


def _wrong_value(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    allowed = types_of(node)
    if not allowed:  # a free-form value (any JSON): nothing is wrong there
        return st.nothing()
    if "number" in allowed:
        allowed = allowed | {"integer"}
    options = [strategy for kind, strategy in _WRONG_VALUES.items() if kind not in allowed]
    if node.get("format") == "date-time":
        options.append(st.text(max_size=12).filter(_not_a_date_time))
    return st.one_of(options)


def _dotted(path: tuple) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or "record"


@st.composite
def invalid_record(draw: st.DrawFn) -> tuple[Any, str]:
    """A valid record with one wrong type at a random place of the schema (created if the
    record lacks it), or a JSON value that is not an object; and the path that is wrong."""
    if draw(st.integers(0, 9)) == 0:
        return draw(ANY_JSON.filter(lambda v: not isinstance(v, dict))), "record"
    path, node = draw(st.sampled_from(schema_locations()))
    wrong = draw(_wrong_value(node))
    broken = copy.deepcopy(draw(valid_records()))
    _put(broken, path, wrong)
    return broken, _dotted(path)


@functools.cache
def validator() -> Draft202012Validator:
    """The spec's own verdict: JSON Schema types, date-times that parse, extra keys allowed
    at the top level (a newer service's fields are kept, not a fault of the record)."""
    formats = FormatChecker(formats=())
    formats.checks("date-time", raises=ValueError)(
        lambda text: not isinstance(text, str) or in_years_1_to_9999(datetime.fromisoformat(text))
    )
    schema = {**deployment_schema(), "additionalProperties": True}
    return Draft202012Validator(schema, format_checker=formats)


@given(
    good=st.lists(valid_records(), max_size=2),
    bad=st.lists(invalid_record(), min_size=1, max_size=3),
    data=st.data(),
)
def test_any_invalid_json_is_rejected_with_a_reason_and_counted(good, bad, data):
    """Nothing is dropped silently: every input is either a row or a rejected_records row,
    and each bad one is rejected for the path that is wrong, its JSON kept (redacted)."""
    for record, _ in bad:
        assert not validator().is_valid(record)  # the oracle agrees it breaks the spec
    mixed = [(r, None) for r in good] + bad
    order = data.draw(st.permutations(range(len(mixed))))
    records = [mixed[i][0] for i in order]
    wrong_path = {index: mixed[i][1] for index, i in enumerate(order) if mixed[i][1]}

    with scratch_dir() as out:
        result = export(records, out)
        rejected = {row["record_index"]: row for row in read(out, "rejected_records").to_pylist()}
    assert result.records == len(records)
    assert result.rows["deployments"] + result.rejected == len(records)
    assert result.rejected == len(bad)

    assert set(rejected) == set(wrong_path)
    for index, path in wrong_path.items():
        row = rejected[index]
        assert row["source"] == "hypothesis"
        reason_path, _, why = row["reason"].partition(": ")
        assert reason_path == path and why, (row["reason"], path)
        assert json.loads(row["record_json"]) == redact(records[index])


#: Items inside the parts of a container stored whole as JSON text (command, args, envFrom,
#: volumeMounts) are checked against the spec like every other field.
JSON_TEXT_ITEMS = [
    ("sidecars", "command", [None]),
    ("init_containers", "args", ["--ok", None]),
    ("sidecars", "envFrom", [42]),
    ("init_containers", "volumeMounts", [{"name": "data", "readOnly": "yes"}]),
    ("sidecars", "volumeMounts", [{"mountPath": 7}]),
]


@pytest.mark.parametrize(("container", "part", "value"), JSON_TEXT_ITEMS)
def test_items_of_json_text_parts_are_checked(container, part, value):
    """The spec types these items; a record breaking it is rejected like any other."""
    record = {
        "id": "6f1c2b8e-0000-4000-8000-000000000001",
        "source_config": {"resource_spec": {container: [{"name": "c", part: value}]}},
    }
    assert not validator().is_valid(record)
    with scratch_dir() as out:
        result = export([record], out)
    assert result.rejected == 1
