"""Dirty data: `dims export --from-json` with 10% bad records, against the clean export.

Every case is a fresh process, as a user runs it, on dumps of the `real` profile
(benchmarks/fleetdata.py) of the same size:
- clean: the profile as it is;
- interleaved: every tenth record (the sixth of each ten) damaged, so that the compiled lane
  gives it to the careful reader: most are rejected (a number that is text, a date-time that
  is none, a name that is a number), one in five is read by the careful reader and kept (an
  integer beyond 64 bits in the free-form annotations, which orjson reads as a float);
- grouped, for reference: the same records, the damaged ones together at the end.
Target: the interleaved export at most 1.3x the clean one.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import orjson

from .export import ours
from .fleetdata import DATA, DATA_VERSION, SEED, dump_path, real_fleet
from .timing import measure_interleaved, save, table

TARGET = 1.3
#: One record in this many is damaged.
EVERY = 10
#: A stand-in the dump's text replaces with an integer beyond 64 bits (orjson writes none).
_BIG = "__beyond_int64__"
_BIG_TEXT = b"123456789012345678901234567890"


def _damage(record: dict[str, Any], n: int) -> None:
    """Damage one record, the kind of damage chosen by `n`."""
    spec = record.get("source_config", {}).get("resource_spec")
    kind = (n // EVERY) % 5
    if kind == 0 and spec is not None:
        spec["cpu"] = "2 cores"
    elif kind == 1:
        record["created_at"] = "yesterday"
    elif kind == 2:
        record["name"] = 5
    elif kind == 3 and spec is not None:
        spec["annotations"] = {**(spec.get("annotations") or {}), "budget": _BIG}
    else:
        record["updated_at"] = 17


def dirty_records(deployments: int, *, grouped: bool = False) -> list[dict[str, Any]]:
    """The `real` profile with one record in EVERY damaged; `grouped`: those at the end."""
    records = real_fleet(deployments).deployments
    bad = [n for n in range(len(records)) if n % EVERY == EVERY // 2]
    for n in bad:
        _damage(records[n], n)
    if grouped:
        chosen = set(bad)
        records = [r for n, r in enumerate(records) if n not in chosen] + [records[n] for n in bad]
    return records


def dirty_dump_path(deployments: int, *, grouped: bool = False) -> Path:
    """A dump of `dirty_records`, generated once and kept in benchmarks/data/."""
    order = "grouped" if grouped else "interleaved"
    path = DATA / f"fleet-{deployments}-seed{SEED}-real-dirty-{order}-v{DATA_VERSION}.json"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        text = orjson.dumps(dirty_records(deployments, grouped=grouped))
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(text.replace(f'"{_BIG}"'.encode(), _BIG_TEXT))
        tmp.replace(path)
    return path


def run(sizes: tuple[int, ...] = (20_000,), runs: int = 7) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for size in sizes:
        clean = dump_path(size, "real")
        interleaved = dirty_dump_path(size)
        grouped = dirty_dump_path(size, grouped=True)
        with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
            out = Path(tmp)
            for path in (clean, interleaved, grouped):  # page cache, .pyc files
                ours(path, out / "warm")
            timings = measure_interleaved(
                [
                    (f"{size} real: clean", functools.partial(ours, clean, out / "c"), runs),
                    (f"{size} real: 10% bad, interleaved",
                     functools.partial(ours, interleaved, out / "i"), runs),
                    (f"{size} real: 10% bad, grouped at the end",
                     functools.partial(ours, grouped, out / "g"), runs),
                ]
            )  # fmt: skip
        base, mixed, together = timings
        result = {
            "timings": timings,
            "interleaved_ratio": mixed.median_s / base.median_s,
            "grouped_ratio": together.median_s / base.median_s,
            # every thread and process counted: steadier than the wall time when the
            # machine is shared
            "interleaved_cpu_ratio": mixed.cpu_s / base.cpu_s,
            "grouped_cpu_ratio": together.cpu_s / base.cpu_s,
        }
        results[f"real-{size}"] = result
        print(table(timings))
        print(
            f"  10% bad records, interleaved: {result['interleaved_ratio']:.2f}x the clean "
            f"export (target <= {TARGET}x; CPU time {result['interleaved_cpu_ratio']:.2f}x); "
            f"grouped: {result['grouped_ratio']:.2f}x (CPU time "
            f"{result['grouped_cpu_ratio']:.2f}x)\n"
        )
    save("dirty", {"whole_process": True, "bad_share": 1 / EVERY, "results": results})
    return results


if __name__ == "__main__":
    run()
