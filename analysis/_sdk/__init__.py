"""The dims SDK: `Client` and `AsyncClient`, in the shape openai-python's users know.

    from dims import Client

    with Client(base_url=…, api_key=…, tenant_id=…) as client:  # or DIMS_* set
        for deployment in client.deployments.list(deployment_type="prod"):
            deployment.source_config.resource_spec.cpu  # typed: dims_client.models
        frames = client.deployments.list().to_pandas()  # every table, in memory
        client.providers.list(); client.providers.get("github-local-dev")
        client.repositories.list(integration_id)
        client.with_options(timeout=5, max_retries=1).providers.list()
        client.deployments.with_raw_response.list(page_size=5).headers

Built on the layers below, with nothing of its own on the wire: requests are the generated
client's (`generated_client`, from openapi.yaml), retries and deadlines the transport's
(`dims._connection`), paging the fetch layer's (`dims._fetch`), workspaces and the
one-copy rule the export's (`dims._copies`), tables the export's readers
(`dims._snapshot.fetch_tables`). Errors are `dims._errors`' typed ones.
"""

from __future__ import annotations

from ._async import AsyncClient, AsyncDeploymentListing
from ._connections import ClientOptions
from ._export import take_snapshot
from ._models import APIResponse
from ._sync import Client, DeploymentListing

__all__ = [
    "APIResponse",
    "AsyncClient",
    "AsyncDeploymentListing",
    "Client",
    "ClientOptions",
    "DeploymentListing",
    "take_snapshot",
]
