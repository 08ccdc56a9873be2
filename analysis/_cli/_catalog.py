"""`dims catalog FILE`: a DuckDB database of views over the dataset, which BI tools open as
one file (dims._storage.write_catalog); run again after an export to follow it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._options import add_out
from ._output import say


def catalog_file(text: str) -> Path:
    """FILE: a local path (a BI tool opens a file; the dataset may be on object storage)."""
    if "://" in text:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the catalog is a local file (its views may name s3:// files: --out)"
        )
    return Path(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        type=catalog_file,
        metavar="FILE",
        help="the DuckDB database to write, e.g. dims.duckdb (replaced whole when it exists)",
    )
    add_out(parser)
    parser.add_argument(
        "--json", action="store_true", help="print the file, the day and the views as JSON"
    )


def run(args: argparse.Namespace) -> int:
    from .._storage import write_catalog

    catalog = write_catalog(args.out, args.file)
    if args.json:
        say(
            json.dumps(
                {
                    "file": str(catalog.file),
                    "dataset": catalog.dataset,
                    "snapshot_date": catalog.snapshot_date.isoformat(),
                    "views": list(catalog.views),
                },
                indent=2,
            )
        )
        return 0
    say(
        f"catalog written to {catalog.file}: {len(catalog.views)} views over {catalog.dataset}, "
        f"the latest snapshot {catalog.snapshot_date}"
    )
    if "://" in catalog.dataset:
        say("its views read s3:// files: the tool supplies the credentials (see dims_catalog)")
    return 0
