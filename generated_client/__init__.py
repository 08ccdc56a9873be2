"""A client library for the Deployment and Integration Management Service.

Generated from dims' openapi.yaml. Made by dims' custom template: `api` and `models` are
imported here, so `import generated_client` reaches every operation and model.
"""

from . import api, models
from .client import AuthenticatedClient, Client

__all__ = (
    "AuthenticatedClient",
    "Client",
    "api",
    "models",
)
