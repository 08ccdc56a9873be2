"""Two lanes' rows of one batch put back in record order once, with one take per column.

Why: the compiled lane gives the careful reader every record it is not sure of. Making each
lane's pending rows into arrays at every switch between them would cut a dirty batch into
thousands of tiny chunks, each conversion's fixed cost paid per chunk (docs/benchmarks.md,
"Dirty data"). Instead each lane keeps its rows until the batch is taken, `LaneRuns` notes how many
rows each run of records added to each table, and `in_record_order` makes a table's arrays
from both lanes' with one `take` by each row's place in the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrays import int64_array

#: The lanes: the compiled lane's rows (held in C) and the Python readers' rows (lists).
COMPILED, PYTHON = 0, 1

#: One table's runs: (lane, rows the run added), in record order.
Runs = list[tuple[int, int]]


class LaneRuns:
    """Per table, the runs of rows each lane added, in record order, since the last take."""

    def __init__(self, tables: int) -> None:
        self.lane: int | None = None
        self._runs: list[Runs] = [[] for _ in range(tables)]
        #: rows of each lane, per table, already in a run
        self._counted = [[0] * tables, [0] * tables]

    def close(self, held: Sequence[int]) -> None:
        """The current lane's run ends; `held`: its rows of each table so far this batch."""
        if self.lane is None:
            return
        counted = self._counted[self.lane]
        for n, (runs, rows) in enumerate(zip(self._runs, held, strict=True)):
            added = rows - counted[n]
            if not added:
                continue
            counted[n] = rows
            if runs and runs[-1][0] == self.lane:
                runs[-1] = (self.lane, runs[-1][1] + added)
            else:
                runs.append((self.lane, added))

    def take(self, table: int) -> Runs:
        """A table's runs (the lanes' runs closed first); forgets them."""
        runs = self._runs[table]
        self._runs[table] = []
        for counted in self._counted:
            counted[table] = 0
        return runs


def in_record_order(
    runs: Runs, compiled: list[pa.Array] | None, python: list[pa.Array]
) -> list[pa.Array]:
    """A table's columns, its rows in record order, from each lane's columns (None: there is
    no compiled lane) and the runs that added them."""
    if compiled is None or not len(compiled[0]):
        return python
    if not len(python[0]):
        return compiled
    if len(runs) == 2 and runs[0][0] == COMPILED:  # every compiled row before every other
        return [pa.concat_arrays([c, p]) for c, p in zip(compiled, python, strict=True)]
    order = _order(runs, len(compiled[0]))
    assert len(order) == len(compiled[0]) + len(python[0]), "runs that miss rows"
    indices = int64_array(order)
    return [
        pc.take(pa.concat_arrays([c, p]), indices) for c, p in zip(compiled, python, strict=True)
    ]


def _order(runs: Runs, compiled_rows: int) -> np.ndarray[tuple[int], np.dtype[np.int64]]:
    """Each row's place in the compiled lane's rows followed by the Python lane's, in
    record order."""
    lanes = np.array([lane for lane, _ in runs], dtype=np.int64)
    counts = np.array([rows for _, rows in runs], dtype=np.int64)
    starts = np.zeros(len(runs), dtype=np.int64)  # where each run's rows begin in its lane
    for lane, offset in ((COMPILED, 0), (PYTHON, compiled_rows)):
        mine = lanes == lane
        added = counts[mine]
        starts[mine] = np.cumsum(added) - added + offset
    placed = np.cumsum(counts) - counts  # where each run's rows go
    shift: np.ndarray[tuple[int], np.dtype[np.int64]] = np.repeat(starts - placed, counts)
    return shift + np.arange(int(counts.sum()), dtype=np.int64)
