"""`python -m benchmarks [name ...]`: run every benchmark (or the named ones) in order.

Each prints its table and writes benchmarks/results/<name>.json with the machine it ran on.
"""

from __future__ import annotations

import importlib
import sys
import time

from .timing import machine

BENCHMARKS = ("startup", "fetch", "export", "dirty", "cmodules", "memory", "models", "history")


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
        return 2
    print(f"machine: {machine()}\n")
    for name in names:
        started = time.perf_counter()
        print(f"== {name} ==")
        importlib.import_module(f"benchmarks.{name}").run()
        print(f"({name}: {time.perf_counter() - started:.0f} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
