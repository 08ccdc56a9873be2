"""The manifest is a typed, versioned contract (issue 28): written byte for byte as before,
its JSON Schema committed and current, and validated when read back."""

from __future__ import annotations

import datetime as dt
import json
import re
import warnings

import jsonschema
import pytest
from overlap import overlapping
from repo import DATA

from dims._connection import RetryPolicy, connect
from dims._errors import ManifestError, UnreadableQuantityWarning
from dims._pages import Page
from dims._snapshot import export_snapshot, snapshot_from_dump, take_snapshot
from dims._storage import manifest as manifests
from dims._storage import open_store, read_table
from dims.sandbox import Faults, fleet_dump_bytes, generate_fleet, run_sandbox

DAY = dt.date(2026, 2, 3)
#: Written by the code before issue 28 (the scenarios below), volatile values masked.
GOLDEN = DATA / "manifests"
#: Values that change with every run: masked in the goldens and in what is compared.
VOLATILE = re.compile(r'"(export_id|snapshot_at|written_at|kept_in)": "[^"]*"')


def masked(text: str) -> str:
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", VOLATILE.sub(r'"\1": "*"', text))


def written(out, day=DAY):
    return (out / "_manifests" / f"{day}.json").read_text()


def kept(results, name, out, result):
    """The manifest on disk, and `dims export --json`'s (the typed manifest's JSON) equal."""
    text = written(out)
    assert json.dumps(result.manifest.to_dict(), indent=2) + "\n" == text
    results[name] = text


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every kind of manifest: one export, a re-run of its day, a filtered one, a dump, and
    three exports of workspaces (overlapping listings, one failing twice)."""
    work = tmp_path_factory.mktemp("manifests")
    results: dict[str, str] = {}
    with run_sandbox(deployments=60, seed=5) as sandbox:
        client = connect(sandbox.base_url, retry=RetryPolicy.none())
        out = work / "service"
        kept(results, "service", out, take_snapshot(client, out, snapshot_date=DAY))
        kept(results, "service_rerun", out, take_snapshot(client, out, snapshot_date=DAY))
        result = take_snapshot(
            client, out, snapshot_date=DAY, deployment_type="prod", name_contains="a"
        )
        kept(results, "service_filtered", result.out_dir, result)
    fleet = generate_fleet(30, seed=2)
    fleet.deployments.append({"id": 5})  # rejected
    dump = work / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(fleet))
    kept(results, "dump", work / "dump", snapshot_from_dump(dump, work / "dump", snapshot_date=DAY))
    o = overlapping(11)
    with run_sandbox(fleet=o.fleet, faults=Faults(fail_tenant=o.b)) as sandbox:

        def clients(tenants):
            url = sandbox.base_url
            return {t: connect(url, tenant_id=t, retry=RetryPolicy.none()) for t in tenants}

        out = work / "workspaces"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the overlaps are warned about, as they should
            first = take_snapshot(clients([o.a, o.c]), out, snapshot_date=DAY)
        kept(results, "workspaces", out, first)
        for name in ("workspaces_partial", "workspaces_partial_again"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                again = take_snapshot(
                    clients([o.c, o.b]), out, snapshot_date=DAY, allow_partial=True
                )
            kept(results, name, out, again)
            assert again.partial and not first.partial
    return results


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.json")))
def test_the_manifest_is_written_as_before_key_for_key_and_byte_for_byte(exported, name):
    """Same keys, same order, same values, same indentation as the code before the typed
    manifest wrote (its output is the golden); only ids and times differ between runs."""
    assert masked(exported[name]) == (GOLDEN / f"{name}.json").read_text()


def test_the_committed_schema_is_the_one_the_types_generate():
    """`python -m dims._storage.manifest` writes it again after a change to the types."""
    assert manifests.SCHEMA_FILE.read_text() == manifests.schema_text()


def test_every_kind_of_manifest_matches_the_committed_schema(exported):
    schema = json.loads(manifests.SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for name, text in exported.items():
        jsonschema.validate(json.loads(text), schema)  # raises, naming the key, if not
        assert manifests.decode(text.encode(), name) is not None


def test_a_manifest_of_the_first_dims_version_is_read_and_replaced(tmp_path):
    """The first manifests lacked keys that came later (counts, most of the evidence):
    they are read, and a re-export of their day says what it replaced."""
    out = tmp_path / "out"
    export_snapshot([Page([{"id": "old"}], source="t")], out, snapshot_date=DAY)
    first = json.loads(written(out))
    for key in ("original_name_conflicts", "unreadable_quantities", "unreadable_values"):
        del first[key]
    first["fetch"] = {}
    (out / "_manifests" / f"{DAY}.json").write_text(json.dumps(first, indent=2))
    assert manifests.decode(json.dumps(first).encode(), "old").unreadable_quantities == 0
    assert manifests.decode(json.dumps(first).encode(), "old").unreadable_values == 0
    result = export_snapshot([Page([{"id": "new"}], source="t")], out, snapshot_date=DAY)
    assert result.manifest.replaced.export_id == first["export_id"]
    assert result.manifest.replaced.deployments == 1


@pytest.mark.parametrize(
    "content",
    [b"not json", b"[]", b'{"snapshot_date": "2026-02-03"}', b'{"rows": {"deployments": "x"}}'],
)
def test_a_manifest_that_is_not_one_stops_an_export_of_its_day_with_one_line(tmp_path, content):
    """Read under the lock to say what a re-run replaces: a file that is not a manifest is
    named, and nothing is published (the day as it was)."""
    out = tmp_path / "out"
    export_snapshot([Page([{"id": "a"}], source="t")], out, snapshot_date=DAY)
    path = out / "_manifests" / f"{DAY}.json"
    path.write_bytes(content)
    with pytest.raises(ManifestError) as info:
        export_snapshot([Page([{"id": "b"}], source="t")], out, snapshot_date=DAY)
    message = str(info.value)
    assert message.startswith(f"{path} is not a dims manifest (") and "\n" not in message
    assert path.read_bytes() == content
    assert read_table(out, "deployments", DAY)["id"].tolist() == ["a"]
    assert not list(out.glob(".tmp-*"))


def test_a_manifest_that_is_not_one_on_object_storage_is_named_by_its_readers(s3_out, tmp_path):
    """dims' readers of object storage trust the manifest's file list: a bad one is one line
    naming the object, never a guess."""
    export_snapshot([Page([{"id": "a"}], source="t")], s3_out, snapshot_date=DAY)
    key = f"_manifests/{DAY}.json"
    open_store(s3_out).put_bytes(key, b'{"files": 3}')
    with pytest.raises(ManifestError, match=rf"^{re.escape(s3_out)}/{key} is not a dims manifest"):
        read_table(s3_out, "deployments", DAY)


def test_the_manifest_counts_the_figures_no_cluster_runs(tmp_path):
    """Issue 35: each resource_spec figure read as unreadable (negative, above 2^32) is
    counted, in the manifest on disk as in the typed one; a day without any counts 0."""
    records = [
        {"id": "a", "source_config": {"resource_spec": {"cpu": -2, "redis_cpu": 1e300}}},
        {"id": "b", "source_config": {"resource_spec": {"db_max_connections": -1, "cpu": 0}}},
    ]
    with pytest.warns(UnreadableQuantityWarning, match="^3 resource_spec figure"):
        result = export_snapshot([Page(records, source="t")], tmp_path, snapshot_date=DAY)
    assert result.manifest.unreadable_values == 3
    assert json.loads(written(tmp_path))["unreadable_values"] == 3
    assert manifests.decode(written(tmp_path).encode(), "t").unreadable_values == 3
