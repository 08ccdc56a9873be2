"""Long history: what a query about one snapshot costs when the dataset holds years of them.

A 20,000-deployment fleet is exported once (the `sandbox` profile, one real export); the
datasets of 1, 2, 30, 365 and 1,095 daily snapshots are then made from it by hard-linking its
part files and manifest into earlier `snapshot_date=` folders (the writer need not run
1,095 times; the files are the same bytes a daily export would write, day by day).

Measured at each length, whole process (start-up and imports included), as a user runs
them, each as a ratio to the 1-snapshot dataset (the baseline, measured side by side):
- `dims sql "select count(*), sum(cpu) from deployments"`: the latest snapshot;
- `dims report`: one snapshot's report; from two snapshots on it also compares the latest
  with the one before (a second snapshot read: compare with the 2-day case), and its
  history chart counts versions over every day (measured alone as `versions_over_time`);
- `dims diff`: the two latest snapshots (from 2 days on; its baseline is the 2-day case);
- `dims sql` over `deployments_history` (deployments per snapshot date): every day,
  legitimately;
- `dims sql` over `deployments_intervals` (stretches per current/removed): every day, each
  row's values compared with its deployment's previous snapshot; reported beside the plain
  history view at the same length (INTERVALS_CASE over HISTORY_CASE, no target given).
Target: one-snapshot queries cost the same at any length (ratio ≈ 1); `dims report` at
1,095 days no slower, relative to its 1-day run, than before the reports were vectorised
(REPORT_TARGET: 2.59x, the ratio recorded then).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from dims._snapshot import snapshot_from_dump
from dims._storage import paths
from dims._tables import TABLE_NAMES

from .fleetdata import dump_path
from .timing import Timing, measure_interleaved, python, save, table

FLEET = 20_000
LENGTHS = (1, 2, 30, 365, 1_095)
LATEST = date(2026, 11, 1)
LATEST_QUERY = "select count(*), sum(cpu) from deployments"
HISTORY_QUERY = "select snapshot_date, count(*) from deployments_history group by 1"
INTERVALS_QUERY = "select is_current, count(*) from deployments_intervals group by 1"
HISTORY_CASE = "dims sql (every snapshot)"
INTERVALS_CASE = "dims sql (validity intervals)"
#: `dims report` at 1,095 days over 1 day, as recorded before the reports were vectorised
#: (16 s against 6.2 s): the ratio it must not exceed.
REPORT_TARGET = 2.59
REPORT_CASE = "dims report"
#: What the report's history chart reads: deployments per version and day, every day.
ADOPTION = "import sys; from dims._reports import versions_over_time as v; v(sys.argv[1])"


def _dims(*args: str) -> None:
    python("-m", "dims._cli", *args)


def export_base(work: Path) -> Path:
    """One real export of the fleet (the `--from-json` path), dated LATEST."""
    base = work / "base"
    snapshot_from_dump(dump_path(FLEET), base, snapshot_date=LATEST)
    return base


def make_history(base: Path, out: Path, days: int, latest: date = LATEST) -> Path:
    """A dataset of `days` daily snapshots ending on `latest` (the day `base` holds): hard
    links to `base`'s files."""
    for name in TABLE_NAMES:
        source = paths.partition_dir(base, name, latest)
        for back in range(days):
            folder = paths.partition_dir(out, name, latest - timedelta(days=back))
            folder.mkdir(parents=True)
            for part in source.iterdir():
                os.link(part, folder / part.name)
    manifests = paths.manifest_path(out, latest).parent
    manifests.mkdir(parents=True)
    for back in range(days):
        os.link(paths.manifest_path(base, latest), manifests / f"{latest - timedelta(back)}.json")
    return out


def _ratios(timings: list[Timing]) -> dict[str, dict[str, float]]:
    """Each case's median at each length over its median at the shortest it ran at (one
    snapshot; two for `dims diff`, which needs two)."""
    by_case: dict[str, dict[str, float]] = {}
    for timing in timings:
        case, _, length = timing.name.rpartition(" @ ")
        by_case.setdefault(case, {})[length] = timing.median_s
    return {
        case: {
            length: seconds / next(iter(medians.values())) for length, seconds in medians.items()
        }
        for case, medians in by_case.items()
    }


def run(runs: int = 3, lengths: tuple[int, ...] = LENGTHS) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dims-bench-history-") as tmp:
        work = Path(tmp)
        base = export_base(work)
        datasets = {n: make_history(base, work / f"days-{n}", n) for n in lengths}
        cases: list[tuple[str, Callable[[], object], int]] = []
        for n, out in datasets.items():
            where = ("--out", str(out))
            cases += [
                (f"dims sql (latest snapshot) @ {n} days",
                 functools.partial(_dims, "sql", *where, LATEST_QUERY), runs),
                (f"dims report @ {n} days", functools.partial(_dims, "report", *where), runs),
                (f"{HISTORY_CASE} @ {n} days",
                 functools.partial(_dims, "sql", *where, HISTORY_QUERY), runs),
                (f"{INTERVALS_CASE} @ {n} days",
                 functools.partial(_dims, "sql", *where, INTERVALS_QUERY), runs),
                (f"versions_over_time (the report's chart) @ {n} days",
                 functools.partial(python, "-c", ADOPTION, str(out)), runs),
            ]  # fmt: skip
            if n >= 2:  # a diff needs two snapshots
                cases.append(
                    (f"dims diff (two latest) @ {n} days",
                     functools.partial(_dims, "diff", *where), runs)
                )  # fmt: skip
        timings = measure_interleaved(cases)
        shutil.rmtree(work / "base")
    ratios = _ratios(timings)
    result: dict[str, Any] = {
        "fleet": FLEET,
        "lengths": list(lengths),
        "baseline": "the same command on the shortest history it runs on (1 day; diff: 2)",
        "timings": timings,
        "ratios_to_one_snapshot": ratios,
    }
    report = _report_target(result, max(lengths))
    intervals = _intervals_ratio(result, timings, max(lengths))
    print(table(timings))
    for case, by_length in ratios.items():
        shown = ", ".join(f"{length}: {ratio:.2f}x" for length, ratio in by_length.items())
        print(f"  {case}: {shown}")
    if report:
        print(report)
    print(intervals)
    print()
    save("history", result)
    return result


def _intervals_ratio(result: dict[str, Any], timings: list[Timing], length: int) -> str:
    """The intervals view's time over the plain history view's at `length` days (kept in
    `result`), and the line that says it; no target was given, the figure is reported."""
    medians = {t.name: t.median_s for t in timings}
    at = f" @ {length} days"
    ratio = medians[INTERVALS_CASE + at] / medians[HISTORY_CASE + at]
    result["intervals_over_history"] = {"days": length, "ratio": ratio}
    return (
        f"  deployments_intervals at {length:,} days: {ratio:.2f}x deployments_history's time "
        "(no target: reported)"
    )


def _report_target(result: dict[str, Any], length: int) -> str:
    """`dims report`'s ratio at the longest history against REPORT_TARGET: kept in `result`,
    and the line that says it ("" when the report did not run at that length)."""
    ratio = result["ratios_to_one_snapshot"].get(REPORT_CASE, {}).get(f"{length} days")
    if ratio is None:
        return ""
    met = ratio <= REPORT_TARGET
    result["report_target"] = {"days": length, "ratio": ratio, "target": REPORT_TARGET, "met": met}
    return (
        f"  dims report at {length:,} days: {ratio:.2f}x its 1-day time (target <= "
        f"{REPORT_TARGET}x, the ratio before this round: {'met' if met else 'NOT met'})"
    )


if __name__ == "__main__":
    run()
