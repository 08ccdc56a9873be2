"""`dims metrics` against `dims export --from-json` of the same fleet, whole process, same
run (issue 39 item 2).

The `real` fleet (benchmarks/fleetdata.py) is exported once into a dataset; then, taking
turns run by run, a fresh process exports the same dump again (into a folder removed after
each run) and a fresh process runs `dims metrics` on the dataset (its text to /dev/null, at
the default `--max-series`). A scrape follows the export, so the export of the same fleet
is its yardstick; the size of the text (bytes, series) is printed beside it.
Target: `dims metrics` at most 1x the export's time at 100,000 deployments (20,000 shown).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .fleetdata import dump_path
from .timing import ROOT, child_environment, measure_interleaved, python, save, table

TARGET = 1.0


def export(dump: Path, out: Path) -> None:
    python("-m", "dims._cli", "export", "--from-json", str(dump), "--out", str(out))


def metrics(dataset: Path) -> None:
    python("-m", "dims._cli", "--quiet", "metrics", "--out", str(dataset))


def _export_fresh(dump: Path, out: Path) -> None:
    export(dump, out)
    shutil.rmtree(out, ignore_errors=True)


def _text(dataset: Path) -> str:
    return subprocess.run(
        [sys.executable, "-m", "dims._cli", "--quiet", "metrics", "--out", str(dataset)],
        check=True, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        env=child_environment(),
    ).stdout  # fmt: skip


def run(sizes: tuple[int, ...] = (20_000, 100_000)) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for size in sizes:
        dump = dump_path(size, "real")
        runs = 5 if size <= 20_000 else 3
        with tempfile.TemporaryDirectory(prefix="dims-bench-metrics-") as tmp:
            dataset = Path(tmp) / "dataset"
            export(dump, dataset)  # the dataset metrics reads; .pyc files written
            text = _text(dataset)  # warm: the tables in the page cache
            exported, measured = measure_interleaved(
                [
                    (f"{size} real: dims export --from-json",
                     functools.partial(_export_fresh, dump, Path(tmp) / "again"), runs),
                    (f"{size} real: dims metrics", functools.partial(metrics, dataset), runs),
                ]
            )  # fmt: skip
        ratio = measured.median_s / exported.median_s
        series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
        results[f"real-{size}"] = {
            "timings": [exported, measured],
            "ratio_to_export": ratio,
            "cpu_ratio_to_export": measured.cpu_s / exported.cpu_s,
            "text_bytes": len(text.encode()),
            "series": series,
            "target": TARGET if size >= 100_000 else None,
            "met": ratio <= TARGET if size >= 100_000 else None,
        }
        verdict = (
            f"target <= {TARGET}x: {'met' if ratio <= TARGET else 'NOT met'}"
            if size >= 100_000
            else f"shown; the target, <= {TARGET}x, is at 100,000"
        )
        print(table([exported, measured]))
        print(
            f"  dims metrics ({series:,} series, {len(text.encode()):,} bytes): {ratio:.2f}x "
            f"the export of the same fleet ({verdict}); CPU time "
            f"{measured.cpu_s / exported.cpu_s:.2f}x\n"
        )
    save("metrics", {"whole_process": True, "results": results})
    return results


if __name__ == "__main__":
    run()
