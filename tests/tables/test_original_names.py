"""The published service's own field names (`redis_cpu`, `langgraph_config_path`) are read
into the spec's columns (`cache_cpu`, `graph_config_path`) by every reader: the compiled
lane and the careful reader, and by the generated client's models.

openapi.yaml declares each spelling once (`x-dims-original-name`); nothing here names the
pairs by hand but the records written out as the service sends them.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from test_compiled_lane import AT, assert_same_tables, flatten_both

from dims import _spec as spec
from dims._pages import Page
from dims._tables import Flattener, OriginalNameConflictWarning
from dims.sandbox import fleet_dump_bytes, generate_fleet
from dims_client.models import Deployment

RESOURCE_PATH = "source_config.resource_spec."


def _resource_spec(record: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = record["source_config"]["resource_spec"]
    return found


def _published_record() -> dict[str, Any]:
    """A fleet record as the published service spells it, with every original name set."""
    fleet = generate_fleet(40, seed=11, names="original")
    return next(
        r
        for r in fleet.deployments
        if (r.get("source_config") or {}).get("resource_spec") and "redis_cpu" in _resource_spec(r)
    )


def test_the_spec_declares_each_original_name_once():
    assert spec.original_names() == {
        "ResourceSpec": {
            "redis_cpu": "cache_cpu",
            "redis_cpu_limit": "cache_cpu_limit",
            "redis_memory_mb": "cache_memory_mb",
            "redis_memory_limit_mb": "cache_memory_limit_mb",
        },
        "SourceRevisionConfig": {"langgraph_config_path": "graph_config_path"},
    }


@pytest.mark.parametrize("names", ["original", "mixed"])
def test_a_fleet_in_the_services_names_reads_as_the_same_fleet_in_the_specs(names):
    spec_fleet = generate_fleet(600, seed=5, real_shaped=True)
    published = generate_fleet(600, seed=5, real_shaped=True, names=names)
    assert published.deployments != spec_fleet.deployments  # the spelling really differs
    typed, careful, flattener = flatten_both(fleet_dump_bytes(published), deployment_type=None)
    assert_same_tables(typed, careful)
    assert flattener.typed_records == 600  # the service's names never cost the fast path
    assert flattener.counts["original_conflicts"] == 0
    reference, _, _ = flatten_both(fleet_dump_bytes(spec_fleet), deployment_type=None)
    assert_same_tables(typed, reference)  # every table, every value: the same fleet
    rows = typed["deployments"].to_pylist()
    assert sum(r["cache_cpu"] is not None for r in rows) > 500
    assert all(r["graph_config_path"] for r in rows)
    for row in rows:  # read, so not unknown
        unknown = row["unknown_fields_json"] or ""
        assert "redis_" not in unknown and "langgraph" not in unknown


def test_the_published_fleet_sends_integers_where_its_schema_has_them():
    record = _published_record()
    resources = _resource_spec(record)
    assert type(resources["memory_mb"]) is int and type(resources["max_scale"]) is int
    assert type(resources["db_storage_gi"]) is int and type(resources["redis_memory_mb"]) is int
    assert "cache_cpu" not in resources
    assert "graph_config_path" not in record["source_revision_config"]


def _read_both(record: dict[str, Any]) -> tuple[dict[str, Any], Flattener]:
    typed, careful, flattener = flatten_both(orjson.dumps([record]))
    assert_same_tables(typed, careful)
    assert flattener.typed_records == 1
    rows: list[dict[str, Any]] = typed["deployments"].to_pylist()
    return rows[0], flattener


def test_both_spellings_with_different_values_keep_the_specs_and_the_other_aside():
    record = _published_record()
    resources = _resource_spec(record)
    resources["cache_cpu"] = 3.0  # the spec's name beside the service's, differing
    resources["cache_memory_mb"] = resources["redis_memory_mb"]  # the same value: no conflict
    record["source_revision_config"]["graph_config_path"] = "other.json"
    sent = record["source_revision_config"]["langgraph_config_path"]
    row, flattener = _read_both(record)
    assert row["cache_cpu"] == 3.0
    assert row["cache_memory_mb"] == resources["redis_memory_mb"]
    assert row["graph_config_path"] == "other.json"
    assert orjson.loads(row["unknown_fields_json"]) == {
        RESOURCE_PATH + "redis_cpu": float(resources["redis_cpu"]),
        "source_revision_config.langgraph_config_path": sent,
    }
    assert flattener.counts["original_conflicts"] == 1  # deployments, not fields
    with pytest.warns(OriginalNameConflictWarning, match=r"^1 deployment\(s\) sent a field"):
        flattener.warn_of_conflicts()


def test_a_null_spec_name_does_not_hide_the_services_value():
    record = _published_record()
    resources = _resource_spec(record)
    resources["cache_cpu"] = None
    resources["redis_cpu_limit"] = None  # a null original leaves the column as it was
    resources["cache_cpu_limit"] = 0.75
    row, flattener = _read_both(record)
    assert row["cache_cpu"] == float(resources["redis_cpu"])
    assert row["cache_cpu_limit"] == 0.75
    assert row["unknown_fields_json"] is None or "redis" not in row["unknown_fields_json"]
    assert flattener.counts["original_conflicts"] == 0


def test_an_original_of_the_wrong_type_is_rejected_under_its_own_name():
    record = _published_record()
    _resource_spec(record)["redis_memory_mb"] = "lots"
    flattener = Flattener(snapshot_at=AT)
    flattener.add_page(Page([record], source="test"))
    rejected = flattener.take()["rejected_records"].to_pylist()
    assert [r["reason"] for r in rejected] == [
        f"{RESOURCE_PATH}redis_memory_mb: expected number, got string 'lots'"
    ]


def test_a_raw_record_with_a_wrong_original_falls_back_to_the_same_reason():
    record = _published_record()
    _resource_spec(record)["redis_cpu"] = [1]
    typed, careful, _ = flatten_both(orjson.dumps([record]))
    assert_same_tables(typed, careful)
    assert typed["deployments"].num_rows == 0
    (reason,) = typed["rejected_records"]["reason"].to_pylist()
    assert reason == f"{RESOURCE_PATH}redis_cpu: expected number, got array"


def test_the_generated_models_read_either_spelling():
    record = _published_record()
    model = Deployment.from_dict(copy.deepcopy(record))
    resources = model.source_config.resource_spec  # type: ignore[union-attr]
    assert resources.cache_cpu == _resource_spec(record)["redis_cpu"]  # type: ignore[union-attr]
    assert resources.cache_memory_limit_mb == _resource_spec(record)["redis_memory_limit_mb"]  # type: ignore[union-attr]
    assert "redis_cpu" not in resources.additional_properties  # type: ignore[union-attr]
    revision = model.source_revision_config
    assert revision.graph_config_path in ("graph.json", "agents/graph.json")  # type: ignore[union-attr]
    # both spellings, different values: the spec's name wins, the other is kept
    _resource_spec(record)["cache_cpu"] = 9.5
    model = Deployment.from_dict(record)
    resources = model.source_config.resource_spec  # type: ignore[union-attr]
    assert resources.cache_cpu == 9.5  # type: ignore[union-attr]
    assert resources.additional_properties == {"redis_cpu": _resource_spec(record)["redis_cpu"]}  # type: ignore[union-attr]
    assert model.to_dict()["source_config"]["resource_spec"]["cache_cpu"] == 9.5


def test_the_services_value_types_and_newer_enum_values_keep_the_column_types():
    record = _published_record()
    record["status"] = "HIBERNATING"  # outside the published enum: a newer service
    record["source"] = "internal_source"
    resources = _resource_spec(record)
    resources["max_scale"] = 2**32 - 1  # beyond float32's whole numbers, within any cluster
    resources["redis_memory_mb"] = 3072
    typed, careful, _ = flatten_both(orjson.dumps([record]))
    assert_same_tables(typed, careful)
    table = typed["deployments"]
    assert table.schema.field("max_scale").type == "double"
    assert table.schema.field("cache_memory_mb").type == "double"
    assert table.schema.field("status").type == "string"
    (row,) = table.to_pylist()
    assert (row["status"], row["source"]) == ("HIBERNATING", "internal_source")
    assert (row["max_scale"], row["cache_memory_mb"]) == (2.0**32 - 1, 3072.0)
