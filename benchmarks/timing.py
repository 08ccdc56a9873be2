"""Repeat, time, summarise: the median of several runs with min and max."""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

RESULTS = Path(__file__).parent / "results"


@dataclass
class Timing:
    name: str
    median_s: float
    min_s: float
    max_s: float
    runs: int


def measure(name: str, fn: Callable[[], object], runs: int = 3) -> Timing:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return Timing(name, statistics.median(samples), min(samples), max(samples), runs)


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": psutil.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
    }


def table(rows: list[Timing]) -> str:
    lines = [f"{'case':<58} {'median s':>9} {'min s':>8} {'max s':>8}"]
    lines += [f"{r.name:<58} {r.median_s:>9.3f} {r.min_s:>8.3f} {r.max_s:>8.3f}" for r in rows]
    return "\n".join(lines)


def save(benchmark: str, payload: dict) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{benchmark}.json"
    payload = {"benchmark": benchmark, "machine": machine(), **payload}
    payload = json.loads(json.dumps(payload, default=lambda o: asdict(o)))
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path
