"""Fetching against the live sandbox: paging, concurrency, dedupe, faults, typed errors."""

from __future__ import annotations

import asyncio
import logging
import warnings

import pytest

from dims import _fetch as fetch
from dims._connection import RetryPolicy, connect, retry_transport
from dims._errors import (
    AuthenticationError,
    ConfigurationError,
    NotFoundError,
    PaginationError,
    ResponseFormatError,
    ServerError,
)
from dims.sandbox import Faults, generate_fleet, run_sandbox


def ids(records):
    return [r["id"] for r in records]


def by_type(fleet):
    out: dict[str, set[str]] = {}
    for record in fleet.deployments:
        out.setdefault(fleet.deployment_types[record["id"]], set()).add(record["id"])
    return out


# The standard fleet (conftest's `sandbox`) is 500 records: pages of 100 and 20 end on an empty
# page, pages of 7 on a short one.
@pytest.mark.parametrize(("page_size", "concurrency"), [(100, 1), (20, 8), (7, 3), (100, 8)])
def test_listing_yields_every_record_once_in_order(sandbox, client, page_size, concurrency):
    got = list(fetch.iter_deployments(client, page_size=page_size, concurrency=concurrency))
    assert ids(got) == ids(sandbox.fleet.deployments)


def test_async_and_sync_agree(sandbox, client):
    async def collect():
        return [r async for r in fetch.aiter_deployments(client, page_size=17, concurrency=4)]

    async_ids = ids(asyncio.run(collect()))
    assert async_ids == ids(fetch.iter_deployments(client, page_size=17, concurrency=4))
    assert async_ids == ids(sandbox.fleet.deployments)


def typed(pages):
    """deployment id -> the type its page tells (the record's own, else the listings')."""
    return {r["id"]: p.type_of(r) for p in pages for r in p.records}


def test_full_fetch_tags_each_record_with_the_type_that_listed_it(sandbox, client):
    stats = fetch.FetchStats()
    pages = list(fetch.fetch_deployments(client, stats=stats, page_size=25))
    assert [(s.listing, s.role) for s in stats.listings] == [("all", "fleet")] + [
        (t, "tags") for t in fetch.deployment_types()
    ]
    assert all(s.ended_on_empty_page for s in stats.listings)
    assert ids(r for p in pages for r in p.records) == ids(sandbox.fleet.deployments)
    assert typed(pages) == sandbox.fleet.deployment_types
    n = len(sandbox.fleet.deployments)
    assert stats.records == n and stats.duplicates == 0
    assert (stats.typed_by_record, stats.typed_by_listing, stats.untyped) == (0, n, 0)
    expected_integrations = {
        r["source_config"]["integration_id"]
        for r in sandbox.fleet.deployments
        if isinstance(r.get("source_config"), dict) and r["source_config"].get("integration_id")
    }
    assert stats.integration_ids == expected_integrations


def test_async_full_fetch_matches_sync(client):
    async def collect():
        return typed([p async for p in fetch.afetch_deployments(client, page_size=30)])

    assert asyncio.run(collect()) == typed(fetch.fetch_deployments(client))


def test_records_naming_their_type_need_one_listing():
    with run_sandbox(deployments=40, seed=3, embed_deployment_type=True) as sb:
        stats = fetch.FetchStats()
        pages = list(fetch.fetch_deployments(connect(sb.base_url), stats=stats, page_size=10))
    assert [s.role for s in stats.listings] == ["fleet"]
    assert sum(len(p.records) for p in pages) == 40
    assert stats.typed_by_record == 40


def test_filters_reach_the_service_as_the_spec_names_them(sandbox, client):
    target = sandbox.fleet.deployments[5]
    got = list(fetch.iter_deployments(client, deployment_ids=target["id"]))
    assert ids(got) == [target["id"]]
    version = target["image_version"]
    got = list(fetch.iter_deployments(client, image_version=version, page_size=10))
    assert got and {r["image_version"] for r in got} == {version}
    assert ids(got) == [
        r["id"] for r in sandbox.fleet.deployments if r.get("image_version") == version
    ]
    prod = list(fetch.iter_deployments(client, deployment_type="prod", page_size=50))
    assert set(ids(prod)) == by_type(sandbox.fleet)["prod"]


def test_unknown_filter_and_bad_page_size_fail_before_any_request(client):
    with pytest.raises(ConfigurationError, match="unknown deployment filter"):
        list(fetch.iter_deployments(client, colour="blue"))
    with pytest.raises(ConfigurationError, match=r"1\.\.100"):
        list(fetch.iter_deployments(client, page_size=101))


def test_a_filter_value_the_spec_refuses_is_refused_before_a_request(client):
    """The spec lists the deployment types: a value it does not is the CLI's one line, at
    once (the service's 422 is typed: tests/connection/test_fault_matrix.py, row 16)."""
    with pytest.raises(ConfigurationError) as info:
        list(fetch.iter_deployments(client, deployment_type="nightly"))
    message = str(info.value)
    assert "deployment_type" in message and "'prod'" in message and "\n" not in message


def test_providers_and_repositories(sandbox, client):
    providers = fetch.list_providers(client)
    assert [p["id"] for p in providers] == [p["id"] for p in sandbox.fleet.providers]
    first = sandbox.fleet.providers[0]
    assert fetch.get_provider(client, first["provider_id"]) == first
    with pytest.raises(NotFoundError, match="no-such-provider"):
        fetch.get_provider(client, "no-such-provider")

    integration_ids = list(sandbox.fleet.repositories)
    missing = "00000000-0000-4000-8000-000000000000"
    repos = fetch.fetch_repositories(client, [*integration_ids, missing], concurrency=4)
    assert repos.by_integration == {i: sandbox.fleet.repositories[i] for i in integration_ids}
    assert repos.missing == [missing]

    async def both():
        return await fetch.afetch_repositories(client, integration_ids), await fetch.aget_provider(
            client, first["provider_id"]
        )

    async_repos, async_provider = asyncio.run(both())
    assert async_repos.by_integration == repos.by_integration
    assert async_provider == first


# -- faults ----------------------------------------------------------------------------------


def fetch_all_ids(base_url, retry, **kwargs):
    client = connect(base_url, retry=retry)
    records = list(fetch.iter_deployments(client, page_size=20, concurrency=4, **kwargs))
    return ids(records), retry_transport(client).stats


@pytest.mark.parametrize(
    "faults",
    [
        Faults(rate_limit_every=3, retry_after_s=0),
        Faults(error_every=4, error_status=503),
        Faults(error_every=4, error_status=502),
        Faults(error_every=5, error_status=500, error_html=True),
        Faults(truncate_every=3),
        Faults(reset_every=4),
    ],
    ids=["429", "503", "502", "500-html", "truncated", "reset"],
)
def test_faults_are_retried_and_every_record_arrives_once(faults, fast_retry):
    with run_sandbox(deployments=150, seed=1, faults=faults) as sb:
        got, stats = fetch_all_ids(sb.base_url, fast_retry)
        assert got == ids(sb.fleet.deployments)
        assert stats.retries > 0


def test_retry_after_is_honoured():
    faults = Faults(rate_limit_every=2, retry_after_s=1)
    with run_sandbox(deployments=30, seed=1, faults=faults) as sb:
        client = connect(sb.base_url, retry=RetryPolicy(initial_backoff=0.0, max_backoff=0.0))
        import time

        started = time.monotonic()
        fetch.list_providers(client)
        fetch.list_providers(client)  # the second request is rate limited once
        assert time.monotonic() - started >= 1.0


def test_persistent_server_error_is_a_typed_error_after_bounded_attempts():
    with run_sandbox(deployments=30, seed=1, faults=Faults(error_every=1)) as sb:
        client = connect(sb.base_url, retry=RetryPolicy(retries=2, initial_backoff=0.01))
        with pytest.raises(ServerError, match="HTTP 503"):
            list(fetch.iter_deployments(client))
        assert retry_transport(client).stats.retries >= 2


def test_persistent_truncation_is_a_format_error():
    with run_sandbox(deployments=30, seed=1, faults=Faults(truncate_every=1)) as sb:
        client = connect(sb.base_url, retry=RetryPolicy(retries=1, initial_backoff=0.01))
        with pytest.raises(ResponseFormatError, match="truncated or non-JSON"):
            fetch.list_providers(client)


def test_an_offset_that_never_advances_is_counted_on_with_one_warning():
    with run_sandbox(deployments=100, seed=1, faults=Faults(stuck_offset=True)) as sb:
        client = connect(sb.base_url)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = ids(fetch.iter_deployments(client, page_size=10))
        assert got == ids(sb.fleet.deployments)
        paging = [w for w in caught if issubclass(w.category, fetch.PagingWarning)]
        assert len(paging) == 1 and "offset 0" in str(paging[0].message)


def test_ignored_offset_is_a_pagination_error_not_a_loop_sync_and_async():
    with run_sandbox(deployments=100, seed=1, faults=Faults(ignore_offset=True)) as sb:
        client = connect(sb.base_url)
        with pytest.raises(PaginationError, match="ignore `offset`"):
            list(fetch.iter_deployments(client, page_size=10))

        async def collect():
            return [r async for r in fetch.aiter_deployments(client, page_size=10)]

        with pytest.raises(PaginationError, match="ignore `offset`"):
            asyncio.run(collect())


def test_insertion_while_paging_is_deduplicated_with_one_warning():
    # the fault inserts the fleet's next extra deployment: list the type it will have
    _, inserted_type = generate_fleet(120, seed=2).new_deployment()
    faults = Faults(insert_while_paging=2)
    with run_sandbox(fleet=generate_fleet(120, seed=2), faults=faults) as sb:
        client = connect(sb.base_url)
        stats = fetch.FetchStats()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pages = list(
                fetch.fetch_deployments(
                    client, stats=stats, page_size=10, concurrency=1, deployment_type=inserted_type
                )
            )
        got = ids(r for p in pages for r in p.records)
        assert len(got) == len(set(got))
        shifted = [w for w in caught if issubclass(w.category, fetch.ListingShiftedWarning)]
        assert len(shifted) == 1 and stats.duplicates >= 1
        assert str(stats.duplicates) in str(shifted[0].message)
        # every listed record arrives once; the one inserted in front of pages already read
        # cannot be seen by offset paging (it shows up in the next snapshot)
        original = by_type(sb.fleet)[inserted_type]
        assert original <= set(got) <= original | set(sb.stats.inserted_ids)


def test_wrong_key_is_an_authentication_error_without_the_key(caplog):
    secret = "sk-canary-0123456789"
    with run_sandbox(deployments=10, seed=1, api_key="the-right-key") as sb:
        caplog.set_level(logging.DEBUG)
        client = connect(sb.base_url, api_key=secret)
        with pytest.raises(AuthenticationError) as info:
            list(fetch.iter_deployments(client))
        assert "401" in str(info.value)
        for text in (str(info.value), repr(info.value), repr(client), caplog.text):
            assert secret not in text
        tenant = sb.fleet.deployments[0]["tenant_id"]
        ok = connect(sb.base_url, api_key="the-right-key", tenant_id=tenant)
        assert len(list(fetch.iter_deployments(ok))) == 10


def test_key_never_goes_over_plain_http_to_another_host():
    with pytest.raises(ConfigurationError, match="plain http"):
        connect("http://deployments.example.com", api_key="k")
    # explicitly allowed: the client is built (no request is sent here)
    connect("http://deployments.example.com", api_key="k", allow_insecure_http=True)
    connect("https://deployments.example.com", api_key="k")
    connect("http://localhost:8000", api_key="k")


def test_environment_configures_the_client(monkeypatch, sandbox):
    monkeypatch.setenv("DIMS_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("DIMS_API_KEY", "env-secret-value")
    client = connect()
    assert "env-secret-value" not in repr(client)
    assert len(fetch.list_providers(client)) == len(sandbox.fleet.providers)


def test_connection_refused_is_one_clear_line():
    from dims._errors import APIConnectionError

    client = connect("http://127.0.0.1:9", retry=RetryPolicy(retries=1, initial_backoff=0.01))
    with pytest.raises(APIConnectionError) as info:
        fetch.list_providers(client)
    message = str(info.value)
    assert "\n" not in message and "is the service up at http://127.0.0.1:9?" in message


def test_the_fleet_as_generated_models_sync_and_async(sandbox, client):
    import datetime as dt
    from uuid import UUID

    from dims_client.models import Deployment

    models = list(fetch.iter_deployment_models(client, page_size=40))
    assert [str(m.id) for m in models] == ids(sandbox.fleet.deployments)
    assert all(isinstance(m, Deployment) and isinstance(m.id, UUID) for m in models)
    assert any(isinstance(m.created_at, dt.datetime) for m in models)
    # secrets stay masked in the models' reprs (connect() protects them)
    assert "sk-sandbox-" not in "".join(repr(m) for m in models)

    async def collect():
        return [m async for m in fetch.aiter_deployment_models(client, page_size=40)]

    assert [m.id for m in asyncio.run(collect())] == [m.id for m in models]


def test_a_record_the_model_cannot_hold_is_a_typed_error_naming_it():
    fleet = generate_fleet(12, seed=5)
    del fleet.deployments[7]["id"]  # openapi.yaml requires it
    with run_sandbox(fleet=fleet) as sb:
        client = connect(sb.base_url)
        with pytest.raises(ResponseFormatError, match=r"page offset=5 record 2: not a deployment"):
            list(fetch.iter_deployment_models(client, page_size=5))
