"""`dims sql`: one DuckDB query over the dataset's views, printed as a table or JSON rows."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from .._escape import printable
from ._options import add_out
from ._output import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    parser.add_argument("query", help='e.g. "select count(*) from deployments"')


def run(args: argparse.Namespace) -> int:
    """One DuckDB query over the dataset's views (dims._storage.duckdb_connection)."""
    from .._extras import require

    require("sql", "dims sql")  # before DuckDB is imported
    import duckdb

    from .._errors import DatasetError, first_line
    from .._storage import duckdb_connection

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
    if args.json:
        records = [dict(zip(names, row, strict=True)) for row in rows]
        say(json.dumps(records, indent=2, default=str))
    elif names:
        say(_text_table(names, rows))
    return 0


def _views_named(query: str) -> set[str] | None:
    """The views a query names, so that only those are made: a query of the latest snapshot
    never lists the history. None (every view) when DuckDB cannot tell without a catalog."""
    import duckdb

    try:
        return set(duckdb.get_table_names(query))
    except duckdb.Error:
        return None


def _text_table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as aligned columns (numbers to the right), then how many there were; each name
    and cell one line, its control characters escaped (`printable`)."""
    names = [printable(name) for name in names]
    cells = [["NULL" if value is None else printable(value) for value in row] for row in rows]
    widths = [max([len(name), *(len(row[n]) for row in cells)]) for n, name in enumerate(names)]
    numeric = [
        bool(rows) and all(isinstance(row[n], int | float) or row[n] is None for row in rows)
        for n in range(len(names))
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        ).rstrip()

    lines = [line(names), line(["-" * width for width in widths])]
    lines += [line(row) for row in cells]
    lines.append(f"({len(rows):,} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)
