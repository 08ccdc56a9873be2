"""`dims.AsyncClient` against the live sandbox: the same resources as `Client`, awaited
(issue 29). Each test runs its own event loop, and makes its client inside it."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

import dims
from dims._errors import ConfigurationError
from dims.sandbox import run_sandbox
from dims_client.models import Deployment, DeploymentPage, OAuthProvider, Repository


def ids(records):
    return [r["id"] for r in records]


def test_async_list_follows_every_page_and_gives_models(sandbox):
    async def main():
        async with dims.AsyncClient(base_url=sandbox.base_url) as client:
            listing = client.deployments.list(page_size=9, concurrency=4)
            models = [d async for d in listing]
            pages = [p async for p in listing.pages()]
            return models, pages

    models, pages = asyncio.run(main())
    assert all(isinstance(m, Deployment) for m in models)
    assert [str(m.id) for m in models] == ids(sandbox.fleet.deployments)
    assert len(pages) == -(-len(sandbox.fleet.deployments) // 9)
    assert [r["id"] for p in pages for r in p.records] == ids(sandbox.fleet.deployments)


def test_async_filters_and_the_sync_twin_agree(sandbox):
    with dims.Client(base_url=sandbox.base_url) as client:
        sync = [m.id for m in client.deployments.list(deployment_type="dev", page_size=20)]

    async def main():
        async with dims.AsyncClient(base_url=sandbox.base_url) as client:
            return [m.id async for m in client.deployments.list(deployment_type="dev")]

    assert asyncio.run(main()) == sync and sync
    fleet = sandbox.fleet
    assert {str(i) for i in sync} == {
        r["id"] for r in fleet.deployments if fleet.deployment_types[r["id"]] == "dev"
    }


def test_async_published_names_are_read_into_the_models():
    with run_sandbox(deployments=20, seed=4, names="original") as sb:
        spelled = {
            r["id"]: r["source_config"]["resource_spec"]["redis_memory_mb"]
            for r in sb.fleet.deployments
            if (r["source_config"]["resource_spec"] or {}).get("redis_memory_mb") is not None
        }

        async def main():
            async with dims.AsyncClient(base_url=sb.base_url, code_host=sb.code_host) as c:
                return [d async for d in c.deployments.list(page_size=6)]

        models = asyncio.run(main())
    read = {str(m.id): m.source_config.resource_spec.cache_memory_mb for m in models}
    assert spelled and all(read[i] == value for i, value in spelled.items())


def test_async_to_pandas_equals_the_sync_one_and_the_export(tmp_path):
    with run_sandbox(deployments=60, seed=6) as sb:
        with dims.Client(base_url=sb.base_url) as client:
            result = client.take_snapshot(tmp_path / "out")

        async def main():
            async with dims.AsyncClient(base_url=sb.base_url) as client:
                return await client.deployments.list().to_pandas()

        frames = asyncio.run(main())
    from dims._storage import read_table

    for name, frame in frames.items():
        written = read_table(result.out_dir, name).drop(columns=["snapshot_at", "snapshot_date"])
        pd.testing.assert_frame_equal(frame.drop(columns=["snapshot_at"]), written, obj=name)


def test_async_providers_repositories_and_raw_responses(sandbox):
    slug = sandbox.fleet.providers[0]["provider_id"]
    integration_id = next(iter(sandbox.fleet.repositories))

    async def main():
        async with dims.AsyncClient(base_url=sandbox.base_url) as client:
            raw = await client.deployments.with_raw_response.list(page_size=4)
            return (
                await client.providers.list(),
                await client.providers.get(slug),
                await client.repositories.list(integration_id),
                raw,
                await client.providers.with_raw_response.get(slug),
                await client.repositories.with_raw_response.list(integration_id),
            )

    providers, provider, repos, raw, raw_provider, raw_repos = asyncio.run(main())
    assert [p.id for p in providers] == [p["id"] for p in sandbox.fleet.providers]
    assert isinstance(provider, OAuthProvider) and provider.provider_id == slug
    assert all(isinstance(r, Repository) for r in repos) and repos
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("application/json")
    page = raw.parse()
    assert isinstance(page, DeploymentPage) and len(page.resources) == 4 and page.offset == 4
    assert raw_provider.parse().provider_id == slug
    assert [r.id for r in raw_repos.parse()] == [r.id for r in repos]


def test_async_per_call_timeout_and_with_options():
    with run_sandbox(deployments=5, seed=1, latency_ms=1500) as sb:

        async def main():
            async with dims.AsyncClient(base_url=sb.base_url, max_retries=0) as client:
                with pytest.raises(dims.APITimeoutError):
                    await client.providers.list(timeout=0.2)
                with pytest.raises(dims.APITimeoutError):
                    [d async for d in client.deployments.list(timeout=0.2)]
                with pytest.raises(dims.APITimeoutError):
                    await client.with_options(timeout=0.2).repositories.list(
                        next(iter(sb.fleet.repositories))
                    )
                return await client.providers.list()

        assert len(asyncio.run(main())) == len(sb.fleet.providers)


def test_async_refuses_bad_input_before_sending():
    with run_sandbox(deployments=5, seed=1) as sandbox:  # its own: its requests are counted

        async def main():
            async with dims.AsyncClient(base_url=sandbox.base_url) as client:
                with pytest.raises(ConfigurationError, match="unknown deployment filter"):
                    client.deployments.list(colour="blue")
                with pytest.raises(ConfigurationError, match="is not a UUID"):
                    await client.repositories.with_raw_response.list("nope")

        asyncio.run(main())
        assert sandbox.stats.total_requests == 0
