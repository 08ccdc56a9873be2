"""The API's operations, one subpackage per tag (`api.deployments.list_deployments`).

Made by dims' custom template: the subpackages are imported here, so that
`import dims_client` is enough to reach every operation.
"""

from . import deployments, integrations, oauth_providers

__all__ = [
    "oauth_providers",
    "integrations",
    "deployments",
]
