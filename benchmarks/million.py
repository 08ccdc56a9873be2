"""A million real-shaped records from a dump: `dims export --from-json`, whole process, against
the same export of 100,000 records in the same run.

Opt-in (`python -m benchmarks million`, about 5 minutes; `make bench` leaves it out): the
dump is about 2.5 GB, written to a temporary folder (benchmarks/fleetdata.py's
`write_real_dump`, a chunk of 100,000 records at a time, so this process never holds a
million records) and removed after. Each export is a fresh `dims export --from-json`
process, timed from outside (start-up and imports included) while this process samples the
resident memory of its whole process tree (its workers included) every 20 ms.
Targets: the million's peak under 1 GB; its time per record within 1.2x of the 100,000
export's (the `real` 100,000 dump of `dump_path`, which is the million's first chunk).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .fleetdata import dump_path, write_real_dump
from .memory import LIMIT_MIB, tree_rss_kib
from .timing import ROOT, child_environment, save

MILLION = 1_000_000
REFERENCE = 100_000
PER_RECORD_TARGET = 1.2


def export_sampled(dump: Path, out: Path) -> dict[str, float]:
    """(wall seconds, peak MiB of the process tree) of one whole `dims export --from-json`."""
    command = [sys.executable, "-m", "dims._cli", "export", "--from-json", str(dump)]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=child_environment(),
    )
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss_kib(process.pid))
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    _, stderr = process.communicate()
    shutil.rmtree(out, ignore_errors=True)
    if process.returncode:
        raise RuntimeError(f"export of {dump} failed: {stderr.decode()[-500:]}")
    return {"seconds": seconds, "peak_mib": peak / 1024}


def _summary(samples: list[dict[str, float]], records: int, dump: Path) -> dict[str, Any]:
    seconds = [s["seconds"] for s in samples]
    peaks = [s["peak_mib"] for s in samples]
    median = statistics.median(seconds)
    return {
        "records": records,
        "dump_bytes": dump.stat().st_size,
        "median_s": median,
        "min_s": min(seconds),
        "max_s": max(seconds),
        "runs": len(samples),
        "us_per_record": median / records * 1e6,
        "peak_mib": max(peaks),
        "peak_median_mib": statistics.median(peaks),
    }


def run(runs: int = 3) -> dict[str, Any]:
    reference = dump_path(REFERENCE, "real")
    with tempfile.TemporaryDirectory(prefix="dims-bench-million-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        million = write_real_dump(work / "million.json", MILLION)
        written = time.perf_counter() - started
        print(f"  dump: {million.stat().st_size / 1e9:.2f} GB written in {written:.0f} s")
        export_sampled(reference, work / "warm")  # .pyc files written
        taken: dict[int, list[dict[str, float]]] = {REFERENCE: [], MILLION: []}
        for _ in range(runs):  # taking turns: a slow spell hits both
            taken[REFERENCE].append(export_sampled(reference, work / "out"))
            taken[MILLION].append(export_sampled(million, work / "out"))
        results = {
            REFERENCE: _summary(taken[REFERENCE], REFERENCE, reference),
            MILLION: _summary(taken[MILLION], MILLION, million),
        }
    per_record = results[MILLION]["us_per_record"] / results[REFERENCE]["us_per_record"]
    peak = results[MILLION]["peak_mib"]
    _print(results, per_record)
    result = {
        "whole_process": True,
        "limit_mib": LIMIT_MIB,
        "per_record_target": PER_RECORD_TARGET,
        "per_record_ratio": per_record,
        "memory_met": peak < LIMIT_MIB,
        "time_met": per_record <= PER_RECORD_TARGET,
        "results": results,
    }
    save("million", result)
    return result


def _print(results: dict[int, dict[str, Any]], per_record: float) -> None:
    print(f"{'records':>10} {'dump GB':>8} {'median s':>9} {'min s':>7} {'max s':>7} "
          f"{'µs/record':>10} {'peak MiB':>9}")  # fmt: skip
    for size, r in results.items():
        print(
            f"{size:>10,} {r['dump_bytes'] / 1e9:>8.2f} {r['median_s']:>9.2f} {r['min_s']:>7.2f} "
            f"{r['max_s']:>7.2f} {r['us_per_record']:>10.1f} {r['peak_mib']:>9.0f}"
        )
    peak = results[MILLION]["peak_mib"]
    print(
        f"  a million: peak {peak:.0f} MiB of the whole process tree (target < {LIMIT_MIB}: "
        f"{'met' if peak < LIMIT_MIB else 'NOT met'}); time per record {per_record:.2f}x the "
        f"100,000 export's (target <= {PER_RECORD_TARGET}x: "
        f"{'met' if per_record <= PER_RECORD_TARGET else 'NOT met'})\n"
    )


if __name__ == "__main__":
    run()
