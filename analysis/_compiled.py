"""`DIMS_NO_C`: a benchmark-only knob that leaves named C modules unbuilt, as it were.

Why: each C module is kept only where it earns its lines (issue 31: at least 10% of an
export's time), and that is measured by running the same export with each module left out
(`benchmarks/cmodules.py`) on the same installed build. `DIMS_NO_C=gather,columnar` makes
those modules' imports fail as they would where no C compiler was found at install, so the
maintained Python path runs. Not a setting for users: it makes exports slower, never safer.
"""

from __future__ import annotations

import os


def left_out(module: str) -> bool:
    """Whether `DIMS_NO_C` (comma-separated short names, e.g. `gather`) names `module`."""
    return module in os.environ.get("DIMS_NO_C", "").split(",")
