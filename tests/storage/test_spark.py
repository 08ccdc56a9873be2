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

from analysis.sandbox import generate_fleet
from analysis.storage.dumps import read_dump
from analysis.storage.reader import read_table
from analysis.storage.writer import export_snapshot
from analysis.tables import TABLE_NAMES, TABLE_SCHEMAS, TIMESTAMP

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


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def _require_java() -> None:
    if _java():
        return
    reason = (
        "java is missing: Spark needs Java 17 (Debian: apt-get install openjdk-17-jre-headless;"
        " .ci/run installs it)"
    )
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; in CI this test must run, not skip", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def fleet() -> Any:
    return generate_fleet(FLEET, seed=3, embed_deployment_type=True)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, fleet: Any) -> Path:
    """Two snapshot days exported from dumps (the `--from-json` reader), providers and
    repositories included, one rejected record a day."""
    work = tmp_path_factory.mktemp("spark")
    out = work / "dims-data"
    for day, records in zip(DAYS, (fleet.deployments[:DAY1_FLEET], fleet.deployments), strict=True):
        dump = work / f"{day}.json"
        dump.write_bytes(orjson.dumps([*records, REJECTED]))
        export_snapshot(
            read_dump(dump, raw=True),
            out,
            providers=fleet.providers,
            repositories=fleet.repositories,
            snapshot_date=day,
            snapshot_at=datetime(day.year, day.month, day.day, 6, 30, 15, 123456, tzinfo=UTC),
        )
    return out


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One local SparkSession: two cores, small memory, loopback only, no UI."""
    _require_java()
    from pyspark.sql import SparkSession

    scratch = tmp_path_factory.mktemp("spark-scratch")
    session = (
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
        .getOrCreate()
    )
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


def test_spark_aggregates_match_pandas(spark: Any, dataset: Path) -> None:
    from pyspark.sql import functions as F

    deployments = spark.read.parquet(str(dataset / "deployments"))
    per_day = {
        row["snapshot_date"]: row["count"]
        for row in deployments.groupBy("snapshot_date").count().collect()
    }
    assert per_day == {DAYS[0]: DAY1_FLEET, DAYS[1]: FLEET}

    # Deployments without a cpu figure left out: SQL sums them to null, pandas to 0.
    latest = deployments.where(
        (F.col("snapshot_date") == F.lit(DAYS[-1])) & F.col("cpu").isNotNull()
    )
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
