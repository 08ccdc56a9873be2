"""The Parquet dataset: round trip, readers, atomicity, secrets. Real files, real readers."""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dims import _spec as spec
from dims._errors import ConfigurationError, DatasetError, ExportError
from dims._evidence import FetchEvidence, ListingStats
from dims._pages import Page
from dims._snapshot import export_snapshot
from dims._storage import read_arrow, read_table, snapshot_dates
from dims._tables import SCHEMA_VERSION, TABLE_NAMES, TIMESTAMP, RejectedRecordError
from dims.sandbox import generate_fleet

CANARY_SECRET = "CANARY-SECRET-7f3a9c"
CANARY_ENV = "CANARY-ENV-VALUE-41d2e8"
DAY = date(2025, 3, 1)
AT = datetime(2025, 3, 1, 6, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def fleet():
    return generate_fleet(400, seed=7, canary_secret=CANARY_SECRET, canary_env_value=CANARY_ENV)


def fleet_pages(fleet, size=50):
    records = fleet.deployments
    for start in range(0, len(records), size):
        chunk = records[start : start + size]
        # Tag each page with the type of its records, as the per-type listings would.
        by_type: dict[str | None, list] = {}
        for record in chunk:
            kind = (
                fleet.deployment_types.get(record.get("id")) if isinstance(record, dict) else None
            )
            by_type.setdefault(kind, []).append(record)
        for kind, group in by_type.items():
            yield Page(group, source=f"fleet offset={start} type={kind}", deployment_type=kind)


def export_fleet(fleet, out, **options):
    options.setdefault("snapshot_date", DAY)
    options.setdefault("snapshot_at", AT)
    return export_snapshot(
        fleet_pages(fleet),
        out,
        providers=fleet.providers,
        repositories=fleet.repositories,
        **options,
    )


@pytest.fixture(scope="module")
def exported(fleet, tmp_path_factory):
    out = tmp_path_factory.mktemp("dataset")
    result = export_fleet(fleet, out)
    return out, result


def partition(out: Path, table: str, day: date = DAY) -> Path:
    return out / table / f"snapshot_date={day.isoformat()}"


def count_rows(out: Path, table: str) -> int:
    """Rows of every snapshot of `table`, counted by DuckDB the way a reporting tool reads."""
    glob = f"{out}/{table}/*/*.parquet"
    return duckdb.sql(
        f"select count(*) from read_parquet('{glob}', hive_partitioning=true)"
    ).fetchall()[0][0]


def work_folders(out: Path) -> list[Path]:
    """Dot entries an export leaves in its folder, besides its lock file (which stays:
    removing a lock file races with a writer that has just opened it)."""
    return [p for p in out.iterdir() if p.name.startswith(".") and p.name != ".dims.lock"]


def read(out: Path, table: str) -> pa.Table:
    return pq.read_table(partition(out, table) / "part-0.parquet")


def get(record, path):
    for step in path:
        if not isinstance(record, dict):
            return None
        record = record.get(step)
    return record


def expected(value, kind):
    if value is None:
        return None
    if kind == "number":
        return float(value)
    if kind == "datetime":
        parsed = datetime.fromisoformat(value)
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    return value


# --- layout, types and readers -------------------------------------------------------------


def test_every_table_is_written_with_schema_version_and_portable_types(exported):
    out, result = exported
    for table in TABLE_NAMES:
        path = partition(out, table) / "part-0.parquet"
        assert path.is_file(), table
        schema = pq.read_schema(path)
        assert schema.metadata[b"dims.schema_version"] == str(SCHEMA_VERSION).encode()
        assert schema.field("snapshot_at").type == TIMESTAMP
        for field in schema:
            assert not pa.types.is_unsigned_integer(field.type)
            assert not pa.types.is_map(field.type)
            assert not pa.types.is_nested(field.type)
            assert not isinstance(field.type, pa.ExtensionType)
            if pa.types.is_timestamp(field.type):
                assert (field.type.unit, field.type.tz) == ("us", "UTC")
        metadata = pq.read_metadata(path)
        if metadata.num_row_groups:
            assert metadata.row_group(0).column(0).compression == "ZSTD"
        assert pq.read_metadata(path).num_rows == result.rows[table]
    assert work_folders(out) == []


def test_duckdb_and_polars_read_the_dataset(exported, fleet):
    out, result = exported
    rows = duckdb.sql(
        f"select snapshot_date, count(*) as n, sum(cpu) as cpu "
        f"from read_parquet('{out}/deployments/*/*.parquet', hive_partitioning=true) group by 1"
    ).fetchall()
    assert len(rows) == 1
    assert str(rows[0][0]) == DAY.isoformat()
    assert rows[0][1] == result.rows["deployments"]
    for table in TABLE_NAMES:
        assert count_rows(out, table) == result.rows[table], table
        frame = pl.read_parquet(str(partition(out, table) / "*.parquet"))
        assert frame.height == result.rows[table]
    frame = pl.read_parquet(str(partition(out, "deployments") / "*.parquet"))
    assert frame.schema["created_at"] == pl.Datetime("us", "UTC")


def test_helpers_read_back(exported):
    out, result = exported
    assert snapshot_dates(out) == [DAY]
    frame = read_table(out, "deployments")
    assert len(frame) == result.rows["deployments"]
    assert (
        read_arrow(out, "oauth_providers", "2025-03-01").num_rows == result.rows["oauth_providers"]
    )
    with pytest.raises(DatasetError, match="no deployments snapshot dated 2020-01-01"):
        read_table(out, "deployments", date(2020, 1, 1))


# --- round trip ------------------------------------------------------------------------------


def test_every_record_is_accounted_for(exported, fleet):
    out, result = exported
    rejected = read(out, "rejected_records")
    deployment_rejects = [s for s in rejected["source"].to_pylist() if s.startswith("fleet")]
    assert result.records == len(fleet.deployments)
    assert result.rows["deployments"] + len(deployment_rejects) == len(fleet.deployments)
    assert result.rejected == rejected.num_rows
    assert result.rows["deployment_components"] == result.rows["deployments"] * len(spec.COMPONENTS)


def test_exported_plus_rejected_equals_input_with_bad_records_mixed_in(fleet, tmp_path):
    bad = [
        42,
        {"name": "no id"},
        {"id": "x", "created_at": "noon", "secrets": [{"value": CANARY_SECRET}]},
    ]
    pages = [*fleet_pages(fleet), Page(bad, source="bad page", first_index=100)]
    result = export_snapshot(pages, tmp_path, snapshot_date=DAY)
    assert result.records == len(fleet.deployments) + 3
    assert result.rows["deployments"] + result.rejected == result.records
    rejected = read(tmp_path, "rejected_records").to_pylist()
    assert [(r["source"], r["record_index"]) for r in rejected] == [
        ("bad page", 100),
        ("bad page", 101),
        ("bad page", 102),
    ]
    assert [r["reason"] for r in rejected] == [
        "record: expected object, got number",
        "id: missing",
        "created_at: expected date-time string, got string 'noon'",
    ]
    raw, text = _all_bytes_and_text(tmp_path)
    assert CANARY_SECRET.encode() not in raw and CANARY_SECRET not in text


def test_every_value_reads_back_equal_to_the_source(exported, fleet):
    out, _ = exported
    table = read(out, "deployments").to_pylist()
    by_id = {row["id"]: row for row in table}
    sources = {
        r["id"]: r for r in fleet.deployments if isinstance(r, dict) and r.get("id") in by_id
    }
    assert len(sources) == len(by_id)
    checked = Counter()
    for deployment_id, record in sources.items():
        row = by_id[deployment_id]
        for field in spec.deployment_scalar_fields():
            want = expected(get(record, field.path), field.kind)
            assert row[field.name] == want, (deployment_id, field.dotted)
            checked[field.kind] += want is not None
        own = get(record, ("source_config", "deployment_type"))
        assert row["deployment_type"] == (own or fleet.deployment_types[deployment_id])
        secrets = record.get("secrets")
        assert row["secret_count"] == (None if secrets is None else len(secrets))
        assert row["snapshot_at"] == AT
    assert all(checked[kind] for kind in ("string", "uuid", "datetime", "number", "boolean"))
    names = [r["name"] for r in sources.values() if r.get("name")]
    assert any(set(n) & set("\"',\n") for n in names), "the fleet should have awkward names"


def test_numeric_sums_reconcile_exactly(exported, fleet):
    out, _ = exported
    table = read(out, "deployments")
    ids = set(table["id"].to_pylist())
    records = [r for r in fleet.deployments if isinstance(r, dict) and r.get("id") in ids]
    for name in spec.resource_numeric_fields():
        source = [get(r, ("source_config", "resource_spec", name)) for r in records]
        source_sum = math.fsum(float(v) for v in source if v is not None)
        assert math.fsum(v for v in table[name].to_pylist() if v is not None) == source_sum, name
        assert sum(v is None for v in source) == table[name].null_count, name


def test_child_tables_match_the_source(exported, fleet):
    out, _ = exported
    ids = set(read(out, "deployments")["id"].to_pylist())
    records = [r for r in fleet.deployments if isinstance(r, dict) and r.get("id") in ids]
    spec_of = lambda r, *path: get(r, path) or []  # noqa: E731

    def count(*path):
        return sum(len(spec_of(r, *path)) for r in records)

    assert read(out, "deployment_secrets").num_rows == count("secrets")
    assert read(out, "deployment_secret_references").num_rows == count("secret_references")
    rs = ("source_config", "resource_spec")
    assert read(out, "deployment_volumes").num_rows == count(*rs, "volumes")
    assert read(out, "deployment_volume_mounts").num_rows == count(*rs, "volume_mounts")
    assert read(out, "deployment_containers").num_rows == count(*rs, "init_containers") + count(
        *rs, "sidecars"
    )
    labels = sum(
        len(get(r, (*rs, "labels")) or {}) + len(get(r, (*rs, "annotations")) or {})
        for r in records
    )
    assert read(out, "deployment_labels").num_rows == labels
    env = sum(
        len(c.get("env") or [])
        for r in records
        for c in (get(r, (*rs, "init_containers")) or []) + (get(r, (*rs, "sidecars")) or [])
    )
    assert read(out, "deployment_container_env").num_rows == env
    assert read(out, "oauth_providers").num_rows + sum(
        s == "oauth_providers" for s in read(out, "rejected_records")["source"].to_pylist()
    ) == len(fleet.providers)


def _all_bytes_and_text(out: Path) -> tuple[bytes, str]:
    raw = b"".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())
    text = "\n".join(
        orjson.dumps(pq.read_table(p).to_pylist(), default=str).decode()
        for p in sorted(out.rglob("*.parquet"))
    )
    return raw, text


def test_canary_secret_never_appears_in_the_output(exported):
    out, _ = exported
    raw, text = _all_bytes_and_text(out)
    for canary in (CANARY_SECRET, CANARY_ENV):
        assert canary.encode() not in raw
        assert canary not in text


def test_env_values_are_exported_only_when_asked(fleet, tmp_path):
    export_fleet(fleet, tmp_path, include_env_values=True)
    env = read(tmp_path, "deployment_container_env")
    assert CANARY_ENV in env["value"].to_pylist()  # the canary check above is meaningful
    _, text = _all_bytes_and_text(tmp_path)
    assert CANARY_SECRET not in text


# --- atomicity ------------------------------------------------------------------------------


def _snapshot_state(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


class Boom(Exception):
    pass


def _failing_pages(fleet, after: int, error: BaseException):
    for n, page in enumerate(fleet_pages(fleet)):
        if n == after:
            raise error
        yield page


@pytest.mark.parametrize("error", [Boom("network gone"), KeyboardInterrupt()])
@pytest.mark.parametrize("same_day", [False, True])
def test_a_failure_mid_stream_leaves_earlier_snapshots_untouched(fleet, tmp_path, error, same_day):
    export_fleet(fleet, tmp_path)
    before = _snapshot_state(tmp_path)
    day = DAY if same_day else date(2025, 3, 2)
    with pytest.raises(type(error)):
        export_snapshot(
            _failing_pages(fleet, 3, error), tmp_path, snapshot_date=day, row_group_records=50
        )
    assert _snapshot_state(tmp_path) == before
    assert work_folders(tmp_path) == []
    assert snapshot_dates(tmp_path) == [DAY]


def test_strict_mode_writes_nothing_on_a_rejected_record(tmp_path):
    pages = [Page([{"id": "a"}, {"id": "b", "created_at": "never"}], source="dump.json[0..1]")]
    with pytest.raises(RejectedRecordError, match=r"dump.json\[0..1\] record 1: created_at"):
        export_snapshot(pages, tmp_path, strict=True)
    assert [p.name for p in tmp_path.iterdir()] == [".dims.lock"]  # the lock file stays


def test_rerunning_the_same_day_replaces_it(fleet, tmp_path):
    export_fleet(fleet, tmp_path)
    small = [Page([{"id": "only-one"}], source="s")]
    result = export_snapshot(small, tmp_path, snapshot_date=DAY, snapshot_at=AT)
    assert result.rows["deployments"] == 1
    assert read(tmp_path, "deployments")["id"].to_pylist() == ["only-one"]
    assert read(tmp_path, "oauth_providers").num_rows == 0
    assert sorted(p.name for p in partition(tmp_path, "deployments").iterdir()) == [
        "part-0.parquet"
    ]
    export_snapshot(small, tmp_path, snapshot_date=date(2025, 3, 2))
    assert snapshot_dates(tmp_path) == [DAY, date(2025, 3, 2)]
    assert count_rows(tmp_path, "deployments") == 2


def test_stale_temporary_folders_of_dead_exports_are_removed(tmp_path):
    stale = tmp_path / ".tmp-2025-01-01-999999999-abcd"
    (stale / "deployments").mkdir(parents=True)
    export_snapshot([], tmp_path, snapshot_date=DAY)
    assert not stale.exists()


def test_an_unwritable_output_folder_fails_before_any_page(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    consumed = []

    def pages():
        consumed.append(1)
        yield Page([], source="x")

    with pytest.raises(
        ExportError, match=r"cannot write to .*file/out: .*choose another --out"
    ) as info:
        export_snapshot(pages(), blocker / "out")
    assert consumed == []
    assert "\n" not in str(info.value)


def test_an_empty_export_writes_every_table(tmp_path):
    result = export_snapshot([], tmp_path, snapshot_date=DAY)
    assert set(result.rows.values()) == {0}
    for table in TABLE_NAMES:
        assert (
            duckdb.sql(
                f"select count(*) from read_parquet('{tmp_path}/{table}/*/*.parquet')"
            ).fetchall()[0][0]
            == 0
        )
    assert "deployments" in result.summary()


def test_result_and_summary(exported):
    out, result = exported
    lines = result.summary().splitlines()
    assert lines[0].startswith(f"wrote snapshot {DAY.isoformat()} to {out}")
    assert any(line.split()[0] == "deployment_components" for line in lines[1:])
    assert result.paths["deployments"] == partition(out, "deployments")
    assert result.seconds > 0


def test_progress_and_row_groups(fleet, tmp_path):
    seen = []
    result = export_fleet(fleet, tmp_path, progress=seen.append, row_group_records=100)
    assert sum(seen) == len(fleet.deployments)
    metadata = pq.read_metadata(partition(tmp_path, "deployments") / "part-0.parquet")
    assert metadata.num_row_groups >= 3
    assert metadata.num_rows == result.rows["deployments"]


# --- the manifest ----------------------------------------------------------------------------


def test_the_manifest_is_written_with_the_callers_fetch_evidence(fleet, tmp_path):
    """The fetch's evidence, handed over with the pages, lands under "fetch" as it was
    given, and the manifest on disk is the one ExportResult carries."""
    evidence = FetchEvidence(
        deployments=len(fleet.deployments),
        complete=True,
        listings=[ListingStats(listing="all", role="fleet", filters={}, page_size=100, pages=3)],
    )
    result = export_snapshot(fleet_pages(fleet), tmp_path, snapshot_date=DAY, evidence=evidence)
    on_disk = orjson.loads((tmp_path / "_manifests" / "2025-03-01.json").read_bytes())
    assert on_disk == result.manifest.to_dict()
    assert on_disk["fetch"] == {
        "deployments": len(fleet.deployments),
        "complete": True,
        "listings": [
            {
                "listing": "all", "role": "fleet", "filters": {}, "page_size": 100,
                "pages": 3, "records": 0, "duplicates": 0, "largest_page": 0,
                "offset_fallbacks": 0, "ended_on_empty_page": False,
            }
        ],
    }  # fmt: skip
    assert on_disk["rows"] == result.rows and on_disk["records"] == result.records
    assert on_disk["snapshot_date"] == "2025-03-01" and on_disk["schema_version"] == SCHEMA_VERSION
    assert (on_disk["dataset"], on_disk["filters"], on_disk["replaced"]) == (".", {}, None)
    for table, path in on_disk["files"].items():
        metadata = pq.read_metadata(tmp_path / path).metadata
        assert metadata[b"dims.export_id"].decode() == on_disk["export_id"], table


@pytest.mark.parametrize(
    ("filters", "says"),
    [
        ({"remote_reconciled": "yes"}, "remote_reconciled must be true or false, got str 'yes'"),
        ({"status": 3}, "status must be text"),
        ({"colour": "red"}, r"unknown deployment filter\(s\) \['colour'\]"),
    ],
)
def test_a_filter_that_is_not_the_specs_is_refused_before_anything(tmp_path, filters, says):
    """Filters are checked once, where they come in: before a page is read or a folder made."""
    consumed = []

    def pages():
        consumed.append(1)
        yield Page([{"id": "a"}], source="s")

    with pytest.raises(ConfigurationError, match=says):
        export_snapshot(pages(), tmp_path / "out", filters=filters)
    assert consumed == [] and not (tmp_path / "out").exists()


def test_a_filtered_export_goes_to_its_own_root_and_says_so(fleet, tmp_path):
    export_fleet(fleet, tmp_path)
    before = _snapshot_state(tmp_path)
    result = export_snapshot(
        [Page([{"id": "one"}], source="s")],
        tmp_path,
        snapshot_date=DAY,
        filters={"status": "READY", "name_contains": None, "deployment_ids": ["a/b", "c"]},
    )
    assert {k: v for k, v in _snapshot_state(tmp_path).items() if "filtered" not in k} == before
    assert result.out_dir.parent == tmp_path / "filtered"
    assert result.out_dir.name.startswith("deployment_ids-a_b+c__status-READY-")  # hashed: a/b
    assert result.manifest.filters == {"deployment_ids": ["a/b", "c"], "status": "READY"}
    assert "filtered (deployment_ids=['a/b', 'c'], status=READY)" in result.summary()
    assert read_table(result.out_dir, "deployments")["id"].tolist() == ["one"]
