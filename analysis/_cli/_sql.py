"""`dims sql`: one DuckDB query over the dataset's views, printed as a table, Markdown, CSV or
JSON rows (`--format`).

A table and Markdown are for people: a float is shown with 12 significant digits at most, so
the sum of prices reads `869.75` and not `869.7500000000001` (the binary float's noise), and
every row and column is printed, never cut. CSV and JSON are for programs: each number as
Python's `repr` writes it, which reads back to the same float. Service text is escaped in
every format (dims._escape): `printable` for what a terminal shows (one row one line
whatever a name holds), `csv_cell` against a spreadsheet taking a cell for a formula.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import decimal
import io
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from .._escape import csv_cell, printable
from ._options import add_out
from ._output import say

#: Significant digits of a float in a table or Markdown: below a double's 15-17, so the
#: last bits of a sum are not shown; above any money or capacity figure dims computes.
READABLE_DIGITS = 12


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument(
        "--format",
        choices=sorted(FORMATS),
        default=None,
        help="table (default: aligned columns, numbers as people read them), markdown, "
        "csv or json (numbers exact)",
    )
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument("query", help='e.g. "select count(*) from deployments"')


def run(args: argparse.Namespace) -> int:
    """One DuckDB query over the dataset's views (dims._storage.duckdb_connection)."""
    from .._extras import require

    require("sql", "dims sql")  # before DuckDB is imported
    import duckdb

    from .._errors import ConfigurationError, DatasetError, first_line
    from .._storage import duckdb_connection

    if args.json and args.format not in (None, "json"):
        raise ConfigurationError(f"--json and --format {args.format} ask for two formats")
    shape = "json" if args.json else args.format or "table"
    connection = duckdb_connection(args.out, views=_views_named(args.query))
    try:
        try:
            cursor = connection.execute(args.query)
            names = [column[0] for column in cursor.description or ()]
            rows = cursor.fetchall() if names else []
        except duckdb.Error as exc:
            raise DatasetError(f"the query failed: {first_line(exc)}") from None
    finally:
        connection.close()
    if names or shape == "json":
        say(FORMATS[shape](names, rows))
    return 0


def _views_named(query: str) -> set[str] | None:
    """The views a query names, so that only those are made: a query of the latest snapshot
    never lists the history, one that reads no table (`select 1`) makes none. None (every
    view) when DuckDB cannot tell without a catalog, or the query names no table (`show
    tables`, `duckdb_views()`: it asks what there is)."""
    import duckdb

    try:
        named = set(duckdb.get_table_names(query))
        return named if named or _reads_no_table(query) else None
    except duckdb.Error:
        return None


#: The FROM clauses that read no table: none, a subquery (its own FROM is looked at), VALUES.
_NO_TABLE = {"EMPTY", "SUBQUERY", "EXPRESSION_LIST"}


def _reads_no_table(query: str) -> bool:
    """Does every statement of `query` select from no table, view or table function? Read
    from DuckDB's own parse tree (`json_serialize_sql`, which takes SELECT statements only:
    anything else reads a table, as far as this can tell)."""
    import duckdb

    with duckdb.connect() as connection:
        found = connection.execute("select json_serialize_sql(?)", [query]).fetchone()
    tree = json.loads(found[0]) if found else {"error": True}
    if tree.get("error", True):
        return False
    froms: list[Any] = []
    _collect_froms(tree["statements"], froms)
    return all(isinstance(f, dict) and f.get("type") in _NO_TABLE for f in froms)


def _collect_froms(node: Any, found: list[Any]) -> None:
    """Every `from_table` anywhere in a parse tree (subqueries in expressions included)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "from_table":
                found.append(value)
            _collect_froms(value, found)
    elif isinstance(node, list):
        for item in node:
            _collect_froms(item, found)


def readable(value: Any) -> str:
    """A cell as a person reads it: NULL, a float to READABLE_DIGITS significant digits (no
    exponent from 1 to 10^16, so a large figure is whole digits), service text escaped."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        shown = f"{value:.{READABLE_DIGITS}g}"
        if "e" in shown and 1 <= abs(value) < 1e16:
            shown = f"{value:.{max(READABLE_DIGITS - len(str(int(abs(value)))), 0)}f}"
            shown = shown.rstrip("0").rstrip(".") if "." in shown else shown
        return shown
    return printable(value)


def _numeric(rows: Sequence[Sequence[Any]], column: int) -> bool:
    numbers = int | float | decimal.Decimal
    return bool(rows) and all(isinstance(r[column], numbers | None) for r in rows)


def text_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as aligned columns (numbers to the right), every column and row, then how many;
    each name and cell one line, its control characters escaped (`printable`)."""
    shown_names = [printable(name) for name in names]
    cells = [[readable(value) for value in row] for row in rows]
    widths = [max([len(n), *(len(row[i]) for row in cells)]) for i, n in enumerate(shown_names)]
    numeric = [_numeric(rows, i) for i in range(len(names))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        ).rstrip()

    lines = [line(shown_names), line(["-" * width for width in widths])]
    lines += [line(row) for row in cells]
    lines.append(f"({len(rows):,} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def markdown_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table (numbers aligned right), `|` in a cell escaped."""

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(value.replace("|", "\\|") for value in values) + " |"

    rule = ["---:" if _numeric(rows, i) else "---" for i in range(len(names))]
    lines = [line([printable(name) for name in names]), "|" + "|".join(rule) + "|"]
    lines += [line([readable(value) for value in row]) for row in rows]
    return "\n".join(lines)


def _exact(value: Any) -> Any:
    """A cell for CSV: a number as `repr` writes it (read back, the same float), a date or a
    time in ISO 8601, text escaped to one line and guarded against formulas, NULL empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return csv_cell(printable(value))


def csv_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(printable(name)) for name in names])
    writer.writerows([_exact(value) for value in row] for row in rows)
    return buffer.getvalue().rstrip("\n")


def json_rows(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The rows as JSON objects: numbers exact, text as JSON escapes it (read back, the
    service's own strings), what JSON has no type for (a date, a decimal) as text."""
    records = [dict(zip(names, row, strict=True)) for row in rows]
    return json.dumps(records, indent=2, default=str)


FORMATS: dict[str, Callable[[Sequence[str], Sequence[Sequence[Any]]], str]] = {
    "table": text_table,
    "markdown": markdown_table,
    "csv": csv_table,
    "json": json_rows,
}
