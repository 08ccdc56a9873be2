"""The service as a source: every record of its listings, as pages, sync and async.

    from dims import connect, _fetch as fetch
    for page in fetch.fetch_deployments(connect()):  # the whole fleet, each id once
        ...

Inside, each module one job:
- `_listings`: the listings (pages, offsets, completeness, typed tags), the providers and
  the repositories, within one `RequestBudget`; its docstring has the paging rules;
- `_workspaces`: several workspaces fetched concurrently into one stream of pages
  (`WorkspaceFetch`), each workspace's outcome an `evidence.Workspace`; which copy of a
  deployment several workspaces list is kept is decided once, at publish (`dims._copies`).

What a fetch hands on beside its pages is typed in the foundation (`dims._evidence`), so
that the orchestrator can carry it to storage without storage knowing this package.
"""

from __future__ import annotations

# older paths of three warnings (their home is `dims._errors`, their door `analysis`)
from .._errors import CodeHostWarning as CodeHostWarning
from .._errors import ListingShiftedWarning as ListingShiftedWarning
from .._errors import PagingWarning as PagingWarning
from .._options import FetchLimits, filter_names
from ._listings import (
    DEFAULT_CONCURRENCY,
    DEFAULT_PAGE_SIZE,
    FetchStats,
    Repositories,
    RepositoryFetcher,
    RequestBudget,
    afetch_deployments,
    afetch_repositories,
    aget_provider,
    aiter_deployment_models,
    aiter_deployments,
    aiter_pages,
    alist_providers,
    alist_repositories,
    deployment_types,
    export_evidence,
    fetch_deployments,
    fetch_repositories,
    get_provider,
    iter_deployment_models,
    iter_deployments,
    iter_pages,
    list_providers,
    list_repositories,
    repositories_request,
)
from ._workspaces import WorkspaceFetch

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_PAGE_SIZE",
    "FetchLimits",
    "FetchStats",
    "Repositories",
    "RepositoryFetcher",
    "RequestBudget",
    "WorkspaceFetch",
    "afetch_deployments",
    "afetch_repositories",
    "aget_provider",
    "aiter_deployment_models",
    "aiter_deployments",
    "aiter_pages",
    "alist_providers",
    "alist_repositories",
    "deployment_types",
    "export_evidence",
    "fetch_deployments",
    "fetch_repositories",
    "filter_names",
    "get_provider",
    "iter_deployment_models",
    "iter_deployments",
    "iter_pages",
    "list_providers",
    "list_repositories",
    "repositories_request",
]
