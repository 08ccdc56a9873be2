"""`dims export --code-host NAME` and `DIMS_CODE_HOST` (issue 26, item 2), against the sandbox
serving the published service's segment (`github`), read back from Parquet.

A wrong segment makes every repositories request answer 404: the export still publishes
(exit 0: the deployments are right), with exactly one warning line on stderr naming
--code-host, the summary line `repositories: 0 of N integrations found (every one answered
404)` and the manifest's record, never as N unknown integrations.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from cli_in_process import run

from dims._storage import read_table
from dims.sandbox import SandboxHandle, generate_fleet, run_sandbox

DIMS = Path(sys.executable).parent / "dims"
DAY = "2026-05-07"
DEAD_URL = "http://127.0.0.1:9"  # nothing listens there


@pytest.fixture(scope="module")
def github() -> Iterator[SandboxHandle]:
    with run_sandbox(fleet=generate_fleet(80, seed=7, tenants=2), code_host="github") as sb:
        yield sb


def referenced(fleet, tenant: str | None = None) -> list[str]:
    named = {
        (r.get("source_config") or {}).get("integration_id")
        for r in fleet.deployments
        if tenant is None or r["tenant_id"] == tenant
    }
    return sorted(i for i in named if i is not None)


def expected_repositories(fleet) -> set[tuple[str, int]]:
    return {
        (r["host_integration_id"], r["id"])
        for i in referenced(fleet)
        for r in fleet.repositories[i]
    }


def exported_repositories(out: Path) -> set[tuple[str, int]]:
    frame = read_table(out, "repositories", columns=["host_integration_id", "id"])
    return {(row.host_integration_id, int(row.id)) for row in frame.itertuples()}


def manifest(out: Path) -> dict:
    return orjson.loads((out / "_manifests" / f"{DAY}.json").read_bytes())


def dims_export(out: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The real executable, piped (no progress bar): what a scheduled job sees."""
    return subprocess.run(
        [str(DIMS), "export", "--out", str(out), "--snapshot-date", DAY, *args],
        capture_output=True,
        text=True,
        env={k: v for k, v in {**os.environ, **env}.items() if v is not None},
        timeout=180,
    )


def test_code_host_option_exports_every_repository(capsys, github, tmp_path):
    code, out, err = run(
        capsys, "export", "--base-url", github.base_url, "--code-host", "github",
        "--out", str(tmp_path), "--snapshot-date", DAY,
    )  # fmt: skip
    assert code == 0, err
    assert err == ""
    expected = expected_repositories(github.fleet)
    assert len(expected) > 10 and exported_repositories(tmp_path) == expected
    assert re.search(rf"^  repositories +{len(expected)} rows$", out, re.MULTILINE), out
    integrations = manifest(tmp_path)["fetch"]["integrations"]
    assert integrations["code_host"] == "github" and integrations["all_not_found"] is False
    assert "every one answered 404" not in out


def test_dims_code_host_in_the_environment(github, tmp_path):
    done = dims_export(tmp_path, {"DIMS_BASE_URL": github.base_url, "DIMS_CODE_HOST": "github"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert exported_repositories(tmp_path) == expected_repositories(github.fleet)
    assert manifest(tmp_path)["fetch"]["integrations"]["code_host"] == "github"


def test_a_wrong_segment_is_one_warning_the_summary_line_and_the_manifest(github, tmp_path):
    done = dims_export(tmp_path, {"DIMS_BASE_URL": github.base_url, "DIMS_CODE_HOST": None})
    assert done.returncode == 0, done.stderr  # published: the deployments are right
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("dims: warning: every repositories request answered 404")
    assert "--code-host" in line and "DIMS_CODE_HOST" in line and "'codehost'" in line
    count = len(referenced(github.fleet))
    assert f"  repositories: 0 of {count} integrations found (every one answered 404)\n" in (
        done.stdout
    )
    assert "unknown to the service" not in done.stdout
    integrations = manifest(tmp_path)["fetch"]["integrations"]
    assert integrations["all_not_found"] is True and integrations["code_host"] == "codehost"
    assert integrations["unknown_to_service"] == referenced(github.fleet)
    assert len(read_table(tmp_path, "repositories")) == 0
    assert len(read_table(tmp_path, "deployments")) == len(github.fleet.deployments)


def test_a_wrong_segment_in_every_workspace_is_still_one_warning(github, tmp_path):
    a, b = github.fleet.tenant_ids()
    done = dims_export(
        tmp_path, {"DIMS_BASE_URL": github.base_url, "DIMS_CODE_HOST": None},
        "--tenant-id", a, "--tenant-id", b,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"dims: warning: workspace(s) {a}, {b}: every repositories request")
    assert "--code-host" in line
    for tenant in (a, b):
        count = len(referenced(github.fleet, tenant))
        assert (
            f"workspace {tenant}: repositories: 0 of {count} integrations found "
            "(every one answered 404)"
        ) in done.stdout
        section = manifest(tmp_path)["fetch"]["workspaces"][tenant]["integrations"]
        assert section["all_not_found"] is True and section["code_host"] == "codehost"


@pytest.mark.parametrize(
    ("value", "shown"),
    [("a/b", "'a/b' is not one path segment"), ("", "is empty"), ("..", "not one path segment")],
)
def test_a_bad_code_host_option_is_one_usage_line(capsys, tmp_path, value, shown):
    code, out, err = run(
        capsys, "export", "--base-url", DEAD_URL, "--out", str(tmp_path), "--code-host", value
    )
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("dims export: error: argument --code-host: ")
    assert shown in line and "Traceback" not in err


def test_a_bad_dims_code_host_is_one_error_line(capsys, tmp_path, monkeypatch):
    """A bad variable is found when connecting, before any request (exit 1, as for a bad
    DIMS_BASE_URL or DIMS_TENANT_ID)."""
    monkeypatch.setenv("DIMS_CODE_HOST", "a/b")
    code, out, err = run(capsys, "export", "--base-url", DEAD_URL, "--out", str(tmp_path))
    assert code == 1 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("dims export: error: the code host (DIMS_CODE_HOST / --code-host)")
    assert "'a/b' is not one path segment" in line
    assert "ConnectError" not in line  # refused as malformed, not found out by connecting
