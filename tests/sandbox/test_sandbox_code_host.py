"""The sandbox serves its repositories under one code-host segment, as a real service does:
`codehost` (the interface spec's literal) by default, or the one asked for (`github`, the
published service's); any other segment is an unknown path, a JSON 404. Over real HTTP."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from repo import ROOT

from dims._errors import ConfigurationError
from dims.sandbox import create_app, generate_fleet, run_sandbox

DIMS = Path(sys.executable).parent / "dims"


def repos_path(segment: str, integration: str) -> str:
    return f"/v1/integrations/forge/{segment}/{integration}/repos"


@pytest.mark.parametrize(("served", "other"), [("codehost", "github"), ("github", "codehost")])
def test_only_the_segment_served_answers(served, other):
    fleet = generate_fleet(40, seed=3)
    integration, repos = next(iter(fleet.repositories.items()))
    options = {} if served == "codehost" else {"code_host": served}  # codehost: the default
    with run_sandbox(fleet=fleet, **options) as sb, httpx.Client(base_url=sb.base_url) as http:
        assert sb.code_host == served
        found = http.get(repos_path(served, integration))
        unknown = http.get(repos_path(other, integration))
        invalid = http.get(repos_path(served, "not-a-uuid"))
    assert found.status_code == 200 and found.json() == repos
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == "application/json"
    assert isinstance(unknown.json()["detail"], str)
    assert invalid.status_code == 422  # the route is there: its parameter is checked


@pytest.mark.parametrize("bad", ["a/b", "", "..", "{integration_id}"])
def test_a_segment_that_is_not_one_path_segment_is_refused(bad):
    with pytest.raises(ConfigurationError, match="code host") as info:
        create_app(generate_fleet(5, seed=1), code_host=bad)
    assert len(str(info.value).splitlines()) == 1


def test_dims_sandbox_code_host_serves_that_segment_and_says_where(tmp_path):
    """`dims sandbox --code-host github`: the published service's path, printed at start."""
    proc = subprocess.Popen(
        [str(DIMS), "sandbox", "--port", "0", "--deployments", "40", "--seed", "3",
         "--code-host", "github"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        url = re.search(r"http://127\.0\.0\.1:\d+", lines[0])
        assert url, lines
        assert lines[2].strip() == (
            "dims sandbox: repositories at /v1/integrations/forge/github/{integration_id}/repos "
            "(dims export --code-host github)"
        )
        integration, repos = next(iter(generate_fleet(40, seed=3).repositories.items()))
        with httpx.Client(base_url=url[0], timeout=10) as http:
            found = http.get(repos_path("github", integration))
            unknown = http.get(repos_path("codehost", integration))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert found.status_code == 200 and found.json() == repos
    assert unknown.status_code == 404


def test_dims_sandbox_refuses_a_bad_code_host_in_one_usage_line():
    done = subprocess.run(
        [str(DIMS), "sandbox", "--port", "0", "--code-host", "a/b"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("dims sandbox: error: argument --code-host:")
    assert "'a/b' is not one path segment" in line
