"""`dims demo`, the first thing a newcomer runs: sandbox → snapshot → report, no account."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from dims import _tables as tables


def dims() -> str:
    return shutil.which("dims", path=str(Path(sys.executable).parent)) or "dims"


def test_demo_exports_every_table_and_writes_the_report_into_its_own_folder(tmp_path):
    """Run where a real export's default folder holds data: the demo goes to ./dims-demo
    and never touches ./dims-data."""
    real = tmp_path / "dims-data" / "deployments" / "snapshot_date=2025-01-01"
    real.mkdir(parents=True)
    (real / "part-0.parquet").write_bytes(b"a real export's file")
    done = subprocess.run(
        [dims(), "demo", "--deployments", "150", "--seed", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "dims-demo"
    assert [p.name for p in (tmp_path / "dims-data").rglob("*") if p.is_file()] == [
        "part-0.parquet"
    ]
    assert (real / "part-0.parquet").read_bytes() == b"a real export's file"
    report = Path(done.stdout.split("report: ", 1)[1].split()[0])
    assert report.is_file() and report.name == "report.html"
    assert report.parent.parent.name == "reports"
    for name in ("capacity_summary.parquet", "image_version_summary.parquet"):
        assert (report.parent / name).is_file()
    # every table of the contract exists, and DuckDB reads the deployments back
    for table in tables.TABLE_NAMES:
        assert list((out / table).glob("snapshot_date=*/*.parquet")), table
    count = duckdb.sql(
        f"select count(*) from read_parquet('{out}/deployments/*/*.parquet', hive_partitioning=1)"
    ).fetchall()[0][0]
    assert count == 150
    assert "\x1b[" not in done.stdout + done.stderr  # no progress bar when piped


def test_sandbox_command_serves_the_fleet_with_the_faults_asked_for():
    import signal
    import time

    import httpx

    process = subprocess.Popen(
        [dims(), "sandbox", "--port", "0", "--deployments", "30", "--error-every", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        line = process.stdout.readline()  # blocks until the server prints its address
        base_url = line.split(" at ", 1)[1].strip()
        first = httpx.get(f"{base_url}/v2/deployments", params={"limit": 100})
        second = httpx.get(f"{base_url}/v2/auth/providers")
        assert first.status_code == 200 and len(first.json()["resources"]) == 30
        assert second.status_code == 503  # --error-every 2
    finally:
        process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 20
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0


def test_the_demo_ignores_the_users_workspaces_and_key(tmp_path):
    """`dims demo` serves its own sandbox: DIMS_TENANT_ID naming several workspaces (which
    one client would refuse) and a key set for the real service change nothing."""
    import os

    env = {**os.environ, "DIMS_TENANT_ID": "ws-a,ws-b", "DIMS_API_KEY": "a-real-key-0123"}
    done = subprocess.run(
        [dims(), "demo", "--deployments", "20", "--seed", "2", "--out", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "a-real-key-0123" not in done.stdout + done.stderr
    assert list((tmp_path / "d" / "deployments").glob("snapshot_date=*/*.parquet"))
