"""`dims report` against `dims export --from-json` of the same fleet, whole process, same run.

The `real` fleet (benchmarks/fleetdata.py) is exported once into a dataset; then, taking
turns run by run, a fresh process exports the same dump again (into a folder removed after
each run) and a fresh process runs `dims report` on the dataset (every table, the page and
its charts, the Parquet files of the report). The report is what a user waits for after
the export, so the export of the same fleet is its yardstick.
Target: the report at most 1.5x the export's time, at 20,000 and 100,000 deployments.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .fleetdata import dump_path
from .timing import measure_interleaved, python, save, table

TARGET = 1.5


def export(dump: Path, out: Path) -> None:
    python("-m", "dims._cli", "export", "--from-json", str(dump), "--out", str(out))


def report(dataset: Path) -> None:
    python("-m", "dims._cli", "report", "--out", str(dataset))


def _export_fresh(dump: Path, out: Path) -> None:
    export(dump, out)
    shutil.rmtree(out, ignore_errors=True)


def run(sizes: tuple[int, ...] = (20_000, 100_000)) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for size in sizes:
        dump = dump_path(size, "real")
        runs = 5 if size <= 20_000 else 3
        with tempfile.TemporaryDirectory(prefix="dims-bench-report-") as tmp:
            dataset = Path(tmp) / "dataset"
            export(dump, dataset)  # the dataset the report reads; .pyc files written
            report(dataset)  # warm: the tables in the page cache
            exported, reported = measure_interleaved(
                [
                    (f"{size} real: dims export --from-json",
                     functools.partial(_export_fresh, dump, Path(tmp) / "again"), runs),
                    (f"{size} real: dims report", functools.partial(report, dataset), runs),
                ]
            )  # fmt: skip
        ratio = reported.median_s / exported.median_s
        results[f"real-{size}"] = {
            "timings": [exported, reported],
            "ratio_to_export": ratio,
            "cpu_ratio_to_export": reported.cpu_s / exported.cpu_s,
            "target": TARGET,
            "met": ratio <= TARGET,
        }
        print(table([exported, reported]))
        print(
            f"  dims report: {ratio:.2f}x the export of the same fleet "
            f"(target <= {TARGET}x: {'met' if ratio <= TARGET else 'NOT met'}); CPU time "
            f"{reported.cpu_s / exported.cpu_s:.2f}x\n"
        )
    save("report", {"whole_process": True, "results": results})
    return results


if __name__ == "__main__":
    run()
