"""`--out s3://…` against a real S3 server (SeaweedFS on loopback, tests/object_store.py).

The same dump exported to a folder and to the server gives the same tables, read back from
the server by pyarrow (a plain dataset over the table prefixes), by DuckDB (through
`duckdb_connection`) and by `dims report` / `dims sql`. Then the safety promises of the
object-store publisher (analysis.storage.remote_target): a racing reader never sees part of
a snapshot, a killed export leaves nothing a reader picks up and the next export cleans it,
a second export waits for the first, and credentials never reach the output.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
from cli_in_process import run
from object_store import S3Server

from analysis.sandbox import fleet_dump_bytes, generate_fleet
from analysis.storage.dumps import read_dump
from analysis.storage.reader import duckdb_connection, read_arrow
from analysis.storage.writer import export_snapshot
from analysis.tables import TABLE_NAMES

DIMS = Path(sys.executable).parent / "dims"
D1, D2 = date(2025, 1, 1), date(2025, 1, 2)
AT = datetime(2025, 1, 1, 6, tzinfo=UTC)
DEADLINE_S = 60.0


def dump(tmp_path: Path, name: str, count: int, seed: int) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_bytes(fleet_dump_bytes(generate_fleet(count, seed=seed)))
    return path


def export(source: Path, out: str | Path, day: date = D1, **options: object):
    return export_snapshot(read_dump(source), out, snapshot_date=day, snapshot_at=AT, **options)


def bucket_path(uri: str) -> str:
    return uri.removeprefix("s3://")


def objects(server: S3Server, uri: str) -> dict[str, int]:
    """Every object under the dataset root: key → size."""
    selector = pafs.FileSelector(bucket_path(uri), recursive=True, allow_not_found=True)
    root = len(bucket_path(uri)) + 1
    return {
        info.path[root:]: info.size
        for info in server.filesystem().get_file_info(selector)
        if info.type == pafs.FileType.File
    }


def plain_dataset(server: S3Server, uri: str, table: str) -> pa.Table:
    """What a non-dims reader gets: every Parquet file under the table's prefix, Hive-style."""
    dataset = ds.dataset(
        f"{bucket_path(uri)}/{table}",
        filesystem=server.filesystem(),
        format="parquet",
        partitioning="hive",
    )
    return dataset.to_table()


def rows_of(table: pa.Table) -> list[dict[str, object]]:
    """The rows without the export's identity, in a stable order (for comparing exports)."""
    table = table.replace_schema_metadata(None)
    return sorted(table.to_pylist(), key=lambda row: json.dumps(row, sort_keys=True, default=str))


def test_an_export_to_s3_reads_back_like_the_same_export_to_a_folder(s3_server, s3_out, tmp_path):
    source = dump(tmp_path, "fleet", 60, seed=1)
    local = export(source, tmp_path / "local")
    remote = export(source, s3_out)

    assert remote.out_dir == s3_out and remote.rows == local.rows
    assert remote.paths["deployments"] == f"{s3_out}/deployments/snapshot_date={D1}/part-0.parquet"
    stored = objects(s3_server, s3_out)
    assert set(stored) == {
        *(f"{table}/snapshot_date={D1}/part-0.parquet" for table in TABLE_NAMES),
        f"_manifests/{D1}.json",
    }  # no staging, no lease left behind
    for table in TABLE_NAMES:
        mine = read_arrow(s3_out, table)
        assert rows_of(mine) == rows_of(read_arrow(tmp_path / "local", table)), table
        plain = plain_dataset(s3_server, s3_out, table)
        assert plain.num_rows == local.rows[table], table
        assert plain.schema.field("snapshot_at").type == pa.timestamp("us", tz="UTC")
    with duckdb_connection(s3_out) as connection:
        ((count, day),) = connection.sql(
            "select count(*), min(snapshot_date) from deployments"
        ).fetchall()
        ((history,),) = connection.sql("select count(*) from deployments_history").fetchall()
    assert (count, day, history) == (local.rows["deployments"], D1, local.rows["deployments"])
    manifest = json.loads(
        s3_server.filesystem().open_input_file(f"{bucket_path(s3_out)}/_manifests/{D1}.json").read()
    )
    assert manifest["files"] == local.manifest["files"] and manifest["dataset"] == "."


def test_the_cli_exports_reports_and_queries_on_s3(s3_server, s3_out, tmp_path, capsys):
    """`dims export --out s3://…`, then `dims report`, `dims sql` and `dims diff` read it."""
    for day, seed in ((D1, 1), (D2, 2)):
        source = dump(tmp_path, f"fleet{seed}", 40, seed=seed)
        code, out, err = run(
            capsys, "export", "--from-json", str(source), "--out", s3_out,
            "--snapshot-date", day.isoformat(),
        )  # fmt: skip
        assert code == 0, err
        assert f"wrote snapshot {day} to {s3_out}" in out
    code, out, err = run(capsys, "report", "--out", s3_out, "--json")
    assert code == 0, err
    written = json.loads(out)
    assert written["report"] == f"{s3_out}/reports/snapshot_date={D2}/report.html"
    assert "report.html" in written["files"] and "capacity_summary.parquet" in written["files"]
    html = s3_server.filesystem().open_input_file(bucket_path(written["report"])).read()
    assert b"<html" in html.lower()
    code, out, err = run(
        capsys, "sql", "--out", s3_out, "--json",
        "select snapshot_date, count(*) as n from deployments_history group by 1 order by 1",
    )  # fmt: skip
    assert code == 0, err
    assert [row["n"] for row in json.loads(out)] == [40, 40]
    code, out, err = run(capsys, "diff", "--out", s3_out, "--json")
    assert code == 0, err
    assert json.loads(out)["from"] == D1.isoformat()
