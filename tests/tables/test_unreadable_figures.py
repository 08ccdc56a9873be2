"""Resource figures no cluster runs (issue 35 item 2): a negative request, limit, scale,
storage or connection count, or one above 2^32, is an unreadable value, whichever lane reads
it and under either spelling: null in its column (never 0), kept with its value in
`unreadable_values_json`, counted, warned about, and left out of deployment_components'
derived totals (replicas included). Zero and 2^32 are figures; `-0` reads as 0."""

from __future__ import annotations

import json
import math
import warnings

import msgspec
import pyarrow as pa
import pytest

from dims import _spec as spec
from dims._errors import UnreadableQuantityWarning
from dims._pages import Page
from dims._tables import LARGEST_FIGURE, Flattener, figure_problem

AT_ID = "00000000-0000-4000-8000-0000000000{:02d}"
PREFIX = "source_config.resource_spec."
#: every numeric resource field, and the name the published service sends it under
FIELDS = spec.resource_numeric_fields()
PUBLISHED = {name: published for published, name in spec.original_names()["ResourceSpec"].items()}
BAD = [-1, -0.5, -(2**60), 2**32 + 1, 1e300, 2**70]
GOOD = [0, 0.0, 0.25, 2**32, 7]


def _record(n: int, resources: dict) -> dict:
    return {"id": AT_ID.format(n), "source_config": {"resource_spec": resources}}


def _tables(records: list[dict], raw: bool) -> tuple[dict[str, pa.Table], Flattener]:
    """Every table of `records`, read by the careful reader (parsed dicts) or by the fast
    lane (raw JSON text, as `--from-json` hands them over)."""
    flattener = Flattener()
    items = [msgspec.Raw(json.dumps(r).encode()) for r in records] if raw else records
    flattener.add_page(Page(items, source="test"))
    assert flattener.typed_records == (len(records) if raw else 0)  # that lane, not the other
    return flattener.take(), flattener


@pytest.mark.parametrize("raw", [False, True], ids=["careful", "fast lane"])
def test_every_figure_out_of_range_is_null_and_kept_under_its_path(raw):
    records, sent = [], {}
    for n, field in enumerate(FIELDS):
        value = BAD[n % len(BAD)]
        name = PUBLISHED.get(field, field) if n % 2 else field  # both spellings
        records.append(_record(n, {"cpu": 1, "memory_mb": 512, name: value}))
        sent[AT_ID.format(n)] = (field, value)
    tables, flattener = _tables(records, raw)
    rows = {row["id"]: row for row in tables["deployments"].to_pylist()}
    assert tables["rejected_records"].num_rows == 0  # a value, not a record, is refused
    for deployment_id, (field, value) in sent.items():
        row = rows[deployment_id]
        assert row[field] is None, (field, value)
        assert json.loads(row["unreadable_values_json"]) == {PREFIX + field: value}
        assert figure_problem(float(value)) is not None
        for other in ("cpu", "memory_mb"):
            if other != field:
                assert row[other] in (1.0, 512.0)  # the rest of the record is read as ever
    assert flattener.counts["unreadable_values"] == len(FIELDS)


@pytest.mark.parametrize("raw", [False, True], ids=["careful", "fast lane"])
def test_zero_and_the_bound_are_figures_and_minus_zero_reads_as_zero(raw):
    records = [_record(n, {f: GOOD[n] for f in FIELDS}) for n in range(len(GOOD))]
    records.append(_record(9, {f: -0.0 for f in FIELDS}))
    tables, flattener = _tables(records, raw)
    rows = tables["deployments"].to_pylist()
    assert flattener.counts["unreadable_values"] == 0
    for row, value in zip(rows, [*GOOD, 0.0], strict=True):
        assert row["unreadable_values_json"] is None
        for field in FIELDS:
            assert row[field] == float(value) and math.copysign(1.0, row[field]) == 1.0, field
    assert LARGEST_FIGURE == 2**32


@pytest.mark.parametrize("raw", [False, True], ids=["careful", "fast lane"])
def test_components_of_an_unreadable_figure_have_no_totals_and_no_guessed_replicas(raw):
    resources = {
        "cpu": -2, "memory_mb": 1024, "min_scale": -1, "max_scale": 3,
        "queue_cpu": 1, "queue_memory_mb": 256, "queue_max_scale": 1e300,
        "db_cpu": 1, "db_memory_mb": 512, "db_storage_gi": -20,
    }  # fmt: skip
    tables, _ = _tables([_record(1, resources)], raw)
    rows = {r["component"]: r for r in tables["deployment_components"].to_pylist()}
    main, queue, db = rows["main"], rows["queue"], rows["db"]
    assert main["cpu"] is None and main["replicas_min"] is None and main["replicas_max"] == 3.0
    assert main["cpu_total_min"] is main["cpu_total_max"] is main["memory_mb_total_min"] is None
    assert main["memory_mb_total_max"] == 3 * 1024.0  # known figure × known replicas
    assert queue["replicas_min"] == 1.0 and queue["replicas_max"] is None  # not "1 replica"
    assert queue["cpu_total_min"] == 1.0 and queue["cpu_total_max"] is None
    assert db["storage_gi"] is None and db["cpu_total_max"] == 1.0
    for row in rows.values():
        for name, value in row.items():
            assert not isinstance(value, float) or value >= 0, (row["component"], name)


def test_a_field_sent_twice_keeps_the_spec_name_and_reads_that_value_by_the_rule():
    """cache_cpu and redis_cpu differ: the spec's name wins (the other value goes to
    unknown_fields_json as before); the rule applies to the value kept."""
    published = PUBLISHED["cache_cpu"]
    tables, flattener = _tables([_record(1, {"cache_cpu": -1, published: 2})], raw=False)
    (row,) = tables["deployments"].to_pylist()
    assert row["cache_cpu"] is None
    assert json.loads(row["unreadable_values_json"]) == {PREFIX + "cache_cpu": -1}
    assert json.loads(row["unknown_fields_json"]) == {PREFIX + published: 2}
    assert flattener.counts["original_conflicts"] == 1


def test_the_export_warns_once_and_says_where_the_values_are():
    flattener = Flattener()
    flattener.add_page(Page([_record(1, {"cpu": -2, "db_max_connections": -5})], source="t"))
    flattener.take()
    with pytest.warns(UnreadableQuantityWarning) as caught:
        flattener.warn_of_findings()
    (found,) = [str(w.message) for w in caught]
    assert found.startswith("2 resource_spec figure(s)") and "unreadable_values_json" in found
    clean = Flattener()
    clean.add_page(Page([_record(1, {"cpu": 0})], source="t"))
    clean.take()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableQuantityWarning)
        clean.warn_of_findings()


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("requests", "cpu", "-1"),
        ("limits", "cpu", -0.5),
        ("requests", "memory", "-256Mi"),
        ("limits", "cpu", "1e300"),
        ("limits", "memory", "5Ei"),  # 5 EiB: above 2^32 MiB
    ],
)
def test_a_container_quantity_no_cluster_runs_is_unreadable_too(section, key, value):
    """Kubernetes' grammar takes a sign; its validation refuses a negative request or limit.
    Such a quantity, or one above 2^32 cores or MiB, is null with its reason, as text the
    grammar refuses is."""
    container = {"name": "s", "resources": {section: {key: value}}}
    resources = {"cpu": 1, "memory_mb": 512, "sidecars": [container]}
    for raw in (False, True):
        tables, flattener = _tables([_record(1, resources)], raw)
        (row,) = tables["deployment_containers"].to_pylist()
        column = {"requests": "request", "limits": "limit"}[section]
        column = f"cpu_{column}" if key == "cpu" else f"memory_{column}_mb"
        assert row[column] is None
        assert json.loads(row[f"resources_{section}_json"]) == {key: value}
        assert flattener.counts["unreadable_quantities"] == 1
