"""`dims explain ID` against `dims export --from-json` of the same dump, whole process, same
run (issue 39 item 3).

The `real` fleet (benchmarks/fleetdata.py) is exported once into a dataset; then, taking
turns run by run, a fresh process exports the dump again (the yardstick: what a user waited
for to have the dataset) and a fresh process explains one deployment of it by id. Explain
reads only that deployment's rows (predicate pushdown on the Parquet files), so its time
should stay flat while the export's grows with the fleet.
Target: explain at most 0.2x the export at 100,000 deployments (and flat as the fleet grows:
the sizes below show it).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from .fleetdata import dump_path
from .timing import measure_interleaved, python, save, table

TARGET = 0.2


def _export(dump: Path, dataset: Path) -> None:
    python("-m", "dims._cli", "export", "--from-json", str(dump), "--out", str(dataset))


def _explain(dataset: Path, key: str) -> None:
    python("-m", "dims._cli", "explain", key, "--out", str(dataset))


def _an_id(dataset: Path) -> str:
    """The id of the fleet's middle deployment (neither the first row group nor the last)."""
    import pyarrow.dataset as ds

    ids = ds.dataset(str(dataset / "deployments"), format="parquet").to_table(columns=["id"])
    return str(ids["id"][ids.num_rows // 2].as_py())


def run(sizes: tuple[int, ...] = (2_000, 20_000, 100_000)) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for size in sizes:
        dump = dump_path(size, "real")
        runs = 5 if size <= 20_000 else 3
        with tempfile.TemporaryDirectory(prefix="dims-bench-explain-") as tmp:
            dataset, again = Path(tmp) / "dataset", Path(tmp) / "again"
            _export(dump, dataset)
            key = _an_id(dataset)
            _explain(dataset, key)  # warm: the files in the page cache
            export, explain = measure_interleaved(
                [
                    (f"{size} real: dims export --from-json",
                     functools.partial(_export, dump, again), runs),
                    (f"{size} real: dims explain ID", functools.partial(_explain, dataset, key),
                     runs),
                ]
            )  # fmt: skip
        ratio = explain.median_s / export.median_s
        results[f"real-{size}"] = {
            "timings": [export, explain],
            "ratio_to_export": ratio,
            "explain_s": explain.median_s,
            "target": TARGET,
            "met": ratio <= TARGET,
        }
        print(table([export, explain]))
        print(
            f"  dims explain ID: {explain.median_s:.2f} s, {ratio:.2f}x the export "
            f"(target <= {TARGET}x): {'met' if ratio <= TARGET else 'NOT met'}\n"
        )
    save("explain", {"whole_process": True, "results": results})
    return results


if __name__ == "__main__":
    run()
