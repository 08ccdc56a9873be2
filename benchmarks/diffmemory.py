"""Memory of `dims diff`: peak RSS of comparing the two latest snapshots at 20,000 and
100,000 deployments (the `real` profile of benchmarks/fleetdata.py; issue 39 item 5).

The fleet is exported once per size (`dims export --from-json`, measured as in
benchmarks/memory.py: its peak is the baseline, what the same machine needs to write the
day), and the second day is the first day's files hard-linked under the day before, as
benchmarks/history.py builds a history. `dims diff --json` then runs in a fresh process,
whole (start-up, both days read, the comparison and its output), and reports its own peak
RSS (`VmHWM`) while this process samples its process tree. Target: under 600 MiB at
100,000, whatever the export needs.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

from dims._storage import paths

from .fleetdata import dump_path
from .history import make_history
from .memory import child as export_child
from .memory import sampled
from .timing import save

SIZES = (20_000, 100_000)
LIMIT_MIB = 600
_CHILD = """
import contextlib, io, json, sys
from dims._cli._main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["diff", "--out", sys.argv[1], "--json"])
with open("/proc/self/status") as fh:
    peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"peak_rss_mib": peak / 1024, "code": code, "bytes": len(out.getvalue())}))
"""


def diff_child(dataset: Path) -> float:
    """The peak RSS (MiB) of one `dims diff --json` over `dataset`, its process tree's."""
    code, stdout, tree_peak = sampled([sys.executable, "-c", _CHILD, str(dataset)])
    report = json.loads(stdout.strip().splitlines()[-1])
    if code or report["code"] or not report["bytes"]:
        raise RuntimeError(f"dims diff failed over {dataset}: {report}")
    return max(tree_peak / 1024, float(report["peak_rss_mib"]))


def run(sizes: tuple[int, ...] = SIZES, runs: int = 2) -> dict[int, Any]:
    results: dict[int, Any] = {}
    print(f"{'deployments':>11} {'export MiB':>11} {'diff MiB':>9} {'ratio':>6} {'target':>7}")
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
            base = Path(tmp) / "base"
            export = export_child(str(dump_path(size, "real")), str(base))
            two = make_history(base, Path(tmp) / "two", 2, _only_day(base))
            peaks = [diff_child(two) for _ in range(runs)]
        peak = statistics.median(peaks)
        results[size] = {
            "export_peak_rss_mib": export["tree_peak_rss_mib"],
            "diff_peak_rss_mib": peak,
            "diff_peak_rss_max_mib": max(peaks),
            "ratio_to_export": peak / export["tree_peak_rss_mib"],
            "limit_mib": LIMIT_MIB,
            "runs": runs,
        }
        r = results[size]
        print(
            f"{size:>11,} {r['export_peak_rss_mib']:>11.0f} {peak:>9.0f} "
            f"{r['ratio_to_export']:>5.2f}x {'< ' + str(LIMIT_MIB):>7}"
        )
    large = max(sizes)
    met = results[large]["diff_peak_rss_mib"] < LIMIT_MIB
    print(f"  at {large:,}: target < {LIMIT_MIB} MiB {'met' if met else 'NOT met'}\n")
    save("diffmemory", {"limit_mib": LIMIT_MIB, "sizes": results})
    return results


def _only_day(base: Path) -> date:
    """The date of the one snapshot the export wrote to `base` (its manifest's name)."""
    days = sorted(p.stem for p in paths.manifest_path(base, date.today()).parent.glob("*.json"))
    if len(days) != 1:
        raise RuntimeError(f"expected one snapshot in {base}, found {days}")
    return date.fromisoformat(days[0])
