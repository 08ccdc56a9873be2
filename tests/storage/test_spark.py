"""Apache Spark reads the dataset as written: every table, with plain `spark.read.parquet`.

No reader options, no session settings about Parquet: what a user of Spark, Databricks or
EMR types first must give the right rows and types. One SparkSession in local mode serves
the module (the JVM's start is most of its cost); it binds to loopback only and runs no UI.

Java is a system package (`.ci/run` installs Debian's `openjdk-17-jre-headless` where it is
missing). Without Java the module is skipped with its reason, except in CI (`CI` set),
where a missing Java is a failure: the proof must not silently vanish there.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from docs_blocks import blocks_of
from repo import ROOT

from dims._dumps import read_dump
from dims._snapshot import export_snapshot
from dims._storage import read_table
from dims._tables import TABLE_NAMES, TABLE_SCHEMAS, TIMESTAMP
from dims.sandbox import generate_fleet

# One JVM for the module: both workers of `pytest -n 2` would otherwise start one each.
pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.xdist_group("spark"),
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

DAYS = (date(2026, 11, 1), date(2026, 11, 2))
#: Day 1 holds the first 260 deployments, day 2 all 300: per-day counts differ.
FLEET, DAY1_FLEET = 300, 260
#: A record without an id: it goes to rejected_records, so that table has rows too.
REJECTED = {"name": "no-id"}


#: Where `make test` puts the jars Spark's s3a:// needs (tools/spark-s3a-jars.sh: from PyPI,
#: since Maven Central, their home, is out of reach here).
S3A_JARS = Path(sys.prefix) / "spark-jars"
#: Hadoop 3.5's defaults (inside pyspark 4.3) give durations and sizes with units ("60s",
#: "64M") and name AWS SDK v2 credential providers; the hadoop-aws 3.3.1 that PyPI offers
#: reads plain numbers and uses SDK v1. These restate the same defaults in its terms. With
#: the hadoop-aws that matches Spark's Hadoop (`spark.jars.packages`
#: org.apache.hadoop:hadoop-aws:3.5.0, from Maven) only the endpoint and keys are needed.
S3A_COMPAT = {
    "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    "fs.s3a.threads.keepalivetime": "60",
    "fs.s3a.connection.timeout": "200000",
    "fs.s3a.connection.establish.timeout": "30000",
    "fs.s3a.connection.ttl": "300000",
    "fs.s3a.multipart.purge.age": "86400",
    "fs.s3a.multipart.size": "67108864",
    "fs.s3a.multipart.threshold": "134217728",
    "fs.s3a.block.size": "33554432",
    "fs.s3a.readahead.range": "65536",
    "fs.s3a.assumed.role.session.duration": "1800",
}


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def _require_java() -> None:
    if not _java():
        _missing(
            "java is missing: Spark needs Java 17 (Debian: apt-get install "
            "openjdk-17-jre-headless; .ci/run installs it)"
        )


def _missing(reason: str) -> None:
    """Skip saying why; in CI (`CI` set) fail instead: the proof must not vanish there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; in CI this test must run, not skip", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def fleet() -> Any:
    return generate_fleet(FLEET, seed=3, embed_deployment_type=True)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory, fleet: Any) -> dict[date, Path]:
    """One dump a day (what `--from-json` reads), each with one record that is rejected."""
    work = tmp_path_factory.mktemp("spark-dumps")
    found = {}
    for day, records in zip(DAYS, (fleet.deployments[:DAY1_FLEET], fleet.deployments), strict=True):
        found[day] = work / f"{day}.json"
        found[day].write_bytes(orjson.dumps([*records, REJECTED]))
    return found


def _export(dumps: dict[date, Path], fleet: Any, out: str | Path) -> None:
    """Both days into `out` (a folder or an s3:// URI), providers and repositories included."""
    for day, dump in dumps.items():
        export_snapshot(
            read_dump(dump, raw=True),
            out,
            providers=fleet.providers,
            repositories=fleet.repositories,
            snapshot_date=day,
            snapshot_at=datetime(day.year, day.month, day.day, 6, 30, 15, 123456, tzinfo=UTC),
        )


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, dumps: dict[date, Path], fleet: Any) -> Path:
    """The two days exported to a folder."""
    out = tmp_path_factory.mktemp("spark") / "dims-data"
    _export(dumps, fleet, out)
    return out


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local SparkSession: two cores, small memory, loopback only, no UI."""
    _require_java()
    from pyspark.sql import SparkSession

    scratch = tmp_path_factory.mktemp("spark-scratch")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("dims-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "512m")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.local.dir", str(scratch / "local"))
        # Shown in UTC; the instants compared below do not depend on it.
        .config("spark.sql.session.timeZone", "UTC")
    )
    if S3A_JARS.is_dir():  # for s3a:// (test_spark_reads_the_dataset_on_the_s3_server)
        builder = builder.config("spark.jars", ",".join(map(str, sorted(S3A_JARS.glob("*.jar")))))
        for key, value in S3A_COMPAT.items():
            builder = builder.config(f"spark.hadoop.{key}", value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def _spark_type(arrow: pa.DataType) -> str:
    """The Spark SQL type a reader must see for each Arrow type the dataset uses."""
    if arrow == TIMESTAMP:
        return "TimestampType()"
    simple = {
        pa.string(): "StringType()",
        pa.float64(): "DoubleType()",
        pa.int64(): "LongType()",
        pa.bool_(): "BooleanType()",
    }
    return simple[arrow]


def _pyarrow_rows(out: Path, table: str) -> list[tuple[Any, ...]]:
    """Every row of every snapshot, read by pyarrow, timestamps as epoch microseconds."""
    schema = TABLE_SCHEMAS[table]
    read = ds.dataset(out / table, format="parquet", partitioning="hive").to_table()
    columns = []
    for field in schema:
        values = read.column(field.name)
        if field.type == TIMESTAMP:
            values = values.cast(pa.int64())
        columns.append(values.to_pylist())
    days = [str(day) for day in read.column("snapshot_date").to_pylist()]
    return sorted(zip(*columns, days, strict=True), key=repr)


def _spark_rows(frame: Any, table: str) -> list[tuple[Any, ...]]:
    """The same from Spark: timestamps through unix_micros (the instant, no time zone)."""
    from pyspark.sql import functions as F

    selected = [
        F.unix_micros(F.col(field.name)) if field.type == TIMESTAMP else F.col(field.name)
        for field in TABLE_SCHEMAS[table]
    ]
    rows = frame.select(*selected, F.col("snapshot_date").cast("string")).collect()
    return sorted((tuple(row) for row in rows), key=repr)


def test_spark_reads_every_table_with_its_types_and_rows(spark: Any, dataset: Path) -> None:
    for table in TABLE_NAMES:
        frame = spark.read.parquet(str(dataset / table))
        schema = TABLE_SCHEMAS[table]
        seen = {field.name: repr(field.dataType) for field in frame.schema.fields}
        expected = {field.name: _spark_type(field.type) for field in schema}
        expected["snapshot_date"] = "DateType()"
        assert seen == expected, table
        spark_rows = _spark_rows(frame, table)
        arrow_rows = _pyarrow_rows(dataset, table)
        assert spark_rows, f"{table} is empty: the test would prove nothing about its values"
        assert len(spark_rows) == len(arrow_rows), table
        assert spark_rows == arrow_rows, table


def test_spark_sees_the_source_instants_and_partition_dates(
    spark: Any, dataset: Path, fleet: Any
) -> None:
    """The instants are the source's, not shifted by a unit or a zone: checked against the
    dump's own text, not against another reader of the same files."""
    from pyspark.sql import functions as F

    deployments = spark.read.parquet(str(dataset / "deployments"))
    latest = deployments.where(F.col("snapshot_date") == F.lit(DAYS[-1]))
    got = {
        row["id"]: (row["created_at"], row["snapshot_at"], row["snapshot_date"])
        for row in latest.select(
            "id",
            F.date_format("created_at", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX").alias("created_at"),
            F.unix_micros("snapshot_at").alias("snapshot_at"),
            "snapshot_date",
        ).collect()
    }
    at = datetime(2026, 11, 2, 6, 30, 15, 123456, tzinfo=UTC)
    at_micros = int(at.timestamp()) * 1_000_000 + at.microsecond
    assert len(got) == FLEET
    for record in fleet.deployments:
        created = datetime.fromisoformat(record["created_at"]).astimezone(UTC)
        assert got[record["id"]] == (
            created.isoformat(timespec="microseconds").replace("+00:00", "Z"),
            at_micros,
            DAYS[-1],
        )


def _docs_spark_block() -> str:
    """docs/dataset.md's Spark block (the docs test leaves it to this module's session)."""
    (block,) = [b for b in blocks_of(ROOT / "docs" / "dataset.md") if "pyspark" in b.text]
    assert block.not_run is not None and "test_spark.py" in block.not_run
    return block.text


def test_spark_aggregates_match_pandas(spark: Any, dataset: Path) -> None:
    from pyspark.sql import functions as F

    deployments = spark.read.parquet(str(dataset / "deployments"))
    per_day = {
        row["snapshot_date"]: row["count"]
        for row in deployments.groupBy("snapshot_date").count().collect()
    }
    assert per_day == {DAYS[0]: DAY1_FLEET, DAYS[1]: FLEET}

    # The block of docs/dataset.md, run in this session (its getOrCreate() is this one), its
    # ./dims-data this dataset (Spark reads a relative path from the JVM's folder, not
    # Python's); deployments without a cpu figure left out (SQL sums them to null, pandas to 0).
    block = _docs_spark_block().replace('"dims-data/', f'"{dataset}/')
    assert str(dataset) in block
    names: dict[str, Any] = {}
    exec(compile(block, "docs/dataset.md", "exec"), names)
    assert names["latest_day"] == DAYS[-1]
    latest = names["latest"].where(F.col("cpu").isNotNull())
    cpu_by_type = {
        row["deployment_type"]: row["cpu"]
        for row in latest.groupBy("deployment_type").agg(F.sum("cpu").alias("cpu")).collect()
    }
    frame = read_table(dataset, "deployments")  # pandas: the latest snapshot
    expected = frame.dropna(subset=["cpu"]).groupby("deployment_type", dropna=False)["cpu"].sum()
    assert len(cpu_by_type) >= 2
    expected_by_type = {None if pd.isna(kind) else kind: cpu for kind, cpu in expected.items()}
    assert cpu_by_type.keys() == expected_by_type.keys()
    for kind, cpu in expected_by_type.items():
        assert cpu_by_type[kind] == pytest.approx(cpu, rel=1e-12), kind
    assert Counter(frame.snapshot_date) == {DAYS[-1].isoformat(): FLEET}


def test_spark_reads_the_dataset_on_the_s3_server(
    spark: Any, dataset: Path, dumps: dict[date, Path], fleet: Any, s3_server: Any, s3_out: str
) -> None:
    """The same two days exported to the S3 server (SeaweedFS) read by Spark through s3a://,
    plain `spark.read.parquet` again: the same types and the same rows as the folder's."""
    if not S3A_JARS.is_dir():
        _missing(f"{S3A_JARS} is missing: `make test` puts the s3a jars there")
    _export(dumps, fleet, s3_out)
    for key, value in {
        "fs.s3a.endpoint": s3_server.endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": s3_server.access_key,
        "fs.s3a.secret.key": s3_server.secret_key,
    }.items():
        spark.conf.set(key, value)
    for table in TABLE_NAMES:
        frame = spark.read.parquet(f"{s3_out.replace('s3://', 's3a://', 1)}/{table}")
        expected = {field.name: _spark_type(field.type) for field in TABLE_SCHEMAS[table]}
        assert {f.name: repr(f.dataType) for f in frame.schema.fields} == {
            **expected,
            "snapshot_date": "DateType()",
        }, table
        assert _spark_rows(frame, table) == _pyarrow_rows(dataset, table), table
