"""dims analysis layer: connect → fetch → tables → export → reports.

The public entry points are re-exported here and imported when first used, so that
`import analysis.cli` (and `dims --help`) loads only what the command at hand needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import exports

if TYPE_CHECKING:
    from . import fetch
    from .connection import Settings, connect
    from .connection.transport import RetryPolicy
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

#: public name -> the module that holds it
_HOMES = {
    "APIError": ".errors",
    "AuthenticationError": ".errors",
    "ConfigurationError": ".errors",
    "DimsError": ".errors",
    "NotFoundError": ".errors",
    "PaginationError": ".errors",
    "RateLimitError": ".errors",
    "ResponseFormatError": ".errors",
    "ServerError": ".errors",
    "TransportError": ".errors",
    "ValidationError": ".errors",
    "Page": ".pages",
    "RetryPolicy": ".connection.transport",
    "Settings": ".connection",
    "connect": ".connection",
    "fetch": ".fetch",
}

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


__getattr__, __dir__ = exports(__name__, globals(), _HOMES)
