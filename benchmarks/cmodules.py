"""What each C module buys: `dims export --from-json` with each one left out in turn.

Every case is a fresh process on the `real` profile (benchmarks/fleetdata.py), as a user runs
it, the cases taking turns run by run: the export as built, then the same with one module
left out (`DIMS_NO_C=<name>`, a benchmark-only knob, analysis/_compiled.py), so that its
maintained Python path runs. A module's saving is the time its absence adds, as a share of
the export's time with every module, taken round by round (paired) and the median kept.
Rule (issue 31): a module stays only where it saves at least 10% at 20,000 or 100,000
records.
"""

from __future__ import annotations

import functools
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .export import ours
from .fleetdata import dump_path
from .timing import ROOT, Timing, child_environment, measure_interleaved, save, table

#: The C modules, by the name DIMS_NO_C takes; none is left out where the list is empty.
MODULES = ("gather", "columnar", "unknownkeys")
#: The least share of the export's time a module must save to stay.
THRESHOLD = 0.10


def without(module: str, path: Path, out: Path) -> None:
    """`dims export --from-json` as `ours` runs it, with `module` left out."""
    argv = [sys.executable, "-m", "dims._cli", "export", "--from-json", str(path)]
    env = {**child_environment(), "DIMS_NO_C": module}
    subprocess.run(
        [*argv, "--out", str(out)], check=True, cwd=ROOT, capture_output=True,
        stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)


def run(sizes: tuple[int, ...] = (20_000, 100_000), modules: tuple[str, ...] = MODULES) -> Any:
    results: dict[str, Any] = {}
    for size in sizes:
        path = dump_path(size, "real")
        with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
            out = Path(tmp)
            ours(path, out / "warm")  # the file in the page cache, .pyc files written
            cases = [(f"{size} real: every C module", functools.partial(ours, path, out / "all"))]
            cases += [
                (f"{size} real: without {m}", functools.partial(without, m, path, out / m))
                for m in modules
            ]
            rounds = [
                measure_interleaved([(name, fn, 1) for name, fn in cases])
                for _ in range(11 if size <= 20_000 else 5)
            ]
        result = _paired(rounds, modules)
        results[f"real-{size}"] = result
        _summary(result, modules)
    save("cmodules", {"whole_process": True, "threshold": THRESHOLD, "results": results})
    return results


def _paired(rounds: list[list[Timing]], modules: tuple[str, ...]) -> dict[str, Any]:
    """Each case's median, and each module's saving: the median over rounds of the time the
    export took without it, less the time with every module, as a share of the latter (wall
    and CPU time: on a shared machine the CPU time moves less between spells)."""
    cases = list(zip(*rounds, strict=True))
    timings = [
        Timing(
            runs[0].name,
            statistics.median(r.median_s for r in runs),
            min(r.median_s for r in runs),
            max(r.median_s for r in runs),
            len(runs),
            statistics.median(r.cpu_s for r in runs),
        )
        for runs in cases
    ]
    saving, cpu_saving = {}, {}
    for n, module in enumerate(modules, start=1):
        saving[module] = statistics.median(
            (r[n].median_s - r[0].median_s) / r[0].median_s for r in rounds
        )
        cpu_saving[module] = statistics.median(
            (r[n].cpu_s - r[0].cpu_s) / r[0].cpu_s for r in rounds
        )
    return {"timings": timings, "saving": saving, "cpu_saving": cpu_saving}


def _summary(result: dict[str, Any], modules: tuple[str, ...]) -> None:
    print(table(result["timings"]))
    for m in modules:
        wall, cpu = result["saving"][m], result["cpu_saving"][m]
        verdict = "keep" if max(wall, cpu) >= THRESHOLD else "below the bar"
        print(
            f"  {m}: without it the export takes {wall:+.1%} longer, {cpu:+.1%} more CPU "
            f"time (medians of paired runs); bar {THRESHOLD:.0%} of the export: {verdict}"
        )
    print()


if __name__ == "__main__":
    run()
