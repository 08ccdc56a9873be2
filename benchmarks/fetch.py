"""Fetch: our full fetch vs a plain sequential page loop through the generated client.

The sandbox answers every request after 150 ms, so the figure is about overlapping
requests, not parsing. The ideal is ⌈requests ÷ concurrency⌉ × latency, where the requests
are every page a complete fetch needs: the fleet listing's and the typed listings' (they
tag records that do not name their type), each with the empty page that ends it.
"""

from __future__ import annotations

import functools
import math

from analysis import connect, fetch
from analysis.sandbox import run_sandbox
from generated_client.api.deployments import list_deployments

from .timing import measure, save, table

LATENCY_MS = 150
PAGE = 100


def sequential_loop(client) -> int:
    """The baseline a user would write: one page after another, typed models."""
    offset, count = 0, 0
    while True:
        page = list_deployments.sync(client=client, limit=PAGE, offset=offset)
        count += len(page.resources)
        if len(page.resources) < PAGE:
            return count
        offset = page.offset


def full_fetch(client, concurrency: int, stats: fetch.FetchStats | None = None) -> int:
    pages = fetch.fetch_deployments(client, page_size=PAGE, concurrency=concurrency, stats=stats)
    return sum(len(p.records) for p in pages)


def run(sizes=(6_000, 20_000), runs: int = 3) -> dict:
    results = {}
    for size in sizes:
        with run_sandbox(deployments=size, seed=0, latency_ms=LATENCY_MS) as sandbox:
            client = connect(sandbox.base_url)
            needed = fetch.FetchStats()
            assert sequential_loop(client) == size == full_fetch(client, 8, needed)
            base = measure(
                f"{size}: sequential loop (generated client)",
                functools.partial(sequential_loop, client),
                runs,
            )
            ours = measure(
                f"{size}: dims fetch_deployments, concurrency 8",
                functools.partial(full_fetch, client, 8),
                runs,
            )
        requests = needed.pages  # answered pages: what a complete fetch cannot do without
        ideal = math.ceil(requests / fetch.DEFAULT_CONCURRENCY) * LATENCY_MS / 1000
        results[size] = {
            "timings": [base, ours],
            "speedup_vs_sequential": base.median_s / ours.median_s,
            "requests_needed": requests,
            "ideal_s": ideal,
            "ratio_to_ideal": ours.median_s / ideal,
        }
        print(table([base, ours]))
        print(
            f"  speedup {results[size]['speedup_vs_sequential']:.1f}x (target >= 5x); "
            f"{results[size]['ratio_to_ideal']:.2f}x the ideal {ideal:.2f} s "
            f"({requests} requests ÷ 8 × {LATENCY_MS} ms)\n"
        )
    save("fetch", {"latency_ms": LATENCY_MS, "page_size": PAGE, "results": results})
    return results


if __name__ == "__main__":
    run()
