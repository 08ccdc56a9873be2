"""`dims export` of several workspaces: --tenant-id repeated or a list, DIMS_TENANT_ID as a
comma-separated list, a failure named on one line (text) or in JSON, --allow-partial."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_in_process import run
from overlap import overlapping

from dims._storage import read_arrow
from dims.sandbox import Faults, run_sandbox

DIMS = Path(sys.executable).parent / "dims"
DAY = "2026-03-04"
SEED = 5


@pytest.fixture(scope="module")
def tenants():
    with run_sandbox(deployments=60, seed=SEED, tenants=3) as sandbox:
        return sandbox.fleet.tenant_ids()


def exported_tenants(out):
    found = read_arrow(out, "deployments", DAY, ["tenant_id"])["tenant_id"].to_pylist()
    return sorted(set(found))


def test_repeated_tenant_ids_and_a_list_in_the_environment(capsys, tmp_path, tenants, monkeypatch):
    a, b, c = tenants
    with run_sandbox(deployments=60, seed=SEED, tenants=3) as sandbox:
        common = ("--base-url", sandbox.base_url, "--snapshot-date", DAY)
        code, out, err = run(
            capsys, "export", "--out", str(tmp_path / "flags"), *common, "--tenant-id", a,
            "--tenant-id", f"{b},{c}",
        )  # fmt: skip
        assert code == 0, err
        monkeypatch.setenv("DIMS_TENANT_ID", f"{c}, {a}")
        code, _, err = run(capsys, "export", "--out", str(tmp_path / "env"), *common)
        assert code == 0, err
    assert exported_tenants(tmp_path / "flags") == tenants
    assert exported_tenants(tmp_path / "env") == [a, c]
    for tenant in tenants:
        assert f"workspace {tenant}: exported" in out


def test_an_empty_workspace_in_the_list_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DIMS_TENANT_ID", "a,,b")
    code, _, err = run(capsys, "export", "--out", str(tmp_path), "--base-url", "http://127.0.0.1:1")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "empty workspace" in err and "Traceback" not in err


def test_a_failing_workspace_fails_the_export_by_default(capsys, tmp_path, tenants):
    a, b, _ = tenants
    faults = Faults(fail_tenant=b, fail_tenant_status=403)
    with run_sandbox(deployments=60, seed=SEED, tenants=3, faults=faults) as sandbox:
        argv = ("export", "--out", str(tmp_path), "--base-url", sandbox.base_url)
        code, out, err = run(capsys, *argv, "--tenant-id", f"{a},{b}", "--snapshot-date", DAY)
        assert code == 1 and out == ""
        line = err.strip()
        assert "\n" not in line and "Traceback" not in line
        assert f"{b}: " in line and "403" in line and "nothing was published" in line
        assert "--allow-partial" in line
        code, out, err = run(capsys, *argv, "--tenant-id", f"{a},{b}", "--json")
    assert code == 1
    failure = json.loads(out)
    assert failure["published"] is False
    assert failure["workspaces"][b]["status"] == "failed"
    assert failure["workspaces"][a]["status"] == "fetched"
    assert not (tmp_path / "deployments").exists()


def test_allow_partial_publishes_the_rest_and_exits_3(capsys, tmp_path, tenants):
    a, b, c = tenants
    faults = Faults(fail_tenant=c, fail_tenant_status=403)
    with run_sandbox(deployments=60, seed=SEED, tenants=3, faults=faults) as sandbox:
        argv = ("export", "--out", str(tmp_path), "--base-url", sandbox.base_url)
        argv += ("--tenant-id", a, "--tenant-id", b, "--tenant-id", c, "--snapshot-date", DAY)
        code, out, err = run(capsys, *argv, "--allow-partial")
        assert code == 3, err
        assert out.splitlines()[0].startswith("PARTIAL: 1 workspace(s) failed") and c in out
        code, out, _ = run(capsys, *argv, "--allow-partial", "--json")
    assert code == 3
    manifest = json.loads(out)
    assert manifest["workspaces"][c]["status"] == "failed"
    assert manifest["fetch"]["complete"] is False
    assert exported_tenants(tmp_path) == [a, b]


def test_tenant_ids_cannot_be_combined_with_a_dump(capsys, tmp_path):
    dump = tmp_path / "dump.json"
    dump.write_text("[]")
    code, _, err = run(capsys, "export", "--out", str(tmp_path), "--from-json", str(dump),
                       "--tenant-id", "a")  # fmt: skip
    assert code == 1 and "--tenant-id" in err and len(err.strip().splitlines()) == 1


def test_sigterm_while_workspaces_are_fetched_stops_cleanly(tmp_path, tenants):
    """A CronJob's pod stopped while several workspaces' requests are in flight: one line,
    exit 143, nothing published and no work folder left."""
    a, b, _ = tenants
    out = tmp_path / "out"
    with run_sandbox(deployments=60, seed=SEED, tenants=3, latency_ms=1000) as sandbox:
        argv = ["export", "--out", str(out), "--base-url", sandbox.base_url]
        child = subprocess.Popen(
            [str(DIMS), *argv, "--tenant-id", f"{a},{b}", "--snapshot-date", DAY],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while sandbox.stats.requests["/v2/deployments"] < 2:  # both workspaces waiting
                assert child.poll() is None, child.communicate()
                assert time.monotonic() < deadline, "the export never asked for deployments"
                time.sleep(0.01)
            child.send_signal(signal.SIGTERM)
            _, stderr = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.communicate(timeout=60)
    assert child.returncode == 143, stderr
    assert stderr.strip().splitlines() == [
        "dims: stopped by SIGTERM; nothing partial was left behind"
    ]
    assert [p.name for p in out.iterdir() if p.name.startswith(".tmp-")] == []
    assert not (out / "deployments").exists()


def test_allow_partial_when_every_workspace_fails_publishes_nothing_and_exits_1(capsys, tmp_path):
    """--allow-partial publishes the workspaces that worked: with none, there is nothing to
    publish, which is a failure (exit 1), not a partial day (exit 3)."""
    with run_sandbox(deployments=20, seed=SEED, tenants=2, api_key="key") as sandbox:
        argv = ("export", "--out", str(tmp_path), "--base-url", sandbox.base_url, "--api-key",
                "key", "--tenant-id", "nobody-1,nobody-2", "--allow-partial",
                "--snapshot-date", DAY)  # fmt: skip
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == ""
        line = err.strip()
        assert "\n" not in line and "2 of 2 workspace(s) failed" in line
        assert "nobody-1: " in line and "nobody-2: " in line and "403" in line
        assert "every workspace failed" in line and "nothing was published" in line
        code, out, _ = run(capsys, *argv, "--json")
    assert code == 1
    failure = json.loads(out)
    assert failure["published"] is False
    assert {s["status"] for s in failure["workspaces"].values()} == {"failed"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".dims.lock"]


def test_duplicates_across_workspaces_are_one_warning_line_and_a_summary_note(capsys, tmp_path):
    o = overlapping(SEED)
    with run_sandbox(fleet=o.fleet) as sandbox:
        argv = ("export", "--out", str(tmp_path), "--base-url", sandbox.base_url)
        argv += ("--tenant-id", o.a, "--tenant-id", o.c, "--snapshot-date", DAY)
        code, out, err = run(capsys, *argv)
    assert code == 0, err
    warned = [line for line in err.splitlines() if "duplicate" in line]
    assert len(warned) == 1 and warned[0].startswith("dims: warning: 3 duplicate copy(ies)")
    assert f"workspace {o.c}: exported, " in out and "3 duplicate copy(ies) dropped" in out
    found = read_arrow(tmp_path, "deployments", DAY, ["id"])["id"].to_pylist()
    assert len(found) == len(set(found))
