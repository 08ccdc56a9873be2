"""`dims export` against a service that speaks the published names, over loopback HTTP.

The same fleet is served twice, once spelled as the interface spec writes it (`cache_cpu`)
and once as the published service sends it (`redis_cpu`, `langgraph_config_path`, integers
for whole quantities): the datasets, the capacity summary and every cost total must be the
same, the cache component included. Expected cache figures come from the raw records.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pandas as pd
import pyarrow.parquet as pq
import pytest
from cli_in_process import run

from dims import _reports as reports
from dims._cli import main
from dims.sandbox import Fleet, generate_fleet, run_sandbox

DIMS = Path(sys.executable).parent / "dims"
DAY = "2025-03-01"
SEED = 23


def _export(capsys, fleet: Fleet, out: Path, *extra: str) -> tuple[str, str]:
    with run_sandbox(fleet=fleet) as sb:
        code, printed, err = run(
            capsys, "export", "--base-url", sb.base_url, "--out", str(out),
            "--snapshot-date", DAY, "--code-host", sb.code_host, *extra,
        )  # fmt: skip
    assert code == 0, err
    return printed, err


def _deployments(out: Path) -> pd.DataFrame:
    table = pq.read_table(out / "deployments" / f"snapshot_date={DAY}")
    return table.drop_columns(["snapshot_at"]).to_pandas().sort_values("id", ignore_index=True)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The fleet exported as the spec spells it and as the published service does."""
    outs = {}
    for names in ("spec", "original"):
        out = tmp_path_factory.mktemp(names)
        fleet = generate_fleet(240, seed=SEED, real_shaped=True, names=names)
        with run_sandbox(fleet=fleet) as sb:
            argv = ["export", "--base-url", sb.base_url, "--out", str(out), "--snapshot-date", DAY]
            assert main([*argv, "--code-host", sb.code_host]) == 0
        outs[names] = out
    return outs


def _table(out: Path, name: str) -> pd.DataFrame:
    table = pq.read_table(out / name / f"snapshot_date={DAY}").drop_columns(["snapshot_at"])
    return table.to_pandas().sort_values(table.column_names, ignore_index=True)


def test_the_services_names_fill_the_specs_columns_over_http(both):
    spec_rows, published = _deployments(both["spec"]), _deployments(both["original"])
    pd.testing.assert_frame_equal(published, spec_rows)
    for name in ("deployment_components", "repositories", "deployment_containers"):
        pd.testing.assert_frame_equal(_table(both["original"], name), _table(both["spec"], name))
    assert len(_table(both["original"], "repositories")) > 0  # under `github`, as published
    fleet = generate_fleet(240, seed=SEED, real_shaped=True, names="original")
    by_id = {r["id"]: r for r in fleet.deployments}
    filled = 0
    for row in published.itertuples():
        resources = ((by_id[row.id].get("source_config") or {}).get("resource_spec")) or {}
        if "redis_cpu" in resources:
            assert row.cache_cpu == resources["redis_cpu"]
            assert row.cache_memory_limit_mb == resources["redis_memory_limit_mb"]
            filled += 1
        unknown = row.unknown_fields_json or ""
        assert "redis_" not in unknown and "langgraph" not in unknown
    assert filled > 200
    assert published["graph_config_path"].notna().all()


def test_capacity_and_costs_count_the_cache_component_whatever_the_spelling(both):
    summaries = {
        names: reports.capacity_summary(out).sort_values(["component", "deployment_type"])
        for names, out in both.items()
    }
    pd.testing.assert_frame_equal(
        summaries["original"].reset_index(drop=True), summaries["spec"].reset_index(drop=True)
    )
    cache = summaries["original"][summaries["original"]["component"] == "cache"]
    assert cache["cpu_request_cores_min_scale"].sum() > 0  # the component is counted, not left out
    totals = {names: reports.fleet_totals(out) for names, out in both.items()}
    assert totals["original"] == totals["spec"]
    costs = {names: reports.cost_by_deployment(out) for names, out in both.items()}
    pd.testing.assert_frame_equal(costs["original"], costs["spec"])


def test_a_mixed_fleet_reads_as_one_fleet_over_http(capsys, tmp_path, both):
    out = tmp_path / "mixed"
    _export(capsys, generate_fleet(240, seed=SEED, real_shaped=True, names="mixed"), out)
    pd.testing.assert_frame_equal(_deployments(out), _deployments(both["spec"]))


def test_differing_spellings_are_counted_once_warned_and_kept(capsys, tmp_path):
    fleet = generate_fleet(120, seed=SEED, names="original")
    changed = 0
    for record in fleet.deployments:
        resources = (record.get("source_config") or {}).get("resource_spec") or {}
        if "redis_cpu" in resources and changed < 7:
            resources["cache_cpu"] = resources["redis_cpu"] + 1  # both names, differing
            resources["cache_cpu_limit"] = resources["redis_cpu_limit"]  # both, the same
            changed += 1
    out = tmp_path / "data"
    _, err = _export(capsys, fleet, out, "--json")
    warnings = [line for line in err.splitlines() if "both the spec's name" in line]
    assert warnings == [
        "dims: warning: 7 deployment(s) sent a field under both the spec's name and the "
        "service's own (e.g. cache_cpu and redis_cpu) with different values: the spec's "
        "name was kept, the other value is in unknown_fields_json"
    ]
    manifest = json.loads((out / "_manifests" / f"{DAY}.json").read_text())
    assert manifest["original_name_conflicts"] == 7
    rows = _deployments(out)
    kept = rows[rows["unknown_fields_json"].str.contains("redis_cpu", na=False)]
    assert len(kept) == 7
    for row in kept.itertuples():
        unknown = orjson.loads(row.unknown_fields_json)
        assert row.cache_cpu == unknown["source_config.resource_spec.redis_cpu"] + 1
        assert "source_config.resource_spec.redis_cpu_limit" not in unknown


def test_dims_sandbox_original_names_speaks_as_the_published_service(tmp_path):
    """`dims sandbox --original-names`: the service's names, integers and `github` path; an
    export with `--code-host github` fills the spec's columns and lists the repositories."""
    proc = subprocess.Popen(
        [str(DIMS), "sandbox", "--port", "0", "--deployments", "60", "--seed", "4",
         "--original-names"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    out = tmp_path / "data"
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        url = re.search(r"http://127\.0\.0\.1:\d+", lines[0])
        assert url, lines
        assert "/forge/github/{integration_id}/repos" in lines[2]
        assert "spell fields as the published service does" in lines[3]
        page = httpx.get(f"{url[0]}/v2/deployments", params={"limit": 100}, timeout=10).json()
        exported = subprocess.run(
            [str(DIMS), "export", "--base-url", url[0], "--code-host", "github", "--out",
             str(out), "--snapshot-date", DAY],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    assert exported.returncode == 0, exported.stderr
    resources = [
        r["source_config"]["resource_spec"]
        for r in page["resources"]
        if (r.get("source_config") or {}).get("resource_spec")
    ]
    assert any("redis_cpu" in spec_ for spec_ in resources)
    assert not any("cache_cpu" in spec_ for spec_ in resources)
    assert all(type(spec_["memory_mb"]) is int for spec_ in resources)
    rows = _deployments(out)
    assert rows["cache_cpu"].notna().sum() > 40
    assert len(_table(out, "repositories")) > 0
    assert "warning" not in exported.stderr
