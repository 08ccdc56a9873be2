"""The worker pool against one process: whole `dims export --from-json`, paired runs.

Opt-in (`python -m benchmarks workers`, about 15 minutes on a quiet machine; `make bench`
leaves it out), for issue 36's question: does the pool (`analysis/_tables/_batches.py`,
`--workers`) save at least the 10% a C module must (docs/benchmarks.md)? Each pair runs the
export as a user does (the default workers) and with `--workers 0`, in turns whose order
alternates, at 100,000 real-shaped records (`dump_path`) and at a million (`write_real_dump`
into a temporary folder, removed after). Wall time is timed from outside; CPU time is the
children's (the export, its workers and threads). The saving is the median of the pairs'
ratios; their geometric mean and the CPU ratio are printed beside it, because on a shared
machine a second process also buys a larger share of the cores, which the wall time
credits to the pool.
"""

from __future__ import annotations

import math
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .fleetdata import dump_path, write_real_dump
from .timing import ROOT, child_environment, save

#: (records, pairs): a million takes a minute or more a run.
SIZES = ((100_000, 9), (1_000_000, 3))
ARMS = {"pool": (), "one": ("--workers", "0")}


def export_once(
    dump: Path, out: Path, options: tuple[str, ...], env: dict[str, str]
) -> tuple[float, float]:
    """(wall s, CPU s) of one whole `dims export --from-json`, its workers included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "dims._cli", "export", "--from-json", str(dump)]
    done = subprocess.run(
        [*command, "--out", str(out), *options],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode:
        raise RuntimeError(f"export of {dump} failed: {done.stderr.decode()[-500:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def paired(dump: Path, pairs: int, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """`pairs` pairs of the two arms, the order alternating; their ratios and medians."""
    export_once(dump, work / "warm", ARMS["one"], env)  # the file in the page cache
    runs = []
    for n in range(pairs):
        order = list(ARMS) if n % 2 == 0 else list(reversed(ARMS))
        runs.append({arm: export_once(dump, work / "out", ARMS[arm], env) for arm in order})
    wall = [r["pool"][0] / r["one"][0] for r in runs]
    cpu = [r["pool"][1] / r["one"][1] for r in runs]
    return {
        "pairs": pairs,
        "pool_wall_median_s": statistics.median(r["pool"][0] for r in runs),
        "one_wall_median_s": statistics.median(r["one"][0] for r in runs),
        "wall_ratio_median": statistics.median(wall),
        "wall_ratio_geomean": math.exp(statistics.mean(map(math.log, wall))),
        "cpu_ratio_median": statistics.median(cpu),
        "runs": runs,
    }


def run(sizes: tuple[tuple[int, int], ...] = SIZES) -> dict[str, Any]:
    env = child_environment()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="dims-bench-workers-") as tmp:
        work = Path(tmp)
        for records, pairs in sizes:
            dump = dump_path(records, "real") if records <= 100_000 else None
            if dump is None:
                dump = write_real_dump(work / f"fleet-{records}.json", records)
            results[str(records)] = paired(dump, pairs, work, env)
            _print(records, results[str(records)])
    save("workers", {"whole_process": True, "results": results})
    return results


def _print(records: int, r: dict[str, Any]) -> None:
    saving = 1 - r["wall_ratio_median"]
    print(
        f"{records:>10,} records, {r['pairs']} pairs: "
        f"with workers {r['pool_wall_median_s']:.2f} s, "
        f"one process {r['one_wall_median_s']:.2f} s; paired wall ratio median "
        f"{r['wall_ratio_median']:.3f} (saves {saving:.0%}; the bar: 10%), geometric mean "
        f"{r['wall_ratio_geomean']:.3f}; CPU ratio {r['cpu_ratio_median']:.2f}"
    )


if __name__ == "__main__":
    run()
