"""The Arrow memory pool tables are built in: jemalloc where this pyarrow has it.

Why: building a batch's tables makes and frees many buffers of every size, which jemalloc
serves with less time than pyarrow's default pool (mimalloc); reading and Parquet do not
depend on it (the figures: docs/benchmarks.md, "Figures behind the code"). The pool is
switched only while dims builds tables and restored after, and a pool the user
chose with ARROW_DEFAULT_MEMORY_POOL is left alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

#: The environment variable by which a user picks pyarrow's pool (read by pyarrow itself).
USER_CHOICE = "ARROW_DEFAULT_MEMORY_POOL"


_lock = threading.Lock()
_users = 0
_before: pa.MemoryPool | None = None


@contextmanager
def building_pool() -> Iterator[None]:
    """Allocate Arrow buffers from jemalloc inside the block (where available).

    The pool is process-wide: the first block to enter switches it and the last to leave
    restores it, so exports in several threads never leave the process in jemalloc.
    """
    if os.environ.get(USER_CHOICE) or "jemalloc" not in pa.supported_memory_backends():
        yield
        return
    _enter()
    try:
        yield
    finally:
        _leave()


def _enter() -> None:
    global _users, _before
    with _lock:
        if _users == 0:
            _before = pa.default_memory_pool()
            pa.set_memory_pool(pa.jemalloc_memory_pool())
        _users += 1


def _leave() -> None:
    global _users, _before
    with _lock:
        _users -= 1
        if _users == 0 and _before is not None:
            pa.set_memory_pool(_before)
            _before = None
