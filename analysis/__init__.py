"""dims analysis layer: connect → fetch → tables → export → reports.

The public entry points are re-exported here; each module holds one step of the flow.
"""

from . import fetch
from .connect import Settings, connect
from .errors import (
    APIError,
    AuthenticationError,
    ConfigurationError,
    DimsError,
    NotFoundError,
    PaginationError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    TransportError,
    ValidationError,
)
from .pages import Page
from .secrets import protect_generated_models
from .transport import RetryPolicy

protect_generated_models()

__all__ = [
    "APIError",
    "AuthenticationError",
    "ConfigurationError",
    "DimsError",
    "NotFoundError",
    "Page",
    "PaginationError",
    "RateLimitError",
    "ResponseFormatError",
    "RetryPolicy",
    "ServerError",
    "Settings",
    "TransportError",
    "ValidationError",
    "connect",
    "fetch",
]
