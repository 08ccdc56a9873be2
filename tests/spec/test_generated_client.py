"""The committed generated_client/ is what openapi.yaml generates, and every operation works.

Regeneration runs the same script as `make generate` into a temporary folder; any byte of
difference fails, so the committed client can never drift from the spec.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import filecmp
import subprocess
import uuid
from pathlib import Path

import pytest
from repo import ROOT

from dims._connection import connect
from dims._errors import NotFoundError, ValidationError
from dims_client.api.deployments import list_deployments
from dims_client.api.integrations import list_integration_repositories
from dims_client.api.oauth_providers import get_oauth_provider, list_oauth_providers
from dims_client.models import (
    DeploymentPage,
    DeploymentType,
    ErrorDetail,
    OAuthProvider,
    Repository,
    ValidationErrorBody,
)
from dims_client.types import Unset


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_committed_client_is_exactly_what_the_spec_generates(tmp_path):
    out = tmp_path / "generated_client"
    subprocess.run([ROOT / "tools" / "generate_client.sh", out], check=True, cwd=tmp_path)
    committed, fresh = tree(ROOT / "generated_client"), tree(out)
    assert sorted(committed) == sorted(fresh), "files differ: run `make generate`"
    changed = [name for name in committed if committed[name] != fresh[name]]
    assert not changed, f"run `make generate`: these differ from the spec's output: {changed}"
    assert filecmp.dircmp(ROOT / "generated_client", out).diff_files == []


# `sandbox` and `client` (tests/conftest.py): the standard fleet and a dims client of it.


def test_every_operation_sync(sandbox, client):
    providers = list_oauth_providers.sync(client=client)
    assert providers and all(isinstance(p, OAuthProvider) for p in providers)
    first = providers[0]
    assert isinstance(first.created_at, dt.datetime) and first.created_at.tzinfo is not None
    one = get_oauth_provider.sync(first.provider_id, client=client)
    assert isinstance(one, OAuthProvider) and one.id == first.id
    with pytest.raises(NotFoundError, match="HTTP 404"):  # dims' typed error, one line
        get_oauth_provider.sync("no-such-provider", client=client)
    bodies = connect(sandbox.base_url, raise_errors=False)
    missing = get_oauth_provider.sync("no-such-provider", client=bodies)
    assert isinstance(missing, ErrorDetail) and "not found" in missing.detail.lower()

    integration_id = next(iter(sandbox.fleet.repositories))
    repos = list_integration_repositories.sync(
        client.code_host, uuid.UUID(integration_id), client=client
    )
    assert repos and all(isinstance(r, Repository) for r in repos)
    assert all(isinstance(r.host_integration_id, uuid.UUID) for r in repos)
    assert {r.id for r in repos} == {r["id"] for r in sandbox.fleet.repositories[integration_id]}

    page = list_deployments.sync(client=client, limit=5, deployment_type=DeploymentType.PROD)
    assert isinstance(page, DeploymentPage)
    assert len(page.resources) == 5 and page.offset == 5
    prod_ids = {i for i, t in sandbox.fleet.deployment_types.items() if t == "prod"}
    assert {str(d.id) for d in page.resources} <= prod_ids

    with pytest.raises(ValidationError, match="limit"):
        list_deployments.sync(client=client, limit=0)
    invalid = list_deployments.sync(client=bodies, limit=0)
    assert isinstance(invalid, ValidationErrorBody)
    assert invalid.detail[0].loc[-1] == "limit"


def test_every_operation_async(sandbox, client):
    async def run():
        providers = await list_oauth_providers.asyncio(client=client)
        one = await get_oauth_provider.asyncio(providers[-1].provider_id, client=client)
        integration_id = uuid.UUID(next(iter(sandbox.fleet.repositories)))
        repos = await list_integration_repositories.asyncio(
            client.code_host, integration_id, client=client
        )
        page = await list_deployments.asyncio_detailed(client=client, limit=3, offset=2)
        return providers, one, repos, page

    providers, one, repos, page = asyncio.run(run())
    assert one.provider_id == providers[-1].provider_id
    assert all(isinstance(r, Repository) for r in repos)
    assert page.status_code == 200 and page.parsed.offset == 5
    tenant = sandbox.fleet.deployments[0]["tenant_id"]  # the sandbox scopes by X-Tenant-Id
    in_workspace = [d["id"] for d in sandbox.fleet.deployments if d["tenant_id"] == tenant]
    assert [str(d.id) for d in page.parsed.resources] == in_workspace[2:5]


def test_optional_defaults_are_unset_in_models_and_applied_by_the_tables(sandbox, client):
    """The generator leaves an omitted optional key UNSET (not its schema default); the
    analysis layer's providers table applies the spec's defaults instead."""
    from dims._tables import flatten_providers

    raw = sandbox.fleet.providers
    omitted = [p for p in raw if "token_endpoint_auth_method" not in p]
    assert omitted, "the sandbox fleet should omit the optional provider fields sometimes"
    models = {p.id: p for p in list_oauth_providers.sync(client=client)}
    assert isinstance(models[omitted[0]["id"]].token_endpoint_auth_method, Unset)
    table = flatten_providers(raw, snapshot_at=dt.datetime.now(dt.UTC)).to_pylist()
    row = next(r for r in table if r["id"] == omitted[0]["id"])
    assert row["token_endpoint_auth_method"] == "client_secret_post"
    assert row["is_dynamic_client"] is False
