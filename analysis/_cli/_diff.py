"""`dims diff`: what changed between two snapshots, for a terminal, a script or a file.

The changes themselves come from `dims._reports` (`diff`, `changed_deployments`); this
module only chooses how they are shown.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from .._atomic import write_atomic
from .._escape import printable
from ._options import add_out, date, named_path
from ._output import say

if TYPE_CHECKING:
    import pandas as pd

    from .._reports import DiffResult

#: How many changed deployments `dims diff` lists on a terminal (all of them in --json).
_DIFF_SHOWN = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    parser.add_argument("--from", dest="from_date", type=date, help="default: second latest")
    parser.add_argument("--to", dest="to_date", type=date, help="default: the latest")
    parser.add_argument(
        "--tenant-id",
        dest="tenant_ids",
        action="append",
        metavar="TENANT",
        help="only this workspace (repeat it, or A,B; default: the whole organisation)",
    )
    parser.add_argument(
        "--changes-out",
        type=named_path,
        metavar="FILE",
        help="also write the changed deployments as Parquet (one row each, what changed)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print counts, totals and every change as JSON"
    )


def run(args: argparse.Namespace) -> int:
    from .._reports import changed_deployments
    from .._reports import diff as diff_snapshots

    tenants = [t.strip() for text in args.tenant_ids or () for t in text.split(",") if t.strip()]
    result = diff_snapshots(
        args.out, from_date=args.from_date, to_date=args.to_date, tenant_ids=tenants or None
    )
    changes = _plain(changed_deployments(result))
    if args.changes_out is not None:
        _write_parquet(changes, args.changes_out)
    if args.json:
        say(
            json.dumps(
                {
                    "from": result.from_date,
                    "to": result.to_date,
                    "tenant_ids": tenants or None,
                    "counts": result.counts(),
                    "notes": result.notes,
                    "capacity_totals": _plain(result.capacity_totals).to_dict(orient="records"),
                    "cost_totals": _plain(result.cost_totals).to_dict(orient="records"),
                    "cost_causes": _causes(result),
                    "changes": changes.to_dict(orient="records"),
                },
                indent=2,
                default=str,
            )
        )
        return 0
    say(result.summary())
    if len(changes):
        say(f"  changed deployments ({len(changes):,}; --json or --changes-out for all):")
        for row in changes.head(_DIFF_SHOWN).to_dict(orient="records"):
            shown = {key: printable(value or "-") for key, value in row.items()}
            versions = f"{shown['from_version']} → {shown['to_version']}"
            say(f"    {row['change']:<9} {shown['deployment_id']}  {shown['name']}  {versions}")
        if len(changes) > _DIFF_SHOWN:
            say(f"    … and {len(changes) - _DIFF_SHOWN:,} more")
    return 0


def _causes(result: DiffResult) -> list[dict[str, object]]:
    """The month's cost change by cause, each with the deployments behind it."""
    changes = result.cost_changes
    keyed = changes["detail"].where(changes["cause"] == "image_version", "")
    behind = changes.groupby([changes["cause"], keyed])["deployment_id"].agg(list)
    causes: list[dict[str, object]] = [
        {str(k): v for k, v in row.items()}
        for row in _plain(result.cost_causes()).to_dict(orient="records")
    ]
    for cause in causes:
        cause["deployment_ids"] = behind.get((cause["cause"], cause["detail"]), [])
    return causes


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells as Python objects, None for missing: what the JSON and `--changes-out` hold."""
    return frame.astype(object).where(frame.notna(), None)


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write the frame whole or not at all (`write_atomic`)."""
    write_atomic(Path(path), lambda temp: frame.to_parquet(temp, index=False))
