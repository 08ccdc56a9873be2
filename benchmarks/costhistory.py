"""The cost history by group (`cost_history`, what `dims report --by` writes as
`cost_history.parquet` and `dims history --by` prints) over a long history.

A fleet is exported once; the datasets of 30 and 1,095 daily snapshots are made from it by
hard links (`benchmarks.history.make_history`). Measured, whole process: `cost_history(out,
"label:team")` and, as the baseline in the same run, `dims sql` over `deployments_history`
(rows per snapshot date: the plain history view, every day). The figure is the ratio at
1,095 days. Target (COST_TARGET): at most 20x the plain history view, i.e. each day read,
priced and grouped in about the time DuckDB counts 20 days' rows.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from dims._snapshot import snapshot_from_dump

from .fleetdata import dump_path
from .history import HISTORY_QUERY, make_history
from .timing import measure_interleaved, python, save, table

FLEET = int(os.environ.get("DIMS_BENCH_COSTHISTORY_FLEET", "2000"))
LENGTHS = (30, 1_095)
LATEST = date(2026, 11, 1)
COST_TARGET = 20.0
COST = (
    "import sys; from dims._reports import cost_history as c; "
    "print(len(c(sys.argv[1], 'label:team')))"
)


def run(runs: int = 1, lengths: tuple[int, ...] = LENGTHS) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dims-bench-costhistory-") as tmp:
        work = Path(tmp)
        base = work / "base"
        snapshot_from_dump(dump_path(FLEET), base, snapshot_date=LATEST)
        cases: list[tuple[str, Callable[[], object], int]] = []
        for n in lengths:
            out = make_history(base, work / f"days-{n}", n)
            cases += [
                (f"cost_history (label:team) @ {n} days",
                 functools.partial(python, "-c", COST, str(out)), runs),
                (f"dims sql (deployments_history) @ {n} days",
                 functools.partial(python, "-m", "dims._cli", "sql", "--out", str(out),
                                   HISTORY_QUERY), runs),
            ]  # fmt: skip
        timings = measure_interleaved(cases)
    medians = {t.name: t.median_s for t in timings}
    ratios = {
        n: medians[f"cost_history (label:team) @ {n} days"]
        / medians[f"dims sql (deployments_history) @ {n} days"]
        for n in lengths
    }
    longest = max(lengths)
    met = ratios[longest] <= COST_TARGET
    result: dict[str, Any] = {
        "fleet": FLEET,
        "lengths": list(lengths),
        "baseline": "dims sql over deployments_history, same dataset, same run",
        "timings": timings,
        "ratios_to_history_view": ratios,
        "target": {"days": longest, "ratio": ratios[longest], "target": COST_TARGET, "met": met},
        "latest_day": str(LATEST),
        "oldest_day": str(LATEST - timedelta(days=longest - 1)),
    }
    print(table(timings))
    for n, ratio in ratios.items():
        print(f"  cost_history at {n:,} days: {ratio:.2f}x the plain history view")
    print(
        f"  target at {longest:,} days: <= {COST_TARGET}x — {'met' if met else 'NOT met'}"
        f" ({FLEET:,} deployments a day)"
    )
    save("costhistory", result)
    return result


if __name__ == "__main__":
    run()
