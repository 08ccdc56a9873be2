"""`dims.Client` against the live sandbox: resources, pagination, filters, typed models,
in-memory tables, options, raw responses (issue 29). The async twin: test_sdk_async_client.py;
the errors: test_sdk_errors.py; several workspaces: test_sdk_workspaces.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import uuid

import pandas as pd
import pytest

import dims
from dims import _fetch as fetch
from dims._errors import ConfigurationError, NotFoundError, ResponseFormatError
from dims._storage import read_table
from dims._tables import TABLE_NAMES
from dims.sandbox import generate_fleet, run_sandbox
from dims_client.models import Deployment, DeploymentPage, OAuthProvider, Repository


def ids(records):
    return [r["id"] for r in records]


@pytest.fixture
def sdk(sandbox):
    with dims.Client(base_url=sandbox.base_url) as client:
        yield client


@pytest.fixture
def counted():
    """A sandbox of its own, for tests that count requests: the shared one may still be
    answering a request an earlier test left in flight (a speculative page)."""
    with run_sandbox(deployments=500, seed=0) as handle:
        yield handle


@pytest.fixture
def counted_sdk(counted):
    with dims.Client(base_url=counted.base_url) as client:
        yield client


# -- the listing -----------------------------------------------------------------------------


@pytest.mark.parametrize(("page_size", "concurrency"), [(7, 3), (100, 1), (23, 8)])
def test_list_yields_every_deployment_once_as_a_model_across_pages(
    sandbox, sdk, page_size, concurrency
):
    listing = sdk.deployments.list(page_size=page_size, concurrency=concurrency)
    models = list(listing)
    assert all(isinstance(m, Deployment) for m in models)
    assert [str(m.id) for m in models] == ids(sandbox.fleet.deployments)
    assert isinstance(models[0].created_at, dt.datetime) and isinstance(models[0].id, uuid.UUID)
    pages = list(listing.pages())  # the same listing, as the fetch layer's pages
    assert len(pages) == math.ceil(len(sandbox.fleet.deployments) / page_size)
    assert [r["id"] for p in pages for r in p.records] == ids(sandbox.fleet.deployments)
    assert pages[1].source == f"page offset={page_size}"


def test_nothing_is_sent_until_the_listing_is_iterated_and_each_iteration_fetches_anew(
    counted, counted_sdk
):
    sandbox, sdk = counted, counted_sdk
    before = sandbox.stats.requests["/v2/deployments"]
    listing = sdk.deployments.list(page_size=100, concurrency=1)  # no request ahead
    assert sandbox.stats.requests["/v2/deployments"] == before
    assert len(list(listing)) == len(list(listing)) == len(sandbox.fleet.deployments)
    assert sandbox.stats.requests["/v2/deployments"] == before + 2 * 6  # 5 pages + 1 empty


def test_filters_reach_the_service_as_the_spec_names_them(sandbox, sdk):
    fleet = sandbox.fleet
    prod = {r["id"] for r in fleet.deployments if fleet.deployment_types[r["id"]] == "prod"}
    got = [str(m.id) for m in sdk.deployments.list(deployment_type="prod", page_size=30)]
    assert set(got) == prod and len(got) == len(prod)
    target = fleet.deployments[9]
    (only,) = sdk.deployments.list(deployment_ids=target["id"])
    assert str(only.id) == target["id"] and only.name == target["name"]
    version = target["image_version"]
    assert {m.image_version for m in sdk.deployments.list(image_version=version)} == {version}


def test_a_bad_filter_or_option_is_refused_when_the_listing_is_made(counted, counted_sdk):
    sandbox, sdk = counted, counted_sdk
    before = sandbox.stats.total_requests
    with pytest.raises(ConfigurationError, match="unknown deployment filter"):
        sdk.deployments.list(colour="blue")
    with pytest.raises(ConfigurationError, match=r"page_size must be within 1\.\.100"):
        sdk.deployments.list(page_size=500)
    with pytest.raises(ConfigurationError, match="concurrency must be 1 or more"):
        sdk.deployments.list(concurrency=0)
    with pytest.raises(ConfigurationError, match="timeout must be a positive number"):
        sdk.deployments.list(timeout=-1)
    assert sandbox.stats.total_requests == before


def test_models_read_the_published_services_spellings():
    """A fleet in the published service's names (`redis_cpu`, `langgraph_config_path`)
    arrives in the spec's attributes of the generated models."""
    with run_sandbox(deployments=30, seed=4, names="original") as sb:
        records = {r["id"]: r for r in sb.fleet.deployments}
        with dims.Client(base_url=sb.base_url, code_host=sb.code_host) as client:
            models = list(client.deployments.list(page_size=10))
    assert len(models) == 30
    checked = 0
    for model in models:
        spec_ = records[str(model.id)]["source_config"]["resource_spec"]
        if spec_ and spec_.get("redis_cpu") is not None:
            assert "cache_cpu" not in spec_  # the service sent only its own name...
            resource = model.source_config.resource_spec
            assert resource.cache_cpu == spec_["redis_cpu"]  # ...read into the spec's
            assert "redis_cpu" not in resource.additional_properties
            checked += 1
    assert checked >= 10


def test_a_record_the_model_cannot_hold_is_a_format_error_naming_it():
    fleet = generate_fleet(12, seed=5)
    del fleet.deployments[7]["id"]  # openapi.yaml requires it
    with run_sandbox(fleet=fleet) as sb, dims.Client(base_url=sb.base_url) as client:
        listing = client.deployments.list(page_size=5)
        with pytest.raises(ResponseFormatError, match=r"page offset=5 record 2: not a Deployment"):
            list(listing)


# -- tables in memory ------------------------------------------------------------------------


def _without_time(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in ("snapshot_at", "snapshot_date") if c in frame])


def test_to_pandas_equals_the_tables_an_export_writes(tmp_path):
    """In memory, no snapshot on disk: every table equals the export's, read back."""
    with (
        run_sandbox(deployments=150, seed=2, names="mixed") as sb,
        dims.Client(base_url=sb.base_url, code_host=sb.code_host) as client,
    ):
        frames = client.deployments.list(page_size=40).to_pandas()
        tables = client.deployments.list(deployment_type="dev").to_arrow()
        assert list(tmp_path.iterdir()) == []  # nothing written so far
        exported = client.take_snapshot(tmp_path / "out")
        dev = client.take_snapshot(tmp_path / "dev", deployment_type="dev")
    assert set(frames) == set(TABLE_NAMES)
    assert len(frames["deployments"]) == 150 and len(frames["repositories"]) > 0
    for name, frame in frames.items():
        written = read_table(exported.out_dir, name)
        pd.testing.assert_frame_equal(_without_time(frame), _without_time(written), obj=name)
        assert frame["snapshot_at"].nunique() <= 1
    written_dev = read_table(dev.out_dir, "deployments")
    assert tables["deployments"].num_rows == len(written_dev) > 0
    assert set(tables["deployments"]["deployment_type"].to_pylist()) == {"dev"}
    assert tables["deployments"]["id"].to_pylist() == written_dev["id"].tolist()


# -- options: timeouts, retries, copies ------------------------------------------------------


def test_the_client_reads_the_environment_and_never_shows_the_key(monkeypatch, sandbox):
    monkeypatch.setenv("DIMS_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("DIMS_API_KEY", "env-secret-value-123")
    with dims.Client() as client:
        assert client.base_url == sandbox.base_url
        assert client.max_retries == 5 and client.tenant_ids == ()
        for shown in (repr(client), repr(client.with_options(timeout=2)), repr(client.options)):
            assert "env-secret-value-123" not in shown and "api_key=<set>" in shown
        assert len(client.providers.list()) == len(sandbox.fleet.providers)


def test_with_options_is_a_copy_sharing_the_connections(sandbox, sdk):
    copy = sdk.with_options(timeout=4, max_retries=1)
    assert (copy.max_retries, sdk.max_retries) == (1, 5)
    assert "timeout=4.0" in repr(copy) and "timeout=4.0" not in repr(sdk)
    copy.close()  # a copy leaves the connections to its origin
    assert len(sdk.providers.list()) == len(copy.providers.list()) > 0
    with pytest.raises(ConfigurationError, match="max_retries"):
        sdk.with_options(max_retries=-1)


def test_a_slow_service_beyond_a_per_call_timeout_is_an_api_timeout_error():
    """The sandbox answers after 1.5 s: a call with `timeout=0.2` gives up on each attempt
    and raises APITimeoutError (still a APIConnectionError, as `except` clauses were written);
    the client's own timeout, and its copies', are untouched by it."""
    with run_sandbox(deployments=5, seed=1, latency_ms=1500) as sb:
        client = dims.Client(base_url=sb.base_url, max_retries=1)
        with client:
            before = sb.stats.requests["/v2/auth/providers"]
            with pytest.raises(dims.APITimeoutError, match="ReadTimeout") as info:
                client.providers.list(timeout=0.2)
            assert isinstance(info.value, dims.APIConnectionError | dims.APIConnectionError)
            with pytest.raises(dims.APITimeoutError):
                list(client.deployments.list(timeout=0.2))
            with pytest.raises(dims.APITimeoutError):
                client.with_options(timeout=0.2, max_retries=0).providers.list()
            assert len(client.providers.list()) == len(sb.fleet.providers)  # 30 s: fine
            # 2 attempts (max_retries=1) each for the first two calls, 1 for the copy, then 1
            assert sb.stats.requests["/v2/auth/providers"] - before == 2 + 1 + 1
    assert "\n" not in str(info.value)


def test_max_retries_bounds_the_attempts():
    from dims.sandbox import Faults

    with (
        run_sandbox(deployments=5, seed=1, faults=Faults(error_every=1)) as sb,
        dims.Client(base_url=sb.base_url, max_retries=2) as client,
    ):
        with pytest.raises(dims.ServerError, match="HTTP 503"):
            client.providers.list()
        assert sb.stats.faults["error"] == 3
        with pytest.raises(dims.ServerError):
            client.with_options(max_retries=0).providers.list()
        assert sb.stats.faults["error"] == 4


# -- providers, repositories -----------------------------------------------------------------


def test_providers_and_repositories_are_models(sandbox, sdk):
    providers = sdk.providers.list()
    assert all(isinstance(p, OAuthProvider) for p in providers)
    assert [p.id for p in providers] == [p["id"] for p in sandbox.fleet.providers]
    first = sandbox.fleet.providers[0]
    got = sdk.providers.get(first["provider_id"])
    assert (got.provider_id, got.name) == (first["provider_id"], first["name"])
    with pytest.raises(NotFoundError, match="no-such-provider"):
        sdk.providers.get("no-such-provider")
    integration_id, expected = next(iter(sandbox.fleet.repositories.items()))
    repos = sdk.repositories.list(integration_id)
    assert all(isinstance(r, Repository) for r in repos)
    assert [r.id for r in repos] == [r["id"] for r in expected]
    with pytest.raises(ConfigurationError, match="is not a UUID"):
        sdk.repositories.list("not-a-uuid")


# -- raw responses ---------------------------------------------------------------------------


def test_raw_response_is_one_request_with_status_headers_and_the_parsed_page(counted, counted_sdk):
    sandbox, sdk = counted, counted_sdk
    before = sandbox.stats.requests["/v2/deployments"]
    raw = sdk.deployments.with_raw_response.list(page_size=5, deployment_type="prod")
    assert sandbox.stats.requests["/v2/deployments"] == before + 1  # the first page only
    assert raw.status_code == 200
    assert raw.headers["content-type"].startswith("application/json")
    assert raw.url.params["deployment_type"] == "prod" and raw.url.params["limit"] == "5"
    page = raw.parse()
    assert isinstance(page, DeploymentPage) and raw.parse() is page
    assert len(page.resources) == 5 and page.offset == 5
    assert all(isinstance(d, Deployment) for d in page.resources)
    assert raw.json()["offset"] == 5
    later = sdk.deployments.with_raw_response.list(page_size=5, offset=page.offset)
    assert later.parse().offset == 10

    providers = sdk.providers.with_raw_response.list()
    assert providers.status_code == 200 and len(providers.parse()) == len(sandbox.fleet.providers)
    slug = sandbox.fleet.providers[0]["provider_id"]
    assert sdk.providers.with_raw_response.get(slug).parse().provider_id == slug
    integration_id = next(iter(sandbox.fleet.repositories))
    repos = sdk.repositories.with_raw_response.list(integration_id)
    assert [r.id for r in repos.parse()] == [
        r["id"] for r in sandbox.fleet.repositories[integration_id]
    ]


def test_raw_response_carries_no_key():
    with (
        run_sandbox(deployments=5, seed=1, api_key="raw-secret-key-42") as sb,
        dims.Client(base_url=sb.base_url, api_key="raw-secret-key-42") as client,
    ):
        raw = client.providers.with_raw_response.list()
    assert raw.status_code == 200
    request = raw.http_response.request
    assert "raw-secret-key-42" not in str(request.headers) + repr(raw)
    assert request.url.path == "/v2/auth/providers"


# -- the lower layer keeps working -----------------------------------------------------------


def test_the_lower_layer_still_works_beside_the_client(sandbox, client):
    """`connect` + `fetch` (what the SDK is built on) give the same fleet."""
    assert ids(fetch.iter_deployments(client)) == ids(sandbox.fleet.deployments)


def test_connect_refuses_a_list_of_tenants_with_one_line():
    from dims._connection import connect

    with pytest.raises(ConfigurationError) as info:
        connect("http://127.0.0.1:8765", tenant_id=["ws-a", "ws-b"])  # type: ignore[arg-type]
    assert "dims.Client" in str(info.value) and "\n" not in str(info.value)


def test_the_documented_example_runs_as_written():
    """The README's (or the docs') example of the SDK, executed as a user pastes it."""
    from repo import ROOT

    marker = "dims.Client(base_url=sandbox.base_url) as client:"
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    blocks = [
        block.split("\n", 1)[1]
        for page in pages
        if page.exists()
        for block in page.read_text(encoding="utf-8").split("```python")[1:]
        for block in [block.split("```", 1)[0]]
        if marker in block
    ]
    assert blocks, "no page shows the SDK's example"
    exec(compile(blocks[0], "README example", "exec"), {})


def test_dims_take_snapshot_takes_the_sdk_client(sandbox, tmp_path):
    """Issue 37: docs/journeys.md's `dims.take_snapshot(client, …)` with a `dims.Client` (it
    was an AttributeError); the same snapshot as `client.take_snapshot`, options and filters
    as keywords or as values. Of an AsyncClient it says to await the client's own."""
    with dims.Client(base_url=sandbox.base_url) as client:
        door = dims.take_snapshot(client, tmp_path / "door", deployment_type="dev", concurrency=2)
        own = client.take_snapshot(
            tmp_path / "own", dims.ExportOptions(concurrency=2), {"deployment_type": "dev"}
        )
    one, other = (read_table(r.out_dir, "deployments") for r in (door, own))
    assert sorted(one["id"]) == sorted(other["id"]) and set(one["deployment_type"]) == {"dev"}
    assert door.manifest.to_dict()["filters"] == own.manifest.to_dict()["filters"]

    async def from_async() -> None:
        async with dims.AsyncClient(base_url=sandbox.base_url) as client:
            dims.take_snapshot(client, tmp_path / "never")  # type: ignore[arg-type]

    with pytest.raises(TypeError, match=r"await client\.take_snapshot"):
        asyncio.run(from_async())
    assert not (tmp_path / "never").exists()
