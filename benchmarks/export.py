"""`dims export --from-json`, whole process, vs the pandas baseline and the orjson floor.

Every case is a fresh process, start-up and imports included, as a user runs it:
- ours: `python -m dims._cli export --from-json DUMP --out DIR` (every table);
- baseline, as a user would write it: `json.load` + `pandas.json_normalize` +
  stringifying object columns (json_normalize leaves lists and mixed-type free-form
  values as Python objects, which `to_parquet` cannot write) + `to_parquet` of the wide
  table alone;
- floor: `orjson.loads` of the same bytes with the garbage collector paused (and the
  plain call, collector running, for reference);
- for reference: dims in one process (`--workers 0`), and two compiled anchors writing the
  deployments' scalar columns alone (no child tables, checks, rejects or redaction):
  DuckDB's C++ JSON reader, and pyarrow's, which decodes straight into Arrow (from NDJSON).
Profiles (benchmarks/fleetdata.py): `real`, shaped like a real and newer service (the
targets apply to it), and `sandbox`, the fleet dims was built with. For each, the share of
records the compiled lane took is reported (measured in process: it is a count).
Targets: at least 3x the baseline at 20,000 and 5x at 100,000; at most 2x the floor.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

import orjson

from dims._dumps import read_dump
from dims._tables import Flattener

from .fleetdata import dump_path
from .timing import measure_interleaved, python, save, table

BASELINE = "json.load + pandas.json_normalize + stringify objects + to_parquet (wide table)"
TARGETS = {20_000: 3.0, 100_000: 5.0}
FLOOR_TARGET = 2.0

_BASELINE_CHILD = """
import json, sys
import pandas as pd
def text(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value != value:
        return None
    return json.dumps(value, ensure_ascii=False)
with open(sys.argv[1], encoding="utf-8") as fh:
    records = json.load(fh)
frame = pd.json_normalize(records)
for column in frame.columns:
    if frame[column].dtype == object:
        frame[column] = frame[column].map(text)
frame.to_parquet(sys.argv[2], index=False)
"""

_FLOOR_CHILD = """
import gc, sys
import orjson
raw = open(sys.argv[1], "rb").read()
if sys.argv[2] == "paused":
    gc.disable()
orjson.loads(raw)
"""


#: The compiled anchor: DuckDB's C++ JSON reader writing the deployments' scalar columns
#: (no child tables, no validation, no rejects, no redaction): what compiled code costs for
#: the easy part of the work.
_DUCKDB_CHILD = """
import sys
import duckdb
from dims import _spec as spec
fields = spec.deployment_scalar_fields()
types = {"number": "DOUBLE", "integer": "BIGINT", "boolean": "BOOLEAN"}
top = {f.path[0]: "JSON" if len(f.path) > 1 else "VARCHAR" for f in fields}
def pick(f):
    if len(f.path) == 1:
        return f'"{f.name}"'
    text = f"json_extract_string({f.path[0]}, '$.{'.'.join(f.path[1:])}')"
    return f'CAST({text} AS {types.get(f.kind, "VARCHAR")}) AS "{f.name}"'
select = ", ".join(map(pick, fields))
source = f"read_json(?, format='array', columns={top!r}, maximum_object_size=100000000)"
duckdb.connect().execute(
    f"COPY (SELECT {select} FROM {source}) TO '{sys.argv[2]}' (FORMAT parquet, COMPRESSION zstd)",
    [sys.argv[1]],
)
"""


#: The second compiled anchor: pyarrow's C++ JSON reader decoding straight into Arrow, with an
#: explicit schema derived from the spec, writing the same scalar columns (it reads NDJSON:
#: a copy is made before timing). What decoding into Arrow buffers costs without dims' rules.
_PYARROW_CHILD = """
import sys
import pyarrow as pa
import pyarrow.json as pj
import pyarrow.parquet as pq
from dims import _spec as spec
types = {"number": pa.float64(), "integer": pa.int64(), "boolean": pa.bool_()}
tree = {}
for f in spec.deployment_scalar_fields():
    node = tree
    for key in f.path[:-1]:
        node = node.setdefault(key, {})
    node[f.path[-1]] = types.get(f.kind, pa.string())
def fields(node):
    return [(k, pa.struct(fields(v)) if isinstance(v, dict) else v) for k, v in node.items()]
options = pj.ParseOptions(
    explicit_schema=pa.schema(fields(tree)), unexpected_field_behavior="ignore"
)
table = pj.read_json(sys.argv[1], parse_options=options)
while any(pa.types.is_struct(t) for t in table.schema.types):
    table = table.flatten()
pq.write_table(table, sys.argv[2], compression="zstd")
"""


def ours(path: Path, out: Path, *options: str) -> None:
    """`dims export --from-json` as a user runs it (with `options`, e.g. `--workers 0`)."""
    python("-m", "dims._cli", "export", *options, "--from-json", str(path), "--out", str(out))
    shutil.rmtree(out, ignore_errors=True)


def child(code: str, source: Path, out: Path) -> None:
    """A reference script: reads `source`, writes `out`/deployments.parquet."""
    out.mkdir(parents=True, exist_ok=True)
    python("-c", code, str(source), str(out / "deployments.parquet"))
    shutil.rmtree(out, ignore_errors=True)


def ndjson_copy(path: Path, folder: Path) -> Path:
    """The dump as NDJSON (one record a line), which pyarrow's JSON reader needs; read a
    page at a time, and each record written compact whatever its layout in the dump."""
    copy = folder / f"{path.stem}.ndjson"
    with copy.open("wb") as fh:
        for page in read_dump(path, raw=True):
            for record in page.records:
                fh.write(orjson.dumps(orjson.loads(memoryview(record))) + b"\n")
    return copy


def floor(path: Path, paused: bool) -> None:
    python("-c", _FLOOR_CHILD, str(path), "paused" if paused else "on")


def fast_path_share(path: Path) -> float:
    """The share of records the compiled lane took (the rest went to the careful reader)."""
    flattener = Flattener()
    for page in read_dump(path, raw=True):
        flattener.add_page(page)
        flattener.take()
    return flattener.typed_records / max(1, flattener.counts["records"])


def run(
    sizes: tuple[int, ...] = (20_000, 100_000), profiles: tuple[str, ...] = ("real", "sandbox")
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for profile in profiles:
        for size in sizes:
            path = dump_path(size, profile)
            runs, baseline_runs = (7, 3) if size <= 20_000 else (5, 2)
            with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
                out = Path(tmp)
                ours(path, out / "warm")  # the file in the page cache, .pyc files written
                ndjson = ndjson_copy(path, out)
                timings = measure_interleaved(
                    [
                        (f"{size} {profile}: orjson.loads, GC paused (floor)",
                         functools.partial(floor, path, True), runs),
                        (f"{size} {profile}: orjson.loads, GC on",
                         functools.partial(floor, path, False), runs),
                        (f"{size} {profile}: dims export --from-json",
                         functools.partial(ours, path, out / "ours"), runs),
                        (f"{size} {profile}: same, --workers 0 (one process)",
                         functools.partial(ours, path, out / "one", "--workers", "0"), runs),
                        (f"{size} {profile}: DuckDB read_json, deployments' scalars only",
                         functools.partial(child, _DUCKDB_CHILD, path, out / "duckdb"), runs),
                        (f"{size} {profile}: pyarrow read_json (NDJSON), same scalars",
                         functools.partial(child, _PYARROW_CHILD, ndjson, out / "pyarrow"), runs),
                        (f"{size} {profile}: baseline (json_normalize)",
                         functools.partial(child, _BASELINE_CHILD, path, out / "baseline"),
                         baseline_runs),
                    ]
                )  # fmt: skip
            floor_paused, floor_plain, mine, one, duck, arrow, base = timings
            share = fast_path_share(path)
            result = {
                "dump_bytes": path.stat().st_size,
                "baseline": BASELINE,
                "timings": timings,
                "fast_path_share": share,
                "speedup_vs_baseline": base.median_s / mine.median_s,
                "ratio_to_floor": mine.median_s / floor_paused.median_s,
                # every thread and process of the export counted: work, not waiting
                "cpu_ratio_to_floor": mine.cpu_s / floor_paused.cpu_s,
                "ratio_to_floor_gc_on": mine.median_s / floor_plain.median_s,
                "speedup_vs_baseline_one_process": base.median_s / one.median_s,
                "ratio_to_duckdb_scalars": mine.median_s / duck.median_s,
                "ratio_to_pyarrow_scalars": mine.median_s / arrow.median_s,
            }
            results[f"{profile}-{size}"] = result
            _summary(size, result)
    save("export", {"whole_process": True, "results": results})
    return results


def _summary(size: int, result: dict[str, Any]) -> None:
    """The run's table and its figures against the targets."""
    share = result["fast_path_share"]
    target = TARGETS.get(size)
    duck, arrow = result["timings"][4:6]
    print(table(result["timings"]))
    print(
        f"  whole process: {result['speedup_vs_baseline']:.1f}x the baseline"
        + (f" (target >= {target:.0f}x)" if target else "")
        + f"; {result['ratio_to_floor']:.1f}x the orjson floor with GC paused "
        f"(target <= {FLOOR_TARGET:.0f}x; {result['ratio_to_floor_gc_on']:.1f}x "
        f"plain orjson.loads; CPU time {result['cpu_ratio_to_floor']:.1f}x the floor's); "
        f"fast path {share:.1%} of records (target >= 99%)\n"
        f"  in one process (--workers 0): "
        f"{result['speedup_vs_baseline_one_process']:.1f}x the baseline; DuckDB's "
        f"compiled reader, deployments' scalar columns alone: {duck.median_s:.2f} s "
        f"(dims, every table, checked and redacted: "
        f"{result['ratio_to_duckdb_scalars']:.1f}x that); pyarrow's C++ JSON reader, "
        f"the same columns: {arrow.median_s:.2f} s (dims: "
        f"{result['ratio_to_pyarrow_scalars']:.1f}x that)\n"
    )


if __name__ == "__main__":
    run()
