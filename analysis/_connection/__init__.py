"""The connection layer: settings, the key attached safely, and the transport under it.

`connect()` gives the generated client with a timeout, bounded retries and response
limits (`_transport`), and the key sent only where it is safe to (`_settings`). Everything
above it (fetch, the CLI, the SDK's `dims.Client`, which makes one such client per
workspace over one transport) talks to the service through the client it returns, and
reads the JSON the transport parsed through `with_decoder` and `decoded_json`. It stays
public: the generated operations (`list_deployments.sync(client=…)`) take its client.
"""

from __future__ import annotations

from ._settings import (
    DEFAULT_TIMEOUT,
    ApiKeyAuth,
    DimsClient,
    Given,
    Settings,
    code_host_of,
    connect,
    is_loopback,
    no_base_url,
    resolve_settings,
    retry_transport,
    tenant_ids,
)
from ._transport import (
    MIB,
    Decoded,
    JsonDecoder,
    ResponseLimits,
    RetryPolicy,
    RetryStats,
    RetryTransport,
    decoded_json,
    with_decoder,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MIB",
    "ApiKeyAuth",
    "Decoded",
    "DimsClient",
    "Given",
    "JsonDecoder",
    "ResponseLimits",
    "RetryPolicy",
    "RetryStats",
    "RetryTransport",
    "Settings",
    "code_host_of",
    "connect",
    "decoded_json",
    "is_loopback",
    "no_base_url",
    "resolve_settings",
    "retry_transport",
    "tenant_ids",
    "with_decoder",
]
