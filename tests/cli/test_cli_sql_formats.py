"""`dims sql --format table|markdown|csv|json` (issue 37, item 4): a table shows numbers as
people read them and cuts nothing; CSV and JSON carry every float exactly; service text is
escaped in all four.

Queried over a real dataset (an export of the sandbox's fleet); the expected values come
from DuckDB itself, asked the same query in the test.
"""

from __future__ import annotations

import csv
import io
import json

import duckdb
import pytest
from cli_in_process import run
from fleet_math import export_fleet

from dims._cli._sql import READABLE_DIGITS
from dims.sandbox import generate_fleet

#: Sums whose binary floats carry noise past the 15th digit (0.30000000000000004, ...).
NOISY = "select 0.1::double + 0.2::double as tenth, 100.15::double * 3 as price"


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    fleet = generate_fleet(40, seed=4)
    folder = tmp_path_factory.mktemp("sql")
    export_fleet(fleet.deployments, dict(fleet.deployment_types), folder, "2025-06-01")
    return folder


def duckdb_row(query: str) -> tuple:
    with duckdb.connect() as db:
        return db.execute(query).fetchone()


def test_a_table_shows_floats_without_their_noise(capsys, out):
    tenth, price = duckdb_row(NOISY)
    assert repr(tenth) != "0.3" and repr(price) != "300.45"  # the noise is there to hide
    code, stdout, _ = run(capsys, "sql", "--out", str(out), NOISY)
    assert code == 0
    header, _, row, count = stdout.splitlines()
    assert header.split() == ["tenth", "price"]
    assert row.split() == [f"{tenth:.{READABLE_DIGITS}g}", f"{price:.{READABLE_DIGITS}g}"]
    assert row.split() == ["0.3", "300.45"] and count == "(1 row)"


@pytest.mark.parametrize("shape", ["csv", "json"])
def test_csv_and_json_carry_each_float_exactly(capsys, out, shape):
    code, stdout, _ = run(capsys, "sql", "--out", str(out), "--format", shape, NOISY)
    assert code == 0
    if shape == "json":
        (row,) = json.loads(stdout)
        values = (row["tenth"], row["price"])
    else:
        header, *rows = list(csv.reader(io.StringIO(stdout)))
        assert header == ["tenth", "price"] and len(rows) == 1
        values = tuple(float(cell) for cell in rows[0])
    assert values == duckdb_row(NOISY)


def test_json_flag_is_format_json_and_refuses_another_format(capsys, out):
    query = "select id, name from deployments order by id"
    _, flagged, _ = run(capsys, "sql", "--out", str(out), "--json", query)
    _, formatted, _ = run(capsys, "sql", "--out", str(out), "--format", "json", query)
    assert flagged == formatted and len(json.loads(flagged)) == 40
    code, stdout, stderr = run(capsys, "sql", "--out", str(out), "--json", "--format", "csv", query)
    assert code == 1 and stdout == ""
    assert stderr.strip() == "dims sql: error: --json and --format csv ask for two formats"


def test_a_wide_table_prints_every_column_and_row(capsys, out):
    """`select *` of deployments: every column of the view in the header, every row."""
    code, stdout, _ = run(
        capsys, "sql", "--out", str(out), "--format", "csv", "select * from deployments"
    )
    assert code == 0
    header, *rows = list(csv.reader(io.StringIO(stdout)))
    code, table, _ = run(capsys, "sql", "--out", str(out), "select * from deployments")
    lines = table.splitlines()
    assert len(header) > 30 and len(rows) == 40
    assert lines[0].split() == header and lines[-1] == "(40 rows)" and len(lines) == 2 + 40 + 1


def test_markdown_is_a_table_a_renderer_reads(capsys, out):
    query = "select name, 1.5::double * 3 as n from deployments order by name limit 3"
    code, stdout, _ = run(capsys, "sql", "--out", str(out), "--format", "markdown", query)
    assert code == 0
    header, rule, *rows = stdout.splitlines()
    assert header == "| name | n |" and rule == "|---|---:|"
    names = [
        r[0] for r in duckdb_rows_of(out, "select name from deployments order by name limit 3")
    ]
    assert rows == [f"| {name} | 4.5 |" for name in names]


def duckdb_rows_of(out, query: str) -> list[tuple]:
    code_json = run_json(out, query)
    return [tuple(row.values()) for row in code_json]


def run_json(out, query: str) -> list[dict]:
    from cli_in_process import run_captured

    return json.loads(run_captured("sql", "--out", str(out), "--json", query).out)


def test_csv_guards_formulas_and_escapes_control_characters(capsys, out):
    query = (
        "select '=HYPERLINK(1)' as a, 'x' || chr(27) || '[2J' as b,"
        " 'two' || chr(10) || 'lines' as c"
    )
    code, stdout, _ = run(capsys, "sql", "--out", str(out), "--format", "csv", query)
    assert code == 0
    assert stdout.splitlines() == ["a,b,c", "'=HYPERLINK(1),x\\u001b[2J,two\\nlines"]
