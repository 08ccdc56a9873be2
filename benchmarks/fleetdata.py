"""Fleet dumps for the benchmarks, generated once per size and profile, kept in benchmarks/data/.

Two profiles, both deterministic (seed 0), so a kept file is the same dump every run
(benchmarks/data/ is gitignored; 100,000 records take a few seconds to generate):
- `sandbox`: the sandbox's own fleet, the shape dims was built with;
- `real`: shaped like a real service and a newer version of it: spelled as the published
  service spells it (`redis_*`, `langgraph_config_path`, integers), every record carries
  `status`, `source` and (repository-built ones) `source_config.deployment_type`, some of a
  type newer than the spec; 30% carry fields nobody declared at the record,
  `source_config` and `resource_spec` levels; labels whose values are numbers, nested
  annotations, and timestamps with offsets other than Z.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from dims.sandbox import Fleet, generate_fleet

DATA = Path(__file__).parent / "data"
SEED = 0
PROFILES = ("sandbox", "real")
#: Part of every kept file's name: bumped when a profile's records change, so that a dump
#: kept from an earlier version is never measured as if it were the new one.
DATA_VERSION = 2
#: Share of `real` records that carry fields neither the spec nor dims knows.
NEWER_FIELDS_SHARE = 0.3


def dump_path(deployments: int, profile: str = "sandbox") -> Path:
    """A JSON array of `deployments` records of the profile (what `--from-json` reads)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose from {PROFILES}")
    suffix = "" if profile == "sandbox" else f"-{profile}"
    path = DATA / f"fleet-{deployments}-seed{SEED}{suffix}-v{DATA_VERSION}.json"
    if not path.exists():
        DATA.mkdir(exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(orjson.dumps(_records(deployments, profile)))
        tmp.replace(path)
    return path


def real_fleet(deployments: int, seed: int = SEED) -> Fleet:
    """The `real` profile as a fleet the sandbox can serve."""
    fleet = generate_fleet(deployments, seed=seed, real_shaped=True, names="original")
    rng = random.Random(seed)
    for n, record in enumerate(fleet.deployments):
        awkward(record, n, rng)
    return fleet


def write_real_dump(path: Path, deployments: int, chunk: int = 100_000) -> Path:
    """A `real` dump of `deployments` records written a chunk at a time: fleets of `chunk`
    records seeded 0, 1, 2, … one after another, so that only one chunk is ever in memory
    (a million records as one list of dicts would take several GB). Each chunk is a whole
    real-shaped fleet (its own workspaces and integrations; ids are drawn from its seed, so
    they never repeat); the first is the `chunk`-record dump of `dump_path`."""
    with path.open("wb") as fh:
        fh.write(b"[")
        for seed, start in enumerate(range(0, deployments, chunk)):
            records = real_fleet(min(chunk, deployments - start), seed=SEED + seed).deployments
            if start:
                fh.write(b",")
            fh.write(b",".join(orjson.dumps(r) for r in records))
            del records
        fh.write(b"]")
    return path


def _records(deployments: int, profile: str) -> list[dict[str, Any]]:
    if profile == "real":
        return real_fleet(deployments).deployments
    return generate_fleet(deployments, seed=SEED).deployments


def awkward(record: dict[str, Any], n: int, rng: random.Random) -> None:
    """What a real, newer service sends that the sandbox fleet does not."""
    newer = rng.random() < NEWER_FIELDS_SHARE
    if newer:
        record["revision_count"] = n % 17
    for key in ("created_at", "updated_at"):
        value = record.get(key)
        if isinstance(value, str) and value.endswith("Z") and n % 4 == 1:
            record[key] = value[:-1] + "+02:00"
    source_config = record.get("source_config")
    if not isinstance(source_config, dict):
        return
    if newer:
        source_config["region"] = ("eu-west-1", "us-east-2", "ap-south-1")[n % 3]
    spec = source_config.get("resource_spec")
    if not isinstance(spec, dict):
        return
    if newer:
        spec["gpu_count"] = n % 2
    if n % 5 == 2:
        spec["labels"] = {**(spec.get("labels") or {}), "tier": n % 4, "cost-center": 1042}
    if n % 7 == 3:
        spec["annotations"] = {
            **(spec.get("annotations") or {}),
            "rollout": {"waves": [1, 2, {"canary": True}], "owner": "Zoë"},
        }
