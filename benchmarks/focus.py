"""`dims report --focus` against `dims report` alone on the same dataset, whole process, same
run (issue 39 item 1).

The `real` fleet (benchmarks/fleetdata.py) is exported once into a dataset; then, taking
turns run by run, a fresh process runs `dims report` and a fresh process runs `dims report
--focus bill.parquet` (the same report, and the FOCUS 1.2 bill of every priced deployment
and component). The bill is what `--focus` adds, so the report alone is its yardstick: time
(median of the runs) and peak memory (the process's own high-water mark, `VmHWM`, of one
more run of each).
Targets: `--focus` at most 1.3x the report's time at 20,000 and 100,000 deployments, and
its peak memory at most 1.3x the report's (the bill's columns are Arrow arrays beside the
report's tables, no Python object per row).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .fleetdata import dump_path
from .timing import ROOT, child_environment, measure_interleaved, python, save, table

TARGET = 1.3
MEMORY_TARGET = 1.3

#: `dims ARGS` in this process, then its peak RSS (MiB) on the last line of stdout.
_PEAK = """
import sys
from dims._cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as fh:
    kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(kib / 1024)
sys.exit(code)
"""


def report(dataset: Path, *extra: str) -> None:
    python("-m", "dims._cli", "report", "--out", str(dataset), *extra)


def peak_mib(dataset: Path, *extra: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, "report", "--out", str(dataset), *extra],
        check=True, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        env=child_environment(),
    )  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def run(sizes: tuple[int, ...] = (20_000, 100_000)) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for size in sizes:
        dump = dump_path(size, "real")
        runs = 5 if size <= 20_000 else 3
        with tempfile.TemporaryDirectory(prefix="dims-bench-focus-") as tmp:
            dataset = Path(tmp) / "dataset"
            bill = str(Path(tmp) / "bill.parquet")
            python("-m", "dims._cli", "export", "--from-json", str(dump), "--out", str(dataset))
            report(dataset, "--focus", bill)  # warm: the tables in the page cache
            alone, focus = measure_interleaved(
                [
                    (f"{size} real: dims report", functools.partial(report, dataset), runs),
                    (f"{size} real: dims report --focus bill.parquet",
                     functools.partial(report, dataset, "--focus", bill), runs),
                ]
            )  # fmt: skip
            memory = {"report": peak_mib(dataset), "focus": peak_mib(dataset, "--focus", bill)}
            rows = json.loads(
                subprocess.run(
                    [sys.executable, "-c", "import pyarrow.parquet as pq, sys; "
                     "print(pq.read_metadata(sys.argv[1]).num_rows)", bill],
                    check=True, capture_output=True, text=True, cwd=ROOT,
                ).stdout
            )  # fmt: skip
        ratio = focus.median_s / alone.median_s
        memory_ratio = memory["focus"] / memory["report"]
        met = ratio <= TARGET and memory_ratio <= MEMORY_TARGET
        results[f"real-{size}"] = {
            "timings": [alone, focus],
            "bill_rows": rows,
            "ratio_to_report": ratio,
            "cpu_ratio_to_report": focus.cpu_s / alone.cpu_s,
            "peak_rss_mib": memory,
            "memory_ratio_to_report": memory_ratio,
            "target": TARGET,
            "memory_target": MEMORY_TARGET,
            "met": met,
        }
        print(table([alone, focus]))
        print(
            f"  dims report --focus ({rows:,} rows): {ratio:.2f}x the report alone "
            f"(target <= {TARGET}x), CPU {focus.cpu_s / alone.cpu_s:.2f}x; peak RSS "
            f"{memory['focus']:.0f} MiB against {memory['report']:.0f} MiB, "
            f"{memory_ratio:.2f}x (target <= {MEMORY_TARGET}x): {'met' if met else 'NOT met'}\n"
        )
    save("focus", {"whole_process": True, "results": results})
    return results


if __name__ == "__main__":
    run()
