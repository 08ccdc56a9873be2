"""The repositories path's code-host segment (issue 26, item 2), over loopback, read back
from Parquet.

The interface spec writes `/v1/integrations/forge/codehost/{integration_id}/repos`; the
published service's path has `github` there. dims sends the segment it is connected with
(`connect(code_host=…)`, `DIMS_CODE_HOST`), and the sandbox serves one segment only, as a
real service does, so that a wrong one answers 404 for every integration:

| the export…                                   | outcome                                       |
|-----------------------------------------------|-----------------------------------------------|
| names the segment the service has             | every referenced integration's repositories   |
| names another one: every request 404          | one CodeHostWarning naming --code-host, the   |
|                                               | summary's "0 of N" line, `all_not_found`      |
| some integrations unknown (404), others found | unknown_to_service lists them; no warning     |
| of several workspaces, all 404                | one warning naming them, a line per workspace |
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import orjson
import pytest

from dims import _fetch as fetch
from dims._connection import DimsClient, Settings, code_host_of, connect
from dims._errors import ConfigurationError, NotFoundError
from dims._snapshot import take_snapshot
from dims._storage import read_table
from dims.sandbox import SandboxHandle, generate_fleet, run_sandbox
from dims_client import Client

DAY = dt.date(2026, 5, 6)
ALL_404 = "every one answered 404"


def referenced(fleet) -> list[str]:
    """The integrations the fleet's deployments name: those an export lists."""
    named = {(r.get("source_config") or {}).get("integration_id") for r in fleet.deployments}
    return sorted(i for i in named if i is not None)


def expected_repositories(fleet) -> set[tuple[str, int]]:
    return {
        (repo["host_integration_id"], repo["id"])
        for integration in referenced(fleet)
        for repo in fleet.repositories.get(integration, [])
    }


def exported_repositories(out) -> set[tuple[str, int]]:
    frame = read_table(out, "repositories", columns=["host_integration_id", "id"])
    return {(row.host_integration_id, int(row.id)) for row in frame.itertuples()}


def manifest(out) -> dict:
    return orjson.loads((out / "_manifests" / f"{DAY.isoformat()}.json").read_bytes())


@contextmanager
def recorded() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def code_host_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, fetch.CodeHostWarning)]


@pytest.fixture(scope="module")
def github() -> Iterator[SandboxHandle]:
    """A sandbox serving the repositories under `github`, as the published service does."""
    with run_sandbox(fleet=generate_fleet(80, seed=7, tenants=3), code_host="github") as sb:
        yield sb


# --- the right segment ---------------------------------------------------------------------


def test_connect_with_the_services_segment_exports_every_repository(github, tmp_path):
    client = connect(github.base_url, code_host="github")
    assert isinstance(client, DimsClient) and code_host_of(client) == "github"
    with recorded() as caught:
        result = take_snapshot(client, tmp_path, snapshot_date=DAY)
    assert code_host_warnings(caught) == []
    expected = expected_repositories(github.fleet)
    assert len(expected) > 10
    assert exported_repositories(tmp_path) == expected
    assert result.rows["repositories"] == len(expected)
    integrations = manifest(tmp_path)["fetch"]["integrations"]
    assert integrations["code_host"] == "github" and integrations["all_not_found"] is False
    assert integrations["listed"] == len(referenced(github.fleet))
    assert integrations["unknown_to_service"] == []
    assert ALL_404 not in result.summary()


def test_the_segment_is_in_the_request_the_generated_builder_makes(github):
    """fetch asks the generated request builder, with the client's segment: no URL by hand."""
    integration = referenced(github.fleet)[0]
    requests_before = github.stats.requests[f"/v1/integrations/forge/github/{integration}/repos"]
    repos = fetch.list_repositories(connect(github.base_url, code_host="github"), integration)
    assert repos == github.fleet.repositories[integration]
    after = github.stats.requests[f"/v1/integrations/forge/github/{integration}/repos"]
    assert after == requests_before + 1
    with pytest.raises(NotFoundError, match="HTTP 404"):
        fetch.list_repositories(connect(github.base_url), integration)  # codehost: unknown path


def test_the_async_fetch_uses_the_clients_segment_too(github):
    integrations = referenced(github.fleet)

    async def both() -> tuple[fetch.Repositories, fetch.Repositories]:
        right = connect(github.base_url, code_host="github")
        wrong = connect(github.base_url)
        return (
            await fetch.afetch_repositories(right, integrations),
            await fetch.afetch_repositories(wrong, integrations),
        )

    right, wrong = asyncio.run(both())
    assert sorted(right.by_integration) == integrations and not right.all_not_found
    assert right.code_host == "github"
    assert wrong.missing == integrations and wrong.all_not_found
    assert wrong.code_host == "codehost"


def test_dims_code_host_in_the_environment_sets_the_segment(github, tmp_path, monkeypatch):
    monkeypatch.setenv("DIMS_CODE_HOST", "github")
    client = connect(github.base_url)
    assert client.code_host == "github"
    assert connect(github.base_url, code_host="codehost").code_host == "codehost"  # argument wins
    take_snapshot(client, tmp_path, snapshot_date=DAY)
    assert exported_repositories(tmp_path) == expected_repositories(github.fleet)
    assert manifest(tmp_path)["fetch"]["integrations"]["code_host"] == "github"


def test_a_client_not_made_by_connect_names_the_environments_segment(monkeypatch):
    plain = Client(base_url="http://127.0.0.1:1")
    assert code_host_of(plain) == "codehost"
    monkeypatch.setenv("DIMS_CODE_HOST", "gitlab")
    assert code_host_of(plain) == "gitlab"
    assert connect("http://127.0.0.1:1").with_headers({"X-A": "b"}).code_host == "gitlab"


@pytest.mark.parametrize("bad", ["a/b", "", ".", "..", "git hub", "github\n", "x" * 65, "é"])
def test_a_segment_that_is_not_one_path_segment_is_refused(bad):
    with pytest.raises(ConfigurationError) as info:
        connect("http://127.0.0.1:1", code_host=bad)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert "DIMS_CODE_HOST / --code-host" in message
    with pytest.raises(ConfigurationError, match="code host"):
        Settings(code_host=bad).validate()


def test_an_empty_dims_code_host_is_unset_and_a_bad_one_refused(monkeypatch):
    monkeypatch.setenv("DIMS_CODE_HOST", "")
    assert connect("http://127.0.0.1:1").code_host == "codehost"  # like every DIMS_* variable
    monkeypatch.setenv("DIMS_CODE_HOST", "a/b")
    with pytest.raises(ConfigurationError, match=r"DIMS_CODE_HOST .* 'a/b' is not one path"):
        connect("http://127.0.0.1:1")


# --- a wrong segment: every request 404 ----------------------------------------------------


def test_every_request_404_is_one_warning_a_summary_line_and_a_manifest_record(github, tmp_path):
    integrations = referenced(github.fleet)
    with recorded() as caught:
        result = take_snapshot(connect(github.base_url), tmp_path, snapshot_date=DAY)
    (warning,) = code_host_warnings(caught)
    assert len(warning.splitlines()) == 1
    assert "--code-host" in warning and "DIMS_CODE_HOST" in warning
    assert "'codehost'" in warning and f"({len(integrations)} integration(s))" in warning
    summary = result.summary()
    line = f"repositories: 0 of {len(integrations)} integrations found ({ALL_404})"
    assert f"  {line}\n" in summary + "\n"
    assert "unknown to the service" not in summary  # not read as N unknown integrations
    integrations_section = manifest(tmp_path)["fetch"]["integrations"]
    assert integrations_section == {
        "listed": 0,
        "unknown_to_service": integrations,
        "not_uuid": [],
        "code_host": "codehost",
        "all_not_found": True,
    }
    # the deployments are right all the same
    assert result.rows["deployments"] == len(github.fleet.deployments)
    assert result.rows["repositories"] == 0


def test_only_some_404_keeps_them_listed_as_unknown_without_the_warning(tmp_path):
    fleet = generate_fleet(80, seed=7)
    gone = referenced(fleet)[:2]
    for integration in gone:
        del fleet.repositories[integration]  # deleted since the deployments named them
    with run_sandbox(fleet=fleet) as sb, recorded() as caught:
        result = take_snapshot(connect(sb.base_url), tmp_path, snapshot_date=DAY)
    assert code_host_warnings(caught) == []
    integrations = manifest(tmp_path)["fetch"]["integrations"]
    assert integrations["unknown_to_service"] == sorted(gone)
    assert integrations["all_not_found"] is False and integrations["code_host"] == "codehost"
    assert integrations["listed"] == len(referenced(fleet)) - 2
    summary = result.summary()
    assert "2 integration(s) referenced by deployments are unknown to the service (404)" in summary
    assert ALL_404 not in summary
    assert exported_repositories(tmp_path) == expected_repositories(fleet)
    assert len(expected_repositories(fleet)) > 0


def test_no_request_at_all_is_not_every_request_404():
    only_malformed = fetch.Repositories(malformed=["not-a-uuid"])
    assert not only_malformed.all_not_found
    unknown = str(uuid.UUID(int=7, version=4))
    assert fetch.Repositories(missing=[unknown]).all_not_found
    found = fetch.Repositories(missing=[unknown], by_integration={"x": []})
    assert not found.all_not_found  # one found: the segment is right, that one is unknown


def test_several_workspaces_all_404_are_one_warning_naming_them(github, tmp_path):
    tenants = github.fleet.tenant_ids()
    clients = {t: connect(github.base_url, tenant_id=t) for t in tenants}
    with recorded() as caught:
        result = take_snapshot(clients, tmp_path, snapshot_date=DAY)
    (warning,) = code_host_warnings(caught)
    assert "--code-host" in warning and "'codehost'" in warning
    assert all(t in warning for t in tenants)
    summary = result.summary()
    for tenant in tenants:
        section = manifest(tmp_path)["fetch"]["workspaces"][tenant]["integrations"]
        assert section["all_not_found"] is True and section["code_host"] == "codehost"
        count = len(section["unknown_to_service"])
        assert count >= 1
        assert f"workspace {tenant}: repositories: 0 of {count} integrations found" in summary

    right = {t: connect(github.base_url, tenant_id=t, code_host="github") for t in tenants}
    with recorded() as caught:
        take_snapshot(right, tmp_path / "right", snapshot_date=DAY)
    assert code_host_warnings(caught) == []
    assert exported_repositories(tmp_path / "right") == expected_repositories(github.fleet)


@pytest.mark.parametrize("bad", ["a/b", ".", "..", "git hub", "x" * 65])
def test_a_dims_code_host_that_is_no_path_segment_is_refused_on_every_path(bad, monkeypatch):
    """However the repositories URL is reached, `DIMS_CODE_HOST` is checked on the way: by
    `connect()`, by `code_host_of()` and every fetch of a client `connect()` did not make
    (the generated client's own), sync and async. Nothing listens at the base URL, so the
    ConfigurationError shows that no request was sent."""
    monkeypatch.setenv("DIMS_CODE_HOST", bad)
    plain = Client(base_url="http://127.0.0.1:1")
    integration = str(uuid.UUID(int=1))
    calls = {
        "connect": lambda: connect("http://127.0.0.1:1"),
        "code_host_of": lambda: code_host_of(plain),
        "repositories_request": lambda: fetch.repositories_request(plain, integration),
        "list_repositories": lambda: fetch.list_repositories(plain, integration),
        "fetch_repositories": lambda: fetch.fetch_repositories(plain, [integration]),
        "alist_repositories": lambda: asyncio.run(fetch.alist_repositories(plain, integration)),
        "afetch_repositories": lambda: asyncio.run(fetch.afetch_repositories(plain, [integration])),
    }
    for name, call in calls.items():
        with pytest.raises(ConfigurationError) as info:
            call()
        message = str(info.value)
        assert len(message.splitlines()) == 1, name
        assert message.startswith("the code host (DIMS_CODE_HOST / --code-host)"), (name, message)
        assert "is not one path segment" in message, name
