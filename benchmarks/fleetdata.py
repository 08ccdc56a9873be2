"""Fleet dumps for the benchmarks, generated once per size and kept in benchmarks/data/.

The sandbox's fleet generator is deterministic (seed 0), so a kept file is the same dump
every run; benchmarks/data/ is gitignored. Generating 100,000 records takes a few seconds.
"""

from __future__ import annotations

from pathlib import Path

from analysis.sandbox.fleet import fleet_dump_bytes, generate_fleet

DATA = Path(__file__).parent / "data"
SEED = 0


def dump_path(deployments: int) -> Path:
    """A JSON array of `deployments` sandbox records (what `dims export --from-json` reads)."""
    path = DATA / f"fleet-{deployments}-seed{SEED}.json"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(fleet_dump_bytes(generate_fleet(deployments, seed=SEED)))
        tmp.replace(path)
    return path
