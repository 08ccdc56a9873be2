"""`dims sql "select 1"` against the interpreter alone, whole process (issue 39 item 4).

A query that reads no table is what a user's first `dims sql` (or a script's check that the
dataset is there) costs: start-up, the dataset found, DuckDB, the answer. Baseline:
`python -c pass`, run in pairs with the query (one right after the other, so a slow spell
hits both); the figure is the median of the pairs' differences.
Target: at most 0.25 s more than the interpreter (no pandas, no report modules imported).
Also `dims sql "select count(*) from deployments"`, which makes one view over the latest
day's files.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from .fleetdata import dump_path
from .timing import python, save

TARGET_S = 0.25
#: The queries timed, each against its own paired `python -c pass`.
QUERIES = ("select 1", "select count(*) from deployments")


def _seconds(*args: str) -> float:
    started = time.perf_counter()
    python(*args)
    return time.perf_counter() - started


def run(runs: int = 15, deployments: int = 2_000) -> dict[str, Any]:
    results: dict[str, Any] = {"target_s": TARGET_S, "deployments": deployments, "queries": {}}
    with tempfile.TemporaryDirectory(prefix="dims-bench-sql-") as tmp:
        dataset = Path(tmp) / "dataset"
        dump = str(dump_path(deployments, "real"))
        python("-m", "dims._cli", "export", "--from-json", dump, "--out", str(dataset))
        for query in QUERIES:
            sql = ("-m", "dims._cli", "sql", "--out", str(dataset), query)
            python(*sql)  # warm: the .pyc files and the OS's file cache
            pairs = [(_seconds("-c", "pass"), _seconds(*sql)) for _ in range(runs)]
            base = statistics.median(b for b, _ in pairs)
            whole = statistics.median(q for _, q in pairs)
            added = statistics.median(q - b for b, q in pairs)
            results["queries"][query] = {
                "runs": runs,
                "python_c_pass_median_s": base,
                "dims_sql_median_s": whole,
                "added_median_s": added,
                "added_min_s": min(q - b for b, q in pairs),
                "added_max_s": max(q - b for b, q in pairs),
            }
            met = "met" if added <= TARGET_S else "NOT met"
            print(
                f"  dims sql {query!r}: {whole:.3f} s, python -c pass {base:.3f} s; "
                f"adds {added:.3f} s (median of {runs} pairs; target <= {TARGET_S} s: {met})"
            )
    save("sql", results)
    return results


if __name__ == "__main__":
    run()
