"""`python -m benchmarks [name ...]`: run every benchmark (or the named ones) in order.

Each prints its table and writes benchmarks/results/<name>.json with the machine it ran on.
The opt-in ones (OPT_IN: `million`, a 2.5 GB dump and about 5 minutes; `workers`, the pool
against one process at 100,000 and a million records) run only when named.
"""

from __future__ import annotations

import importlib
import sys
import time

from .timing import machine

BENCHMARKS = (
    "startup",
    "sql",
    "fetch",
    "export",
    "dirty",
    "cmodules",
    "report",
    "focus",
    "metrics",
    "explain",
    "memory",
    "models",
    "history",
    "costhistory",
    "diffmemory",
)
#: Run only when named: `python -m benchmarks million`.
OPT_IN = ("million", "workers")


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    known = (*BENCHMARKS, *OPT_IN)
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(known)}")
        return 2
    print(f"machine: {machine()}\n")
    for name in names:
        started = time.perf_counter()
        print(f"== {name} ==")
        importlib.import_module(f"benchmarks.{name}").run()
        print(f"({name}: {time.perf_counter() - started:.0f} s)\n")
    left_out = [n for n in OPT_IN if n not in names]
    if left_out:
        print(f"not run (opt-in): {', '.join(left_out)}; run: python -m benchmarks {left_out[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
