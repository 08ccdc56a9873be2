"""Pause Python's cyclic garbage collector around bulk parsing and flattening.

Building many small containers (parsed dicts, row tuples) triggers collections that scan
everything already alive, again and again: on a large parse the collector costs more than
the parse itself (docs/benchmarks.md). The loops in `dumps` and `tables` create no
reference cycles, so pausing the collector for their duration is safe; it is re-enabled
afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block, restoring its previous state after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
