"""The connection layer: settings, the key attached safely, and the transport under it.

`connect()` gives the generated client with a timeout, bounded retries and response
limits (`transport`), and the key sent only where it is safe to (`settings`). Everything
above it (fetch, the CLI) talks to the service through the client it returns.
"""

from __future__ import annotations

from .settings import (
    ApiKeyAuth,
    DimsClient,
    Settings,
    code_host_of,
    connect,
    is_loopback,
    retry_transport,
    tenant_ids,
)
from .transport import MIB, ResponseLimits, RetryPolicy, RetryStats, RetryTransport

__all__ = [
    "MIB",
    "ApiKeyAuth",
    "DimsClient",
    "ResponseLimits",
    "RetryPolicy",
    "RetryStats",
    "RetryTransport",
    "Settings",
    "code_host_of",
    "connect",
    "is_loopback",
    "retry_transport",
    "tenant_ids",
]
