"""Flatten and write: `dims export --from-json` vs the pandas baseline, and the orjson floor.

Ours: `analysis.snapshot.snapshot_from_dump` (what `dims export --from-json` runs), writing
every table of the snapshot. Baseline, as a user would write it: `json.load` +
`pandas.json_normalize` + stringifying object columns (json_normalize leaves lists and
mixed-type free-form values as Python objects, which `to_parquet` cannot write) +
`to_parquet` of the wide table alone. Floor: `orjson.loads` of the same bytes, with the
garbage collector paused as our path does (design.md, Performance notes); the plain call
(collector running) is reported as well.
"""

from __future__ import annotations

import functools
import gc
import json
import shutil
import tempfile
from pathlib import Path

import orjson
import pandas as pd

from analysis.snapshot import snapshot_from_dump

from .fleetdata import dump_path
from .timing import measure_interleaved, save, table

BASELINE = "json.load + pandas.json_normalize + stringify objects + to_parquet (wide table)"


def ours(path: Path, out: Path) -> int:
    result = snapshot_from_dump(path, out)
    shutil.rmtree(out, ignore_errors=True)
    return result.records


def baseline(path: Path, out: Path) -> int:
    with path.open(encoding="utf-8") as fh:
        records = json.load(fh)
    frame = pd.json_normalize(records)
    for column in frame.columns:
        if frame[column].dtype == object:
            frame[column] = frame[column].map(_text)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(out / "deployments.parquet", index=False)
    shutil.rmtree(out, ignore_errors=True)
    return len(frame)


def _text(value: object) -> object:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value != value:  # NaN from json_normalize
        return None
    return json.dumps(value, ensure_ascii=False)


def floor(path: Path, paused: bool) -> int:
    raw = path.read_bytes()
    if paused:
        gc.disable()
    try:
        return len(orjson.loads(raw))
    finally:
        gc.enable()


def run(sizes=(20_000, 100_000)) -> dict:
    results = {}
    for size in sizes:
        path = dump_path(size)
        runs, baseline_runs = (5, 3) if size <= 20_000 else (3, 1)
        with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
            out = Path(tmp)
            ours(path, out / "warm")  # imports, caches, file in the page cache
            timings = measure_interleaved(
                [
                    (
                        f"{size}: orjson.loads, GC paused (floor)",
                        functools.partial(floor, path, True),
                        runs,
                    ),
                    (f"{size}: orjson.loads, GC on", functools.partial(floor, path, False), runs),
                    (
                        f"{size}: dims export --from-json (every table)",
                        functools.partial(ours, path, out / "ours"),
                        runs,
                    ),
                    (
                        f"{size}: baseline: {BASELINE}"[:58],
                        functools.partial(baseline, path, out / "baseline"),
                        baseline_runs,
                    ),
                ]
            )
        floor_paused, floor_plain, mine, base = timings
        results[size] = {
            "dump_bytes": path.stat().st_size,
            "baseline": BASELINE,
            "timings": timings,
            "speedup_vs_baseline": base.median_s / mine.median_s,
            "ratio_to_floor": mine.median_s / floor_paused.median_s,
            "ratio_to_floor_gc_on": mine.median_s / floor_plain.median_s,
        }
        r = results[size]
        print(table(timings))
        print(
            f"  {r['speedup_vs_baseline']:.1f}x faster than the baseline (target >= 3x); "
            f"{r['ratio_to_floor']:.1f}x the orjson floor with GC paused "
            f"({r['ratio_to_floor_gc_on']:.1f}x plain orjson.loads; target <= 2x)\n"
        )
    save("export", {"results": results})
    return results


if __name__ == "__main__":
    run()
