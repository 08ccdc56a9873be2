"""dims analysis layer: the sources (fetch, dumps) → tables → storage → reports.

`Client` and `AsyncClient` are the SDK: resources (`client.deployments.list()`, …) that
yield the generated client's typed models, in the shape openai-python's users know. Under
them, and still public, is the layer they are built on: `connect()` (the generated client,
configured), `fetch` (paging, concurrency, workspaces, raw records) and
`dims._snapshot.take_snapshot` (an export); reach for it to stream raw records or to
tune what the SDK chooses for you.

The public entry points are re-exported here and imported when first used, so that
`import dims._cli` (and `dims --help`) loads only what the command at hand needs.
Every error and warning dims gives on purpose is among them (`dims._errors` is their
home; tests/spec/test_structure.py checks that none is left out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _lazy

if TYPE_CHECKING:
    from . import _fetch as fetch
    from ._connection import RetryPolicy, Settings, connect
    from ._errors import (
        APIConnectionError,
        APIError,
        APIStatusError,
        APITimeoutError,
        AuthenticationError,
        CodeHostWarning,
        ConfigurationError,
        DatasetError,
        DeadlineExceededError,
        DeploymentLookupError,
        DimsError,
        DimsWarning,
        DumpError,
        DuplicateDeploymentsWarning,
        ExportError,
        ExportWaitWarning,
        GroupNameWarning,
        LeaseLost,
        ListingShiftedWarning,
        ManifestError,
        NameCollisionWarning,
        NotCompiledWarning,
        NotFoundError,
        ObjectStoreError,
        OriginalNameConflictWarning,
        PaginationError,
        PagingWarning,
        PermissionDeniedError,
        PriceSheetError,
        RateLimitError,
        RejectedRecordError,
        ReportError,
        ResponseFormatError,
        ResponseTooLargeError,
        RulesError,
        SeriesLimitWarning,
        ServerError,
        TenantMismatchWarning,
        TransportError,
        UnknownGroupWarning,
        UnknownPriceTypeWarning,
        UnreadableQuantityWarning,
        ValidationError,
        WorkerLost,
        WorkspacesFailed,
    )
    from ._pages import Page
    from ._progress import Progress
    from ._sdk import AsyncClient, Client

#: public name -> the module that holds it
_HOMES = {
    "APIConnectionError": ".errors",
    "APIError": ".errors",
    "APIStatusError": ".errors",
    "APITimeoutError": ".errors",
    "AuthenticationError": ".errors",
    "CodeHostWarning": ".errors",
    "ConfigurationError": ".errors",
    "DatasetError": ".errors",
    "DeadlineExceededError": ".errors",
    "DeploymentLookupError": ".errors",
    "DimsError": ".errors",
    "DimsWarning": ".errors",
    "DumpError": ".errors",
    "DuplicateDeploymentsWarning": ".errors",
    "ExportError": ".errors",
    "ExportWaitWarning": ".errors",
    "GroupNameWarning": ".errors",
    "LeaseLost": ".errors",
    "ListingShiftedWarning": ".errors",
    "ManifestError": ".errors",
    "NameCollisionWarning": ".errors",
    "NotCompiledWarning": ".errors",
    "NotFoundError": ".errors",
    "ObjectStoreError": ".errors",
    "OriginalNameConflictWarning": ".errors",
    "PaginationError": ".errors",
    "PagingWarning": ".errors",
    "PermissionDeniedError": ".errors",
    "PriceSheetError": ".errors",
    "RateLimitError": ".errors",
    "RejectedRecordError": ".errors",
    "ReportError": ".errors",
    "ResponseFormatError": ".errors",
    "ResponseTooLargeError": ".errors",
    "RulesError": ".errors",
    "SeriesLimitWarning": ".errors",
    "ServerError": ".errors",
    "TenantMismatchWarning": ".errors",
    "TransportError": ".errors",
    "UnknownGroupWarning": ".errors",
    "UnknownPriceTypeWarning": ".errors",
    "UnreadableQuantityWarning": ".errors",
    "ValidationError": ".errors",
    "WorkerLost": ".errors",
    "WorkspacesFailed": ".errors",
    "Page": ".pages",
    "Progress": "._progress",
    "RetryPolicy": ".connection",
    "Settings": ".connection",
    "connect": ".connection",
    "fetch": ".fetch",
    "AsyncClient": ".sdk",
    "Client": ".sdk",
}

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "CodeHostWarning",
    "ConfigurationError",
    "DatasetError",
    "DeadlineExceededError",
    "DeploymentLookupError",
    "DimsError",
    "DimsWarning",
    "DumpError",
    "DuplicateDeploymentsWarning",
    "ExportError",
    "ExportWaitWarning",
    "GroupNameWarning",
    "LeaseLost",
    "ListingShiftedWarning",
    "ManifestError",
    "NameCollisionWarning",
    "NotCompiledWarning",
    "NotFoundError",
    "ObjectStoreError",
    "OriginalNameConflictWarning",
    "Page",
    "PaginationError",
    "PagingWarning",
    "PermissionDeniedError",
    "PriceSheetError",
    "Progress",
    "RateLimitError",
    "RejectedRecordError",
    "ReportError",
    "ResponseFormatError",
    "ResponseTooLargeError",
    "RetryPolicy",
    "RulesError",
    "SeriesLimitWarning",
    "ServerError",
    "Settings",
    "TenantMismatchWarning",
    "TransportError",
    "UnknownGroupWarning",
    "UnknownPriceTypeWarning",
    "UnreadableQuantityWarning",
    "ValidationError",
    "WorkerLost",
    "WorkspacesFailed",
    "connect",
    "fetch",
]


__getattr__, __dir__ = _lazy.exports(__name__, globals(), _HOMES)
