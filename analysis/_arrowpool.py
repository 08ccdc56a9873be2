"""The Arrow memory pool tables are built in (jemalloc where this pyarrow has it) and the one
a comparison reads two days in (the system allocator).

Why: building a batch's tables makes and frees many buffers of every size, which jemalloc
serves with less time than pyarrow's default pool (mimalloc); reading and Parquet do not
depend on it (the figures: docs/benchmarks.md, "Figures behind the code"). The pool is
switched only while dims builds tables and restored after, and a pool the user
chose with ARROW_DEFAULT_MEMORY_POOL is left alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
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
    _enter(pa.jemalloc_memory_pool)
    try:
        yield
    finally:
        _leave()


@contextmanager
def reading_pool() -> Iterator[None]:
    """Allocate Arrow buffers from the system allocator inside the block.

    Why: a comparison of two days reads each day's Parquet and converts it to pandas; the
    default pool (mimalloc) keeps the pages of the buffers freed on the way for later, so
    the process's peak holds the read tables beside the frames made of them. The system
    allocator returns them (`dims diff` at 20,000 deployments: about 95 MiB less at its
    peak). Shared with `building_pool` as one switch: whichever block enters first picks
    the pool, and the last to leave restores the user's.
    """
    if os.environ.get(USER_CHOICE):
        yield
        return
    _enter(pa.system_memory_pool)
    try:
        yield
    finally:
        _leave()


def _enter(pool: Callable[[], pa.MemoryPool]) -> None:
    global _users, _before
    with _lock:
        if _users == 0:
            _before = pa.default_memory_pool()
            pa.set_memory_pool(pool())
        _users += 1


def _leave() -> None:
    global _users, _before
    with _lock:
        _users -= 1
        if _users == 0 and _before is not None:
            pa.set_memory_pool(_before)
            _before = None
