"""Records -> Arrow tables: every branch of flattening, on hand-made records."""

from __future__ import annotations

import copy
import json
import math
from datetime import UTC, datetime
from decimal import Decimal

import orjson
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dims import _spec as spec
from dims._pages import Page
from dims._tables import (
    REDACTED,
    TABLE_NAMES,
    TABLE_SCHEMAS,
    TIMESTAMP,
    Flattener,
    RejectedRecordError,
    cpu_cores,
    deployments_dataframe,
    flatten,
    flatten_providers,
    flatten_repositories,
    memory_mib,
    parse_quantity,
    redact,
    snake_case,
    table_schemas,
    to_dataframes,
)
from dims._tables import _quantities as quantities
from dims._tables import _rules as rules

SECRET = "s3cr3t-VALUE-never-stored"
ENV_SECRET = "env-VALUE-only-with-flag"
AT = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
DEPLOYMENT_ID = "11111111-1111-4111-8111-111111111111"


def full_record(**overrides):
    """A deployment using every part of the spec, plus unknown fields and awkward values."""
    record = {
        "name": 'agent "one", with\nnewline — ünïcode',
        "id": DEPLOYMENT_ID,
        "tenant_id": "22222222-2222-4222-8222-222222222222",
        "created_at": "2024-05-01T12:00:00Z",
        "updated_at": "2024-05-01T07:00:00-05:00",
        "latest_revision_id": "33333333-3333-4333-8333-333333333333",
        "active_revision_id": "44444444-4444-4444-8444-444444444444",
        "image_version": "0.10.1",
        "status": "READY",
        "secrets": [
            {"name": "API_KEY", "value": SECRET},
            {"name": "OTHER", "value": SECRET + "2", "kind": "opaque"},
        ],
        "secret_references": [{"name": "db", "secret_name": "pg", "secret_key": "url"}],
        "source_config": {
            "integration_id": "55555555-5555-4555-8555-555555555555",
            "repo_url": "https://example.com/r.git",
            "build_on_push": True,
            "custom_url": None,
            "listener_id": "66666666-6666-4666-8666-666666666666",
            "listener_config": {"k8s_namespace": "agents-prod"},
            "install_command": "pip install -e .",
            "build_command": None,
            "future_flag": {"x": 1},
            "resource_spec": {
                "min_scale": 2,
                "max_scale": 5,
                "cpu": 0.5,
                "cpu_limit": 1,
                "memory_mb": 1024,
                "memory_limit_mb": 2048,
                "queue_min_scale": 1,
                "queue_max_scale": 3,
                "queue_cpu": 0.25,
                "db_cpu": 1,
                "db_storage_gi": 10,
                "db_max_connections": 100,
                "service_account_name": "sa",
                "labels": {"team": "growth", "n": 3, "flag": True, "list": [1, "a"], "none": None},
                "annotations": {"note": 'multi\nline "q", c', "obj": {"b": 1, "a": 2}},
                "image_pull_secrets": [{"name": "regcred"}],
                "volumes": [
                    {"name": "cfg", "configMap": {"name": "app-config"}},
                    {"name": "scratch", "emptyDir": {}},
                    {"name": "both", "secret": {"secretName": "s"}, "nfs": {"path": "/x"}},
                    {"name": "odd", "hostPath": {"path": "/var"}},
                ],
                "volume_mounts": [
                    {"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True, "subPath": "a"}
                ],
                "init_containers": [
                    {
                        "name": "migrate",
                        "image": "busybox:1",
                        "command": ["sh", "-c", "echo hi"],
                        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    }
                ],
                "sidecars": [
                    {
                        "name": "proxy",
                        "image": "envoy:1",
                        "imagePullPolicy": "Always",
                        "args": ["--port", "8080"],
                        "env": [
                            {"name": "MODE", "value": ENV_SECRET},
                            {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "s"}}},
                        ],
                        "envFrom": [{"configMapRef": {"name": "c"}}],
                        "resources": {
                            "requests": {"cpu": "0.5", "memory": "1Gi"},
                            "limits": {"cpu": 1, "memory": "512M"},
                        },
                        "volumeMounts": [{"name": "cfg", "mountPath": "/c"}],
                        "securityContext": {"runAsNonRoot": True},
                        "ports": [{"containerPort": 8080}],
                    }
                ],
            },
        },
        "source_revision_config": {
            "repo_ref": "main",
            "graph_config_path": "graph.json",
            "image_uri": None,
            "source_tarball_path": None,
            "repo_commit_sha": "abc123",
        },
    }
    record.update(overrides)
    return record


def page(*records, deployment_type="prod", first_index=0, source="test page"):
    return Page(
        list(records), source=source, deployment_type=deployment_type, first_index=first_index
    )


def rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def all_text(tables: dict[str, pa.Table]) -> str:
    return "\n".join(orjson.dumps(t.to_pylist(), default=str).decode() for t in tables.values())


# --- schemas -------------------------------------------------------------------------------


ALLOWED_TYPES = {pa.string(), pa.float64(), pa.int64(), pa.bool_(), TIMESTAMP}


@pytest.mark.parametrize("table", TABLE_NAMES)
def test_schemas_use_only_types_every_reader_handles(table):
    schema = TABLE_SCHEMAS[table]
    assert schema.field("snapshot_at").type == TIMESTAMP
    for f in schema:
        assert f.type in ALLOWED_TYPES, (table, f)
        assert f.name == snake_case(f.name)
    if table.startswith("deployment_") and table != "deployment_components":
        assert schema.names[0] == "deployment_id"


def test_wide_table_has_every_spec_scalar_under_its_leaf_name():
    names = TABLE_SCHEMAS["deployments"].names
    for f in spec.deployment_scalar_fields():
        assert f.name in names
    for extra in ("deployment_type", "secret_count", "unknown_fields_json", "snapshot_at"):
        assert extra in names
    for numeric in spec.resource_numeric_fields():
        assert TABLE_SCHEMAS["deployments"].field(numeric).type == pa.float64()
    assert TABLE_SCHEMAS["deployments"].field("created_at").type == TIMESTAMP
    assert TABLE_SCHEMAS["deployments"].field("id").type == pa.string()


def test_no_secret_value_column_exists():
    assert TABLE_SCHEMAS["deployment_secrets"].names == [
        "deployment_id",
        "position",
        "name",
        "tenant_id",
        "snapshot_at",
    ]
    assert "value" not in TABLE_SCHEMAS["deployment_container_env"].names
    assert "value" in table_schemas(include_env_values=True)["deployment_container_env"].names


@pytest.mark.parametrize(
    ("wire", "column"),
    [("mountPath", "mount_path"), ("downwardAPI", "downward_api"), ("cpu", "cpu"), ("a1B", "a1_b")],
)
def test_snake_case(wire, column):
    assert snake_case(wire) == column


# --- one full record -------------------------------------------------------------------------


def test_full_record_wide_row():
    tables = flatten([page(full_record())], snapshot_at=AT)
    (row,) = rows(tables["deployments"])
    assert row["id"] == DEPLOYMENT_ID
    assert row["name"] == full_record()["name"]
    # Z and -05:00 name the same instant.
    assert row["created_at"] == row["updated_at"] == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert row["cpu"] == 0.5 and row["cpu_limit"] == 1.0 and row["db_max_connections"] == 100.0
    assert row["executor_cpu"] is None
    assert row["build_on_push"] is True
    assert row["k8s_namespace"] == "agents-prod"
    assert row["service_account_name"] == "sa"
    assert row["repo_commit_sha"] == "abc123"
    assert row["deployment_type"] == "prod"
    assert row["secret_count"] == 2
    assert row["snapshot_at"] == AT
    unknown = orjson.loads(row["unknown_fields_json"])
    assert unknown == {
        "status": "READY",
        "source_config.future_flag": {"x": 1},
        "secrets[1].kind": REDACTED,
        "source_config.resource_spec.volumes[3].hostPath": {"path": "/var"},
        "source_config.resource_spec.sidecars[0].ports": [{"containerPort": 8080}],
    }


def test_full_record_child_tables():
    tables = flatten([page(full_record())], snapshot_at=AT)
    assert [r["name"] for r in rows(tables["deployment_secrets"])] == ["API_KEY", "OTHER"]
    assert rows(tables["deployment_secret_references"])[0]["secret_key"] == "url"
    assert rows(tables["deployment_image_pull_secrets"])[0]["name"] == "regcred"

    volumes = {r["name"]: r for r in rows(tables["deployment_volumes"])}
    assert volumes["cfg"]["source_type"] == "configMap"
    assert orjson.loads(volumes["cfg"]["source_json"]) == {"name": "app-config"}
    assert volumes["scratch"]["source_type"] == "emptyDir"
    assert volumes["scratch"]["source_json"] == "{}"
    assert volumes["both"]["source_type"] == "secret,nfs"
    assert orjson.loads(volumes["both"]["source_json"]) == {
        "secret": {"secretName": "s"},
        "nfs": {"path": "/x"},
    }
    assert volumes["odd"]["source_type"] is None

    (mount,) = rows(tables["deployment_volume_mounts"])
    assert mount["mount_path"] == "/etc/cfg" and mount["read_only"] is True
    assert mount["sub_path"] == "a" and mount["mount_propagation"] is None

    containers = {r["kind"]: r for r in rows(tables["deployment_containers"])}
    init, sidecar = containers["init"], containers["sidecar"]
    assert init["name"] == "migrate" and init["position"] == 0
    assert orjson.loads(init["command_json"]) == ["sh", "-c", "echo hi"]
    assert init["cpu_request"] == 0.25 and init["memory_request_mb"] == 64.0
    assert init["cpu_limit"] is None and init["resources_limits_json"] is None
    assert sidecar["image_pull_policy"] == "Always"
    assert sidecar["cpu_request"] == 0.5 and sidecar["cpu_limit"] == 1.0
    assert sidecar["memory_request_mb"] == 1024.0
    assert sidecar["memory_limit_mb"] == pytest.approx(512e6 / 2**20)
    assert orjson.loads(sidecar["env_from_json"]) == [{"configMapRef": {"name": "c"}}]
    assert orjson.loads(sidecar["security_context_json"]) == {"runAsNonRoot": True}
    assert orjson.loads(sidecar["volume_mounts_json"]) == [{"mountPath": "/c", "name": "cfg"}]

    env = rows(tables["deployment_container_env"])
    assert [(e["container"], e["container_kind"], e["position"], e["name"]) for e in env] == [
        ("proxy", "sidecar", 0, "MODE"),
        ("proxy", "sidecar", 1, "FROM"),
    ]
    assert env[0]["value_from_json"] is None
    assert orjson.loads(env[1]["value_from_json"]) == {"secretKeyRef": {"name": "s"}}
    assert "value" not in env[0]

    labels = {(r["kind"], r["key"]): r["value"] for r in rows(tables["deployment_labels"])}
    assert labels == {
        ("label", "team"): "growth",
        ("label", "n"): "3",
        ("label", "flag"): "true",
        ("label", "list"): '[1,"a"]',
        ("label", "none"): None,
        ("annotation", "note"): 'multi\nline "q", c',
        ("annotation", "obj"): '{"a":2,"b":1}',  # sorted keys
    }
    for table in tables.values():
        if "deployment_id" in table.schema.names:
            assert set(table["deployment_id"].to_pylist()) <= {DEPLOYMENT_ID}


def test_secret_values_never_reach_a_table_and_env_values_only_with_the_flag():
    text = all_text(flatten([page(full_record())], snapshot_at=AT))
    assert SECRET not in text
    assert ENV_SECRET not in text
    with_env = flatten([page(full_record())], snapshot_at=AT, include_env_values=True)
    env = rows(with_env["deployment_container_env"])
    assert env[0]["value"] == ENV_SECRET and env[1]["value"] is None
    assert SECRET not in all_text(with_env)


def test_components_with_totals_and_replica_assumption():
    tables = flatten([page(full_record())], snapshot_at=AT)
    components = {r["component"]: r for r in rows(tables["deployment_components"])}
    assert list(components) == list(spec.COMPONENTS)
    main = components["main"]
    assert (main["replicas_min"], main["replicas_max"]) == (2.0, 5.0)
    assert main["cpu_total_min"] == 1.0 and main["cpu_total_max"] == 2.5
    assert main["memory_limit_mb_total_max"] == 2048.0 * 5
    assert main["storage_gi"] is None and main["max_connections"] is None
    assert components["queue"]["cpu_total_max"] == 0.75
    db = components["db"]
    assert (db["replicas_min"], db["replicas_max"]) == (1.0, 1.0)  # no scale fields: 1
    assert db["cpu_total_max"] == 1.0 and db["storage_gi"] == 10.0
    assert db["max_connections"] == 100.0 and db["min_scale"] is None
    # orchestrator has scale fields but this record leaves them out: one replica, the
    # assumption the capacity reports share (README, Assumptions)
    orchestrator = components["orchestrator"]
    assert (orchestrator["replicas_min"], orchestrator["replicas_max"]) == (1.0, 1.0)
    assert orchestrator["cpu_total_max"] == orchestrator["cpu"]
    for row in components.values():
        assert row["deployment_type"] == "prod" and row["deployment_id"] == DEPLOYMENT_ID


# --- missing parts and nulls ------------------------------------------------------------------


def test_record_with_only_an_id():
    tables = flatten([page({"id": DEPLOYMENT_ID}, deployment_type=None)], snapshot_at=AT)
    (row,) = rows(tables["deployments"])
    assert row["id"] == DEPLOYMENT_ID
    assert all(row[k] is None for k in row if k not in ("id", "snapshot_at"))
    assert tables["deployment_components"].num_rows == len(spec.COMPONENTS)
    for name in TABLE_NAMES:
        if name not in ("deployments", "deployment_components"):
            assert tables[name].num_rows == 0, name


def test_explicit_nulls_everywhere():
    record = {key: None for key in spec.schema("Deployment").names} | {"id": DEPLOYMENT_ID}
    record["source_config"] = dict.fromkeys(spec.schema("SourceConfig").names)
    record["source_config"]["resource_spec"] = dict.fromkeys(spec.schema("ResourceSpec").names)
    record["source_config"]["resource_spec"]["sidecars"] = [
        dict.fromkeys(spec.schema("Container").names)
    ]
    tables = flatten([page(record)], snapshot_at=AT)
    assert tables["deployments"].num_rows == 1
    assert tables["rejected_records"].num_rows == 0
    (sidecar,) = rows(tables["deployment_containers"])
    assert sidecar["name"] is None and sidecar["cpu_request"] is None


def test_deployment_type_from_the_record_wins_and_unknown_values_are_kept():
    record = full_record()
    record["source_config"]["deployment_type"] = "dev_zero"
    (row,) = rows(flatten([page(record, deployment_type="dev")], snapshot_at=AT)["deployments"])
    assert row["deployment_type"] == "dev_zero"
    assert orjson.loads(row["unknown_fields_json"])["source_config.deployment_type"] == "dev_zero"


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("2024-05-01T12:00:00Z", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T12:00:00+00:00", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T14:30:00+02:30", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T07:00:00-05:00", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T12:00:00", datetime(2024, 5, 1, 12, tzinfo=UTC)),  # no offset: UTC
        ("2024-05-01T12:00:00.123456789Z", datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_timestamps_with_any_offset_become_the_same_instant(stamp, expected):
    tables = flatten([page({"id": DEPLOYMENT_ID, "created_at": stamp})], snapshot_at=AT)
    assert rows(tables["deployments"])[0]["created_at"] == expected


def test_big_integers_are_numbers():
    """An integer beyond 64 bits is a number, not a rejected record: within 2^32 it is its
    figure, beyond a figure no cluster runs, kept aside with its value (`_figures`)."""
    resources = {"cpu": 2**60, "memory_mb": 2**32, "db_max_connections": 2**70}
    tables = flatten([page({"id": DEPLOYMENT_ID, "source_config": {"resource_spec": resources}})])
    (row,) = rows(tables["deployments"])
    assert tables["rejected_records"].num_rows == 0
    assert (row["cpu"], row["memory_mb"], row["db_max_connections"]) == (None, 2.0**32, None)
    assert json.loads(row["unreadable_values_json"]) == {
        "source_config.resource_spec.cpu": float(2**60),
        "source_config.resource_spec.db_max_connections": float(2**70),
    }


# --- rejected records -------------------------------------------------------------------------


def _nested(path: str, value):
    record = full_record()
    target = record
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[int(last) if last.isdigit() else last] = value
    return record


BAD_RECORDS = [
    ([1, 2], "record: expected object, got array"),
    ("text", "record: expected object, got string"),
    ({"name": "no id"}, "id: missing"),
    ({"id": None}, "id: null"),
    ({"id": 123}, "id: expected string (uuid), got number 123"),
    (
        full_record(created_at="yesterday"),
        "created_at: expected date-time string, got string 'yesterday'",
    ),
    (full_record(created_at=5), "created_at: expected date-time string, got number 5"),
    (full_record(tenant_id=7), "tenant_id: expected string (uuid), got number 7"),
    (full_record(name=["x"]), "name: expected string, got array"),
    (
        _nested("source_config.resource_spec.cpu", "abc"),
        "source_config.resource_spec.cpu: expected number, got string 'abc'",
    ),
    (
        _nested("source_config.resource_spec.cpu", True),
        "source_config.resource_spec.cpu: expected number, got boolean true",
    ),
    (
        _nested("source_config.build_on_push", "yes"),
        "source_config.build_on_push: expected boolean, got string 'yes'",
    ),
    (full_record(source_config="x"), "source_config: expected object, got string"),
    (
        _nested("source_config.listener_config", [1]),
        "source_config.listener_config: expected object, got array",
    ),
    (full_record(secrets={"name": "a"}), "secrets: expected array, got object"),
    (full_record(secrets=["raw-secret"]), "secrets[0]: expected object, got string"),
    (
        full_record(secrets=[{"name": "a", "value": 5}]),
        "secrets[0].value: expected string, got number",
    ),
    (
        _nested("source_config.resource_spec.labels", ["a"]),
        "source_config.resource_spec.labels: expected object, got array",
    ),
    (
        _nested("source_config.resource_spec.volumes", "v"),
        "source_config.resource_spec.volumes: expected array, got string",
    ),
    (
        _nested("source_config.resource_spec.volumes.0.configMap", "cm"),
        "source_config.resource_spec.volumes[0].configMap: expected object, got string 'cm'",
    ),
    (
        _nested("source_config.resource_spec.volume_mounts.0.readOnly", "no"),
        "source_config.resource_spec.volume_mounts[0].readOnly: expected boolean, got string 'no'",
    ),
    (
        _nested("source_config.resource_spec.sidecars.0.command", [1]),
        "source_config.resource_spec.sidecars[0].command[0]: expected string, got number 1",
    ),
    (
        _nested("source_config.resource_spec.sidecars.0.env", [{"name": "A", "value": 5}]),
        "source_config.resource_spec.sidecars[0].env[0].value: expected string, got number",
    ),
    (
        _nested("source_config.resource_spec.sidecars.0.env", ["MODE=" + ENV_SECRET]),
        "source_config.resource_spec.sidecars[0].env[0]: expected object, got string",
    ),
    (
        _nested("source_config.resource_spec.sidecars.0.env", {"A": 1}),
        "source_config.resource_spec.sidecars[0].env: expected array, got object",
    ),
    (
        _nested("source_config.resource_spec.sidecars.0.resources", "big"),
        "source_config.resource_spec.sidecars[0].resources: expected object, got string",
    ),
    (
        _nested("source_config.resource_spec.init_containers", [None]),
        "source_config.resource_spec.init_containers[0]: expected object, got null",
    ),
]


@pytest.mark.parametrize(("record", "reason"), BAD_RECORDS, ids=[r for _, r in BAD_RECORDS])
def test_unreadable_records_are_rejected_with_a_reason(record, reason):
    good = full_record(id="99999999-9999-4999-8999-999999999999")
    flattener = Flattener(snapshot_at=AT)
    flattener.add_page(
        page(
            good,
            record,
            good | {"id": "aaaaaaaa-9999-4999-8999-999999999999"},
            first_index=40,
            source="page offset=40 type=prod",
        )
    )
    tables = flattener.take()
    (rejected,) = rows(tables["rejected_records"])
    assert rejected["reason"] == reason
    assert rejected["source"] == "page offset=40 type=prod"
    assert rejected["record_index"] == 41
    assert flattener.counts == {
        "records": 3,
        "rejected": 1,
        "original_conflicts": 0,
        "unreadable_quantities": 0,
        "unreadable_values": 0,
    }
    # Nothing of the rejected record reaches any other table; its neighbours are whole.
    assert tables["deployments"].num_rows == 2
    assert tables["deployment_secrets"].num_rows == 4
    assert tables["deployment_container_env"].num_rows == 4
    assert tables["deployment_labels"].num_rows == 14
    # Secret values are redacted from the record's JSON and never quoted in the reason.
    assert SECRET not in rejected["record_json"] and ENV_SECRET not in rejected["record_json"]
    assert "raw-secret" not in rejected["record_json"]
    for secret in (SECRET, ENV_SECRET, "raw-secret"):
        assert secret not in rejected["reason"]
    assert "\n" not in rejected["reason"]
    if isinstance(record, dict) and "secrets" in record and isinstance(record["secrets"], list):
        assert REDACTED in rejected["record_json"]


def test_strict_mode_raises_naming_the_record():
    flattener = Flattener(strict=True)
    with pytest.raises(RejectedRecordError, match=r"dump.json\[0..9\] record 3: created_at"):
        flattener.add_page(
            page(
                full_record(),
                full_record(created_at="soon"),
                source="dump.json[0..9]",
                first_index=2,
            )
        )


def test_redact_replaces_secret_values_wherever_they_sit():
    record = full_record()
    redacted = redact(record)
    assert redacted["secrets"][0] == {"name": "API_KEY", "value": REDACTED}
    sidecar = redacted["source_config"]["resource_spec"]["sidecars"][0]
    assert sidecar["env"][0] == {"name": "MODE", "value": REDACTED}
    assert record["secrets"][0]["value"] == SECRET  # the input is not changed
    assert redact(full_record(secrets="whole-secret"))["secrets"] == REDACTED
    assert redact([full_record()])[0]["secrets"][1]["value"] == REDACTED
    assert redact(42) == 42
    # what a secret-bearing object holds beyond the spec, and a part of another shape on the
    # way to a secret, go whole; null stays null, other unknown fields stay as they are
    record["secrets"][0] = {**record["secrets"][0], "note": "maybe-secret", "value": None}
    record["source_config"]["resource_spec"]["sidecars"][0]["env"] = "MODE=secret"
    record["extra"] = {"kept": 1}
    redacted = redact(record)
    assert redacted["secrets"][0] == {"name": "API_KEY", "value": None, "note": REDACTED}
    assert redacted["source_config"]["resource_spec"]["sidecars"][0]["env"] == REDACTED
    assert redacted["extra"] == {"kept": 1}
    assert list(redacted) == list(record)  # the record's own order


def test_take_streams_batches_and_clears():
    flattener = Flattener(snapshot_at=AT)
    flattener.add_page(page(full_record()))
    assert flattener.pending == 1
    first = flattener.take()
    assert flattener.pending == 0
    second = flattener.take()
    assert first["deployments"].num_rows == 1
    assert all(t.num_rows == 0 for t in second.values())
    other = copy.deepcopy(full_record(id="bbbbbbbb-1111-4111-8111-111111111111"))
    flattener.add_page(page(other))
    third = flattener.take()
    assert third["deployments"]["id"].to_pylist() == [other["id"]]
    assert set(third["deployment_secrets"]["deployment_id"].to_pylist()) == {other["id"]}
    for name, table in third.items():
        assert table.schema == flattener.schemas[name]


# --- providers and repositories -----------------------------------------------------------------


PROVIDER = {
    "id": "p1",
    "organization_id": "o1",
    "provider_id": "github-local-dev",
    "name": "GitHub",
    "client_id": "cid",
    "auth_url": "https://a",
    "token_url": "https://t",
    "uses_pkce": True,
    "code_challenge_method": None,
    "created_at": "2024-01-01T00:00:00+01:00",
    "updated_at": "2024-01-01T00:00:00Z",
}


def test_providers_get_defaults_and_utc_timestamps():
    table = flatten_providers([PROVIDER, PROVIDER | {"is_dynamic_client": True, "x": 1}])
    first, second = rows(table)
    assert first["token_endpoint_auth_method"] == "client_secret_post"
    assert first["is_dynamic_client"] is False and second["is_dynamic_client"] is True
    assert first["created_at"] == datetime(2023, 12, 31, 23, tzinfo=UTC)
    assert first["provider_type"] is None and first["unknown_fields_json"] is None
    assert orjson.loads(second["unknown_fields_json"]) == {"x": 1}


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({k: v for k, v in PROVIDER.items() if k != "client_id"}, "client_id: missing"),
        (
            {k: v for k, v in PROVIDER.items() if k != "code_challenge_method"},
            "code_challenge_method: missing",
        ),
        (PROVIDER | {"name": None}, "name: expected string, got null"),
        (PROVIDER | {"uses_pkce": "yes"}, "uses_pkce: expected boolean, got string 'yes'"),
        (
            PROVIDER | {"token_endpoint_auth_method": None},
            "token_endpoint_auth_method: expected string, got null",
        ),
    ],
)
def test_bad_providers_are_rejected(record, reason):
    tables = flatten([], providers=[record])
    assert tables["oauth_providers"].num_rows == 0
    (rejected,) = rows(tables["rejected_records"])
    assert (rejected["source"], rejected["record_index"], rejected["reason"]) == (
        "oauth_providers",
        0,
        reason,
    )


def test_repositories():
    repo = {
        "host_integration_id": "55555555-5555-4555-8555-555555555555",
        "id": 123456789012,
        "name": "r",
        "owner": "o",
        "url": "https://x",
        "default_branch": "main",
    }
    tables = flatten([], repositories={repo["host_integration_id"]: [repo, repo | {"id": "12"}]})
    assert rows(tables["repositories"])[0]["id"] == 123456789012
    assert tables["repositories"].schema.field("id").type == pa.int64()
    (rejected,) = rows(tables["rejected_records"])
    assert rejected["reason"] == "id: expected integer, got string '12'"
    assert rejected["source"] == f"repositories integration={repo['host_integration_id']}"
    assert rejected["record_index"] == 1
    assert flatten_repositories({"i": [repo]}).num_rows == 1


# --- DataFrames -----------------------------------------------------------------------------------


def test_dataframes_for_notebooks():
    frames = to_dataframes([full_record(), {"id": DEPLOYMENT_ID}])
    assert set(frames) == set(TABLE_NAMES)
    deployments = frames["deployments"]
    assert len(deployments) == 2
    assert str(deployments["created_at"].dtype) == "datetime64[us, UTC]"
    assert str(deployments["secret_count"].dtype) == "Int64"
    assert deployments_dataframe([page(full_record())])["cpu"].tolist() == [0.5]


# --- quantities ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cores"),
    [
        ("500m", 0.5),
        ("0.25", 0.25),
        ("2", 2.0),
        (1, 1.0),
        (0.5, 0.5),
        ("1e3", 1000.0),
        ("100u", 0.0001),
        ("+1.5", 1.5),
        (".5", 0.5),
        ("1.", 1.0),
        ("1k", 1000.0),  # decimal: k is 1000, Ki would be 1024
        ("2500n", 2.5e-6),
        ("1E-2", 0.01),
        ("1e+1", 10.0),
        ("-1", -1.0),
    ],
)
def test_cpu_quantities(text, cores):
    assert cpu_cores(text) == pytest.approx(cores)


@pytest.mark.parametrize(
    ("text", "mib"),
    [
        ("256Mi", 256.0),
        ("1Gi", 1024.0),
        ("512M", 512e6 / 2**20),
        ("1e3", 1000 / 2**20),
        ("1Ki", 1 / 1024),
        ("1.5Gi", 1536.0),
        (1073741824, 1024.0),
        ("1E", 1e18 / 2**20),
        ("2Ti", 2 * 2**20),
        ("1k", 1000 / 2**20),
        ("1Pi", 2**30),
        ("1Ei", 2**40),
    ],
)
def test_memory_quantities(text, mib):
    assert memory_mib(text) == pytest.approx(mib)


UNREADABLE_QUANTITIES = {
    # what Kubernetes' ParseQuantity refuses -> the reason dims gives
    "١٢": "digits other than ASCII 0-9",  # Arabic-Indic 12
    "٣Gi": "digits other than ASCII 0-9",
    "２": "digits other than ASCII 0-9",  # full-width 2
    "1²": "digits other than ASCII 0-9",
    " 2 ": "spaces are not part of a quantity",
    "2 ": "spaces are not part of a quantity",
    "\t2": "spaces are not part of a quantity",
    "1 Gi": "spaces are not part of a quantity",
    "2\n": "spaces are not part of a quantity",
    "": "empty text, not a quantity",
    "abc": "not a number with one of Kubernetes' suffixes",
    "1.2.3": "not a number with one of Kubernetes' suffixes",
    "Mi": "not a number with one of Kubernetes' suffixes",
    "1GB": "not a number with one of Kubernetes' suffixes",
    "1K": "not a number with one of Kubernetes' suffixes",  # k is decimal, Ki binary
    "1mi": "not a number with one of Kubernetes' suffixes",
    "1e": "not a number with one of Kubernetes' suffixes",
    "1e1.5": "not a number with one of Kubernetes' suffixes",
    "+": "not a number with one of Kubernetes' suffixes",
    ".": "not a number with one of Kubernetes' suffixes",
    "1e999": "a number beyond float64",
    True: "a boolean, not a quantity",
    10**400: "a number beyond float64",
}


@pytest.mark.parametrize("junk", [*UNREADABLE_QUANTITIES, [1], {"a": 1}])
def test_unreadable_quantities_are_none_with_their_reason(junk):
    """Never 0, never an exception: None, and `problem` says why (issue 27, item 4)."""
    assert parse_quantity(junk) is None
    assert cpu_cores(junk) is None and memory_mib(junk) is None
    reason = quantities.problem(junk)
    if isinstance(junk, list | dict):
        assert reason in ("an array, not a quantity", "an object, not a quantity")
    else:
        assert reason is not None and reason.startswith(UNREADABLE_QUANTITIES[junk])


def test_an_absent_or_readable_quantity_has_no_problem():
    assert [quantities.problem(v) for v in (None, "500m", 2, "1.5Gi", "1e3")] == [None] * 5


#: Kubernetes' suffixes and their multipliers, written out here (not imported).
K8S_SUFFIXES = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10**3,
    "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10,
    "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


def k8s_quantity(text: str) -> Decimal | None:
    """Kubernetes' quantity grammar (the comment of resource/quantity.go), read one
    character at a time: [sign] digits [. digits] | [sign] . digits, then a suffix or
    e/E [sign] digits. None when the text is not one."""
    ascii_digits = "0123456789"
    at = 1 if text[:1] in ("+", "-") else 0
    whole = len(text[at:]) - len(text[at:].lstrip(ascii_digits))
    end = at + whole
    fraction = 0
    if text[end : end + 1] == ".":
        rest = text[end + 1 :]
        fraction = len(rest) - len(rest.lstrip(ascii_digits))
        end += 1 + fraction
    if whole == 0 and fraction == 0:
        return None
    number, suffix = Decimal(text[:end].rstrip(".") or "0"), text[end:]
    if suffix in K8S_SUFFIXES:
        return number * K8S_SUFFIXES[suffix]
    exponent = suffix[1:].lstrip("+-") if suffix[:1] in ("e", "E") else ""
    if (
        not exponent
        or any(c not in ascii_digits for c in exponent)
        or len(suffix[1:]) - len(exponent) > 1
    ):
        return None
    return number.scaleb(int(suffix[1:]))


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        st.sampled_from(list("0123456789+-.eEKMGTPEimnuk ٣２\t")) | st.characters(),
        max_size=8,
    )
    | st.from_regex(
        r"[+-]?([0-9]{1,4}(\.[0-9]{0,3})?|\.[0-9]{1,3})([eE][+-]?[0-9]{1,2}|[KMGTPE]i|[numkMGTPE])?",
        fullmatch=True,
    )
)
def test_quantities_follow_the_kubernetes_grammar(text):
    """Accepted exactly when Kubernetes' grammar takes the text, with its value."""
    expected = k8s_quantity(text)
    got = parse_quantity(text)
    if expected is None or not math.isfinite(float(expected)):
        assert got is None, text
        assert quantities.problem(text) is not None
    else:
        assert got == pytest.approx(float(expected), rel=1e-12), text


def test_unknown_integers_beyond_64_bits_are_kept_exact():
    """Found by the property tests: -2**63 - 1 in an unknown field must not become a float."""
    import json

    record = {"id": DEPLOYMENT_ID, "small": -(2**63) - 1, "big": 2**70, "source_config": {}}
    row = deployments_dataframe([record]).iloc[0]
    assert json.loads(row["unknown_fields_json"]) == {"small": -(2**63) - 1, "big": 2**70}


# --- the inline shape tests both readers take before the careful check ---------------------

_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["name", "mountPath", "readOnly", "zz"]), inner, max_size=4
        )
    ),
    max_leaves=8,
)


def _shapes() -> list[tuple[spec.Prop, bool, bool]]:
    """Every checked or JSON-text property whose shape has an inline test."""
    out = []
    for name in spec.document()["components"]["schemas"]:
        for prop in spec.schema(name).properties.values():
            for must_object in (False, True):
                if rules.shape_test((prop, must_object, False)) is not None:
                    out.append((prop, must_object, False))
    return out


@settings(max_examples=300, deadline=None)
@given(shape=st.sampled_from(_shapes()), value=_JSON | st.lists(_JSON, max_size=4))
def test_an_inline_shape_test_passes_only_what_the_careful_check_accepts(shape, value):
    """A value the inline test passes skips the careful check: the check must accept it
    (array items with a flat schema, such as volume mounts, included)."""
    prop, must_object, _ = shape
    if eval(rules.shape_test(shape), {}, {"v": value}):  # our own generated expression
        rules.check_shape(value, prop, must_object, "p", False)  # raises Reject if not


def test_volume_mounts_are_tested_inline_and_a_wrong_field_is_not():
    (prop,) = (p for p in spec.schema("Container").properties.values() if p.name == "volumeMounts")
    test = rules.shape_test((prop, False, False))
    assert test is not None
    good = [{"name": "data", "mountPath": "/d", "readOnly": True, "future": 1}, {"name": None}]
    assert eval(test, {}, {"v": good})
    for bad in ([{"name": 5}], [{"readOnly": "yes"}], ["data"], {"name": "x"}):
        assert not eval(test, {}, {"v": bad})
        with pytest.raises(rules.Reject):
            rules.check_shape(bad, prop, False, "p", False)


def test_remembered_quantities_keep_their_types_apart():
    """Container quantities are remembered by their four values: 1, 1.0 and True are three
    (True is no quantity), and an object, which cannot be remembered, still reads."""
    quantities = rules.container_quantities
    assert quantities({"cpu": 1}, {"memory": "1Gi"}) == (1.0, None, None, 1024.0)
    assert quantities({"cpu": True}, {"memory": "1Gi"}) == (None, None, None, 1024.0)
    assert quantities({"cpu": 1.0}, {"memory": "1Gi"}) == (1.0, None, None, 1024.0)
    assert quantities({"cpu": {"n": 1}}, {"cpu": "250m"}) == (None, 0.25, None, None)
