"""Fetch and export over HTTP: against a sequential loop, and against the network's ideal.

The sandbox (in this process, on loopback) answers every request after 150 ms, with the
real-shaped fleet (benchmarks/fleetdata.py: service fields, a type on some records only,
30% undeclared fields), so a complete fetch needs the fleet listing and the typed listings
that tag the records which do not name their type.

- In process: `fetch_deployments` (8 requests in flight) vs the loop a user would write
  with the generated client (one page after another, typed models, ending on a short page,
  so it neither tags types nor survives a page cap: it is the speed baseline only).
- Whole process, as a user runs it: `dims export --base-url …` in a fresh process (start-up,
  fetch, tables, Parquet), against its ideal: start-up + ⌈requests ÷ 8⌉ × latency + write,
  where `requests` are those a complete export cannot do without (each listing's pages and
  the empty page that ends it, counted by the fetch itself; the providers; the repositories
  of every integration the fleet names), start-up is `import
  dims._cli` in a fresh process, and write is `dims export --from-json` of the same
  records minus start-up. Target: at most 1.3x the ideal.
"""

from __future__ import annotations

import functools
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import orjson

from dims import _fetch as fetch
from dims._connection import connect
from dims.sandbox import run_sandbox
from dims_client import Client
from dims_client.api.deployments import list_deployments
from dims_client.models import DeploymentPage

from .fleetdata import real_fleet
from .timing import measure, measure_interleaved, python, save, table

LATENCY_MS = 150
PAGE = 100
CONCURRENCY = fetch.DEFAULT_CONCURRENCY
TARGET = 1.3


def sequential_loop(client: Client) -> int:
    """The baseline a user would write: one page after another, typed models."""
    offset, count = 0, 0
    while True:
        page = list_deployments.sync(client=client, limit=PAGE, offset=offset)
        if not isinstance(page, DeploymentPage):
            raise RuntimeError(f"the sandbox answered {page!r}")
        count += len(page.resources)
        if len(page.resources) < PAGE:
            return count
        offset = page.offset


def full_fetch(client: Client, stats: fetch.FetchStats | None = None) -> int:
    pages = fetch.fetch_deployments(client, page_size=PAGE, concurrency=CONCURRENCY, stats=stats)
    return sum(len(p.records) for p in pages)


def export_over_http(base_url: str, code_host: str, out: Path) -> None:
    python(
        "-m", "dims._cli", "export", "--base-url", base_url, "--code-host", code_host,
        "--out", str(out),
    )  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)


def export_from_dump(dump: Path, out: Path) -> None:
    python("-m", "dims._cli", "export", "--from-json", str(dump), "--out", str(out))
    shutil.rmtree(out, ignore_errors=True)


def run(sizes: tuple[int, ...] = (6_000, 20_000), runs: int = 3) -> dict[int, Any]:
    results = {size: _one_size(size, runs) for size in sizes}
    save("fetch", {"latency_ms": LATENCY_MS, "page_size": PAGE, "results": results})
    return results


def _one_size(size: int, runs: int) -> dict[str, Any]:
    fleet = real_fleet(size)
    with tempfile.TemporaryDirectory(prefix="dims-bench-") as tmp:
        dump = Path(tmp) / "fleet.json"
        dump.write_bytes(orjson.dumps(fleet.deployments))
        with run_sandbox(fleet=fleet, latency_ms=LATENCY_MS) as sandbox:
            client = connect(sandbox.base_url, code_host=sandbox.code_host)
            needed = fetch.FetchStats()
            assert full_fetch(client, needed) == size
            base = measure(
                f"{size}: sequential loop (generated client)",
                functools.partial(sequential_loop, client),
                runs,
            )
            ours = measure(
                f"{size}: fetch_deployments, {CONCURRENCY} in flight",
                functools.partial(full_fetch, client),
                runs,
            )
            start, write, whole = measure_interleaved(
                [
                    ("start-up: import dims._cli",
                     functools.partial(python, "-c", "import dims._cli"), runs),
                    (f"{size}: dims export --from-json (same records)",
                     functools.partial(export_from_dump, dump, Path(tmp) / "dump"), runs),
                    (f"{size}: dims export over HTTP, whole process",
                     functools.partial(export_over_http, sandbox.base_url,
                                       sandbox.code_host, Path(tmp) / "http"), runs),
                ]
            )  # fmt: skip
            peak = sandbox.stats.peak_in_flight
    # what a complete export cannot do without: every listing's pages (the empty page
    # that ends each included), the providers, and the repositories of each integration
    pages, others = needed.pages, 1 + len(needed.integration_ids)
    fetch_ideal = math.ceil(pages / CONCURRENCY) * LATENCY_MS / 1000
    write_s = max(0.0, write.median_s - start.median_s)
    # listings and repositories share one budget of CONCURRENCY requests in flight
    network_s = math.ceil((pages + others) / CONCURRENCY) * LATENCY_MS / 1000
    ideal = start.median_s + network_s + write_s
    r = {
        "timings": [base, ours, start, write, whole],
        "requests_needed": {"pages": pages, "providers_and_repositories": others},
        "peak_in_flight": peak,
        "fetch_speedup_vs_sequential": base.median_s / ours.median_s,
        "fetch_ideal_s": fetch_ideal,
        "fetch_ratio_to_network_ideal": ours.median_s / fetch_ideal,
        "export_ideal_s": ideal,
        "export_ideal_parts_s": {
            "start_up": start.median_s,
            "network": network_s,
            "write": write_s,
        },
        "export_ratio_to_ideal": whole.median_s / ideal,
        "export_target": TARGET,
        "export_met": whole.median_s / ideal <= TARGET,
    }
    _print(r)
    return r


def _print(r: dict[str, Any]) -> None:
    """The run's table, and the fetch and the whole export against their ideals."""
    whole = r["timings"][-1]
    pages, others = r["requests_needed"].values()
    parts = r["export_ideal_parts_s"]
    print(table(r["timings"]))
    print(
        f"  fetch: {r['fetch_speedup_vs_sequential']:.1f}x the sequential loop, "
        f"{r['fetch_ratio_to_network_ideal']:.2f}x its network ideal {r['fetch_ideal_s']:.2f} s "
        f"({pages} pages ÷ {CONCURRENCY} × {LATENCY_MS} ms)\n"
        f"  whole export: {whole.median_s:.2f} s = {r['export_ratio_to_ideal']:.2f}x the ideal "
        f"{r['export_ideal_s']:.2f} s (start-up {parts['start_up']:.2f} + ⌈{pages + others} "
        f"requests ÷ {CONCURRENCY}⌉ × {LATENCY_MS} ms = {parts['network']:.2f} + write "
        f"{parts['write']:.2f}, the --from-json export of the same records less start-up; "
        f"target <= {TARGET}x: {'met' if r['export_met'] else 'NOT met'}); at most "
        f"{r['peak_in_flight']} requests were in flight\n"
    )


if __name__ == "__main__":
    run()
