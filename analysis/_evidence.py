"""What a fetch hands on besides its pages: its evidence of completeness, and each
workspace's outcome.

The fetch side fills these (`dims._fetch`: one workspace or several); the orchestrator
(`dims._snapshot`) hands them to storage, which keeps the evidence in the snapshot's
manifest (`dims._storage.manifest`: these structures are that manifest's `fetch`
section, so their field order is the JSON's). They live here, below both, so that storage
never imports the fetch.

Every field of `FetchEvidence` may be absent (`UNSET`, left out of the JSON): a manifest
written by an earlier dims has fewer of them, and a failed workspace's section has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "FetchEvidence",
    "Integrations",
    "ListingStats",
    "TypeSources",
    "UnsetType",
    "Workspace",
]

#: A filter's value as a listing sent it (text, a boolean, or several texts).
Filter = str | bool | list[str]


class ListingStats(msgspec.Struct, kw_only=True):
    """What one listing asked for and got: the evidence that it was read whole (counted by
    the fetch as its pages come)."""

    #: "all" for the listing that defines the fleet, else the deployment_type it lists.
    listing: str
    #: "fleet" (its records are the export) or "tags" (it only tells records' types).
    role: str
    filters: dict[str, Filter]
    page_size: int
    #: Pages answered, the final empty one included.
    pages: int = 0
    records: int = 0
    #: Records whose id came earlier in this listing (it shifted while paged).
    duplicates: int = 0
    largest_page: int = 0
    #: Pages whose response offset did not advance, so dims counted on by itself.
    offset_fallbacks: int = 0
    ended_on_empty_page: bool = False


class TypeSources(msgspec.Struct):
    """Where each deployment's type came from: its record, a typed listing, or neither."""

    record: int
    typed_listing: int
    none: int


class Integrations(msgspec.Struct, kw_only=True):
    """The integrations the deployments named, and what listing their repositories gave."""

    listed: int
    #: Integrations the service answered 404 for.
    unknown_to_service: list[str]
    #: Integration ids that are not UUIDs: no request can name them.
    not_uuid: list[str]
    #: The code-host segment the requests named (absent from earlier dims' manifests).
    code_host: str | UnsetType = UNSET
    #: Every repositories request answered 404: more likely a wrong segment.
    all_not_found: bool | UnsetType = UNSET


class FetchEvidence(msgspec.Struct, kw_only=True):
    """What an export asked for and what came back: the manifest's `fetch` section (one
    workspace's, when it fetched several)."""

    filters: dict[str, Filter] | UnsetType = UNSET
    #: Deployments yielded: each id once, from the listing that defines the fleet.
    deployments: int | UnsetType = UNSET
    #: Records the fleet listing sent twice (it shifted while paged), dropped.
    duplicates_dropped: int | UnsetType = UNSET
    deployment_type_from: TypeSources | UnsetType = UNSET
    #: Ids a typed listing returned that the fleet listing did not (the fleet changed).
    in_typed_listing_only: int | UnsetType = UNSET
    #: Every listing ended on an empty page.
    complete: bool | UnsetType = UNSET
    listings: list[ListingStats] | UnsetType = UNSET
    oauth_providers: int | UnsetType = UNSET
    integrations: Integrations | UnsetType = UNSET

    @property
    def every_repository_missing(self) -> bool:
        """Whether every repositories request answered 404 (see `Integrations`)."""
        found = self.integrations
        return not isinstance(found, UnsetType) and found.all_not_found is True


@dataclass
class Workspace:
    """One workspace's part of an export: what it listed besides its pages, or its failure."""

    tenant_id: str
    providers: list[Any] = field(default_factory=list)
    repositories: Mapping[str, list[Any]] = field(default_factory=dict)
    #: The fetch's evidence of completeness for this workspace (the manifest's `fetch`).
    evidence: FetchEvidence = field(default_factory=FetchEvidence)
    #: Why it failed (one line), or None. A failed workspace publishes nothing.
    error: str | None = None

    @property
    def deployments(self) -> int:
        """Deployments its fetch yielded (0 when unknown)."""
        found = self.evidence.deployments
        return 0 if isinstance(found, UnsetType) else found
