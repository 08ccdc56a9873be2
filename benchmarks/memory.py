"""Memory: peak RSS of `dims export --from-json` at 10k, 50k and 100k deployments (the
`real` profile of benchmarks/fleetdata.py).

Each export runs in a fresh Python process that reports its own peak RSS (`VmHWM` in
/proc/self/status; `ru_maxrss` is not used because Linux carries it over from the parent
across fork and exec), while this process samples the resident memory of the export's
whole process tree (its worker processes included): the peak reported is the larger of the
two. A process that only imports the same modules gives the baseline, so `net` is what the
export itself adds (its workers included). Targets: the whole
process under 1 GB at 100,000, and growing less than linearly with the fleet.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .fleetdata import dump_path
from .timing import child_environment, save

_CHILD = """
import json, sys, time
from dims._snapshot import snapshot_from_dump
def peak_kib():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
started = time.perf_counter()
records = 0
if sys.argv[1] != "-":
    records = snapshot_from_dump(sys.argv[1], sys.argv[2]).records
print(json.dumps({
    "peak_rss_mib": peak_kib() / 1024,
    "records": records,
    "seconds": time.perf_counter() - started,
}))
"""
LIMIT_MIB = 1024


def child(dump: str, out: str) -> dict[str, Any]:
    """The export's own report, and the peak of its whole process tree (its workers too)."""
    code, stdout, tree_peak = sampled([sys.executable, "-c", _CHILD, dump, out])
    if code:
        raise subprocess.CalledProcessError(code, "export child")
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    result["tree_peak_rss_mib"] = max(tree_peak / 1024, result["peak_rss_mib"])
    return result


def sampled(argv: list[str]) -> tuple[int, str, int]:
    """(exit code, stdout, the peak resident KiB of its process tree) of one child run from
    the repository, its tree's memory sampled every 20 ms while it runs."""
    process = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parent.parent,
        env=child_environment(),
    )
    tree_peak = 0
    while process.poll() is None:
        tree_peak = max(tree_peak, tree_rss_kib(process.pid))
        time.sleep(0.02)
    stdout, _ = process.communicate()
    return process.returncode, stdout, tree_peak


def tree_rss_kib(root: int) -> int:
    """Resident memory of `root` and its descendants now (sampled: a peak between two
    samples can be missed, so the process's own high-water mark is kept beside it)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    total = 0
    for pid in tree:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines()
                       if line.startswith("VmRSS:")), 0)  # fmt: skip
    return total


def run(sizes: tuple[int, ...] = (10_000, 50_000, 100_000), runs: int = 2) -> dict[int, Any]:
    base = statistics.median(child("-", "-")["peak_rss_mib"] for _ in range(runs))
    results = {}
    print(
        f"{'deployments':>11} {'dump MB':>8} {'peak RSS MiB':>13} {'net MiB':>8} "
        f"{'min':>7} {'max':>7} {'export s':>9}"
    )
    for size in sizes:
        path = dump_path(size, "real")
        samples = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
                samples.append(child(str(path), tmp))
                assert samples[-1]["records"] == size
        peaks = [s["tree_peak_rss_mib"] for s in samples]
        peak = statistics.median(peaks)
        results[size] = {
            "dump_mb": path.stat().st_size / 1e6,
            "peak_rss_mib": peak,
            "parent_peak_rss_mib": statistics.median(s["peak_rss_mib"] for s in samples),
            "peak_rss_min_mib": min(peaks),
            "peak_rss_max_mib": max(peaks),
            "net_mib": peak - base,
            "export_seconds": statistics.median(s["seconds"] for s in samples),
            "runs": runs,
        }
        r = results[size]
        print(
            f"{size:>11,} {r['dump_mb']:>8.0f} {peak:>13.0f} {r['net_mib']:>8.0f} "
            f"{min(peaks):>7.0f} {max(peaks):>7.0f} {r['export_seconds']:>9.2f}"
        )
    small, large = min(sizes), max(sizes)
    growth = results[large]["net_mib"] / results[small]["net_mib"]
    print(
        f"  import-only baseline {base:.0f} MiB; peak at {large:,}: "
        f"{results[large]['peak_rss_mib']:.0f} MiB (target < {LIMIT_MIB}); net memory grows "
        f"{growth:.1f}x for {large // small}x the records (target: less than linear)\n"
    )
    save(
        "memory",
        {
            "import_baseline_mib": base,
            "limit_mib": LIMIT_MIB,
            "net_growth": growth,
            "records_growth": large / small,
            "results": results,
        },
    )
    return results


if __name__ == "__main__":
    run()
