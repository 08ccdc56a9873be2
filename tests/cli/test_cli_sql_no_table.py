"""`dims sql` makes no view for a query that reads no table (`select 1`: issue 39 item 4,
no history registered, so no pandas), and every view for one that asks what there is, or
reads a view from a subquery, a set operation or a catalog function."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import run
from fleet_math import export_fleet

from dims._cli._sql import _reads_no_table
from dims.sandbox import generate_fleet


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("d")
    fleet = generate_fleet(10, seed=5)
    export_fleet(fleet.deployments, dict(fleet.deployment_types), out, "2025-06-01")
    return out


def _csv(capsys, out: Path, query: str) -> list[str]:
    code, printed, err = run(capsys, "sql", "--out", str(out), "--format", "csv", query)
    assert code == 0, err
    return printed.splitlines()[1:]


@pytest.mark.parametrize(
    ("query", "none"),
    [
        ("select 1", True),
        ("select 1 + 1 as two, 'a' union all select 3, 'b'", True),
        ("values (1), (2)", True),
        ("select (select 1)", True),
        ("show tables", False),
        ("select count(*) from duckdb_views()", False),
        ("select (select count(*) from deployments_history)", False),
        ("select 1 union all select count(*) from deployments", False),
        ("with x as (select 1) select * from x", False),
        ("create table t as select 1", False),  # not a SELECT: DuckDB's tree is not read
    ],
)
def test_a_query_that_reads_no_table_is_told_apart(query, none):
    assert _reads_no_table(query) is none


def test_catalog_queries_still_see_every_view(capsys, dataset):
    """A query naming no view but a catalog function lists the history views too."""
    views = _csv(capsys, dataset, "select view_name from duckdb_views() where not internal")
    assert {f"{t}_history" for t in ("deployments", "repositories")} <= set(views)
    assert "deployments" in _csv(capsys, dataset, "show tables")
    (count,) = _csv(capsys, dataset, "select (select count(*) from deployments_history)")
    assert int(count) == 10
    assert _csv(capsys, dataset, "select 1 as one") == ["1"]
