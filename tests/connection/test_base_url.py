"""A base URL that ends in the API's version prefix (`https://host/v2`) is the API's root.

The service's documentation shows paths next to `https://host/v2`, and the generated client
adds `/v2/...` itself: kept, the prefix made every request `/v2/v2/...`, whose 404 blamed the
identifier. The prefix is dropped, with one warning line saying so; other paths (a proxy's
`/api`) are kept.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from dims import _fetch as fetch
from dims._connection import Settings, connect
from dims._connection._settings import VERSION_PREFIXES
from dims._spec import document
from dims.sandbox import run_sandbox

DIMS = Path(sys.executable).parent / "dims"


def test_the_version_prefixes_are_the_specs():
    assert {"/" + path.split("/")[1] for path in document()["paths"]} == VERSION_PREFIXES
    assert {"/v1", "/v2"} == VERSION_PREFIXES


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("https://api.example.com/v2", "https://api.example.com"),
        ("https://api.example.com/v2/", "https://api.example.com"),
        ("https://api.example.com/v1", "https://api.example.com"),
        ("https://example.com/api/v2", "https://example.com/api"),
    ],
)
def test_the_prefix_is_dropped_with_one_warning(given, root):
    with pytest.warns(UserWarning) as caught:
        settings = Settings.resolve(given)
    assert settings.base_url == root
    assert [str(w.message) for w in caught] == [
        f"the base URL {given.rstrip('/')!r} ends in /{given.rstrip('/').rpartition('/')[2]}, "
        f"the API's version prefix, which dims adds to every path itself; using {root!r}"
    ]


@pytest.mark.parametrize(
    "given", ["https://api.example.com", "https://v2", "https://h/v3", "https://h/v2x"]
)
def test_other_base_urls_are_kept_without_a_warning(given):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # not a GC's ResourceWarning
        assert Settings.resolve(given).base_url == given


@pytest.mark.parametrize("suffix", ["/v2", "/v2/", "/v1"])
def test_requests_go_to_the_apis_paths_not_under_the_prefix_twice(suffix):
    with run_sandbox(deployments=12, seed=3) as sb:
        with pytest.warns(UserWarning, match="the API's version prefix"):
            client = connect(sb.base_url + suffix)
        assert len(list(fetch.iter_deployments(client, page_size=5))) == 12
        assert fetch.list_providers(client)
        served = sb.stats.requests
    assert served["/v2/deployments"] >= 3 and served["/v2/auth/providers"] == 1
    assert [path for path in served if path.count("/v") > 1] == []


def test_the_command_line_exports_from_a_base_url_ending_in_v2(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIMS_")}
    with run_sandbox(deployments=12, seed=3) as sb:
        done = subprocess.run(
            [str(DIMS), "export", "--base-url", f"{sb.base_url}/v2", "--out", str(tmp_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        served = sb.stats.requests
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"dims: warning: the base URL '{sb.base_url}/v2' ends in /v2, the API's version "
        f"prefix, which dims adds to every path itself; using '{sb.base_url}'"
    ]
    assert "12 deployments read" in done.stdout
    assert served["/v2/deployments"] >= 1
    assert [path for path in served if path.count("/v") > 1] == []
