"""Repeat, time, summarise: the median of several runs with min and max."""

from __future__ import annotations

import atexit
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

RESULTS = Path(__file__).parent / "results"
#: The repository: every timed child runs from here.
ROOT = Path(__file__).parent.parent


@dataclass
class Timing:
    name: str
    median_s: float
    min_s: float
    max_s: float
    runs: int
    #: Median CPU seconds (user + system) of this process and its waited-for children, the
    #: timed child processes and their workers included. Firmer than the wall time on a
    #: shared machine whose speed changes between spells, and it shows work moved to
    #: another thread or process, which the wall time hides.
    cpu_s: float = 0.0


def _cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children so far (children count as
    0 where the platform does not say, as on Windows)."""
    times = psutil.Process().cpu_times()
    return float(times.user + times.system + times.children_user + times.children_system)


def _run_once(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call."""
    cpu, started = _cpu_seconds(), time.perf_counter()
    fn()
    return time.perf_counter() - started, _cpu_seconds() - cpu


def _timing(name: str, samples: list[tuple[float, float]]) -> Timing:
    wall = [w for w, _ in samples]
    cpu = statistics.median(c for _, c in samples)
    return Timing(name, statistics.median(wall), min(wall), max(wall), len(wall), cpu)


def measure(name: str, fn: Callable[[], object], runs: int = 3) -> Timing:
    return _timing(name, [_run_once(fn) for _ in range(runs)])


def measure_interleaved(cases: list[tuple[str, Callable[[], object], int]]) -> list[Timing]:
    """Like `measure` for several (name, fn, runs) cases, taking turns run by run.

    On a shared, noisy machine a slow spell then hits every case alike, so the ratios
    between them hold better than when each case runs all its repetitions in a row.
    """
    samples: list[list[tuple[float, float]]] = [[] for _ in cases]
    for round_ in range(max(runs for _, _, runs in cases)):
        for (_name, fn, runs), taken in zip(cases, samples, strict=True):
            if round_ < runs:
                taken.append(_run_once(fn))
    return [_timing(name, taken) for (name, _fn, _runs), taken in zip(cases, samples, strict=True)]


@functools.cache
def child_environment() -> dict[str, str]:
    """The environment of every timed child process: Python's bytecode cached, as an installed
    dims has it (pip compiles a wheel's modules at install time).

    Without this, a shell with PYTHONDONTWRITEBYTECODE set (as on this project's machines)
    makes every child compile dims' modules from source, which adds about 0.07 s to each
    whole-process case and none to the references that import only compiled packages. The
    cache lives in a temporary folder, so the source tree stays untouched, and is filled
    before anything is timed.
    """
    cache = tempfile.mkdtemp(prefix="dims-bench-pycache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    compile_all = [sys.executable, "-m", "compileall", "-q", "analysis", "generated_client"]
    subprocess.run(compile_all, check=True, cwd=ROOT, env=env, capture_output=True)
    return env


def python(*args: str) -> None:
    """`python ARGS` as a timed child: from the repository's root, output captured, no stdin,
    in `child_environment()`; an error if it fails."""
    subprocess.run(
        [sys.executable, *args],
        check=True,
        cwd=ROOT,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=child_environment(),
    )


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": psutil.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
    }


def table(rows: list[Timing]) -> str:
    lines = [f"{'case':<58} {'median s':>9} {'min s':>8} {'max s':>8} {'cpu s':>8}"]
    lines += [
        f"{r.name:<58} {r.median_s:>9.3f} {r.min_s:>8.3f} {r.max_s:>8.3f} {r.cpu_s:>8.3f}"
        for r in rows
    ]
    return "\n".join(lines)


def save(benchmark: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{benchmark}.json"
    payload = {"benchmark": benchmark, "machine": machine(), **payload}
    payload = json.loads(json.dumps(payload, default=lambda o: asdict(o)))
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path
