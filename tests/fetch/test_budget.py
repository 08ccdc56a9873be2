"""`--concurrency N` is N requests in flight in all: listings and repositories share them."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from analysis.connection import connect
from analysis.sandbox import run_sandbox
from analysis.snapshot import take_snapshot


@pytest.mark.parametrize("concurrency", [1, 3])
def test_an_export_keeps_its_requests_within_one_budget(tmp_path, concurrency):
    # Untyped records start the typed listings; one integration per 20 deployments gives
    # repository requests to list while the fleet is paged; latency makes them overlap.
    with run_sandbox(deployments=240, seed=4, untyped_every=5, latency_ms=40) as sandbox:
        result = take_snapshot(
            connect(sandbox.base_url), tmp_path, concurrency=concurrency, page_size=20, workers=0
        )
        stats = sandbox.stats
    paths = stats.requests
    assert any("/repos" in path for path in paths), paths  # repositories were listed
    assert sum(n for path, n in paths.items() if path == "/v2/deployments") > 12
    assert stats.peak_in_flight == concurrency  # used, and never more
    deployments = pq.read_table(result.paths["deployments"])
    assert deployments.num_rows == 240
