"""dims' C modules: which are built, what running without them costs, and `DIMS_NO_C`.

Why here, in a module that imports nothing of dims: hatch_build.py loads this file on its
own at install to say the same line a running dims says (`off_line`), so the figure is
written once.

`DIMS_NO_C` is a benchmark-only knob that leaves named C modules unbuilt, as it were. Each
C module is kept only where it earns its lines (issue 31: at least 10% of an export's time),
and that is measured by running the same export with each module left out
(`benchmarks/cmodules.py`) on the same installed build. `DIMS_NO_C=gather,columnar` makes
those modules' imports fail as they would where no C compiler was found at install, so the
maintained Python path runs. Not a setting for users: it makes exports slower, never safer.
"""

from __future__ import annotations

import importlib.util
import os

#: The C modules, by their import names.
MODULES = ("dims._tables._columnar", "dims._tables._unknownkeys", "dims._tables._gather")
#: Each one's source, from the repository's root (`dims` is the folder analysis/), which
#: hatch_build.py and tools/test_sanitize.py compile.
SOURCES = {name: [f"analysis/{name.removeprefix('dims.').replace('.', '/')}.c"] for name in MODULES}

#: How many times slower an export runs without all three: 1 + the time each module's
#: absence adds (benchmarks/results/cmodules.json: 1.51 at 20,000 records, 1.49 at 100,000;
#: tests/spec/test_wheel.py holds this figure to that file).
SLOWER_WITHOUT = 1.5

#: Whether `off_line` was said in this process (`tell_once`).
_told = False


def left_out(module: str) -> bool:
    """Whether `DIMS_NO_C` (comma-separated short names, e.g. `gather`) names `module`."""
    return module in os.environ.get("DIMS_NO_C", "").split(",")


def not_built() -> list[str]:
    """The C modules this install does not have (none left out by `DIMS_NO_C` counted)."""
    return [
        name
        for name in MODULES
        if not left_out(name.rsplit("._", 1)[-1]) and importlib.util.find_spec(name) is None
    ]


def off_line(why: str) -> str:
    """The one line that says the C modules are off, why, and what that costs."""
    return (
        f"dims: the C modules are off ({why}): exports take about {SLOWER_WITHOUT}x as long "
        "on dims' Python paths; install a C compiler and Python's headers (gcc and "
        "python3-dev on Debian), then reinstall dims"
    )


def tell_once() -> str | None:
    """`off_line` the first time in a process that it is asked where a C module is not
    built; None otherwise (built, or already said)."""
    global _told
    missing = not_built()
    if _told or not missing:
        return None
    _told = True
    short = ", ".join(name.rsplit(".", 1)[-1] for name in missing)
    return off_line(f"{short} not built at install")
