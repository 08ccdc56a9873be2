"""The manifest of a snapshot: `DIR/_manifests/<day>.json`, typed and versioned.

A day's manifest is written last and says that the day is whole; readers trust only the
files it names (on object storage), and users and tools read it as evidence: what was
asked, what came back, what was replaced. It is a contract, so it has a type (`Manifest`,
whose field order is the JSON's) and a JSON Schema generated from that type
(`manifest.schema.json` beside this module; `python -m dims._storage.manifest` writes
it again, and a test fails when it differs).

Reading validates (`decode`): a file that is not such a manifest is one line naming it
(`ManifestError`). Manifests of earlier dims versions (all `manifest_version` 1) lack keys
that came later (`original_name_conflicts`, `unreadable_quantities`, `unreadable_values`,
most of `fetch`, the workspaces' sections): those are optional, and what is absent stays
absent when a section is carried into a later manifest. Unknown keys (a newer dims) are ignored.

The JSON is written as `json.dumps(…, indent=2)` always wrote it (`encode`), byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from dims._errors import ManifestError
from dims._evidence import UNSET, FetchEvidence, UnsetType

__all__ = [
    "MANIFEST_VERSION",
    "SCHEMA_FILE",
    "DayWorkspace",
    "Duplicates",
    "FetchSection",
    "Identity",
    "Manifest",
    "Replaced",
    "WorkspaceFetch",
    "decode",
    "encode",
    "schema",
]

#: Bumped when a change would make an earlier reader misread a manifest.
MANIFEST_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("manifest.schema.json")

Filter = str | bool | list[str]


class Duplicates(msgspec.Struct):
    """A workspace's copies of deployments dropped for another copy, by the rule that
    decided (`dims._copies`; "day": the day's row of the workspace it names was kept)."""

    dropped: int
    decided_by: dict[str, int]


class WorkspaceFetch(FetchEvidence, kw_only=True):
    """One workspace's evidence in `fetch.workspaces`: its fetch's (`FetchEvidence`), then
    what the export decided; a failed workspace has only its `error`."""

    #: Deployments it listed whose own tenant_id names another workspace (kept under theirs).
    tenant_id_elsewhere: int | UnsetType = UNSET
    cross_workspace_duplicates: Duplicates | UnsetType = UNSET
    error: str | UnsetType = UNSET


class FetchSection(FetchEvidence, kw_only=True):
    """The manifest's `fetch`: one export's evidence, or, for an export of workspaces,
    `complete` and one `WorkspaceFetch` per workspace; empty for a dump."""

    workspaces: dict[str, WorkspaceFetch] | UnsetType = UNSET

    @property
    def partial(self) -> bool:
        """Whether a workspace of this export failed (published under allow_partial)."""
        found = self.workspaces
        if isinstance(found, UnsetType):
            return False
        return any(not isinstance(section.error, UnsetType) for section in found.values())


class DayWorkspace(msgspec.Struct, kw_only=True):
    """One workspace of the day in `workspaces`: exported by this export, carried from an
    earlier one (its section as that export wrote it), or failed (with the section of its
    rows kept from earlier, or null)."""

    status: Literal["exported", "carried", "failed"]
    error: str | UnsetType = UNSET
    export_id: str | UnsetType = UNSET
    snapshot_at: str | UnsetType = UNSET
    deployments: int | UnsetType = UNSET
    complete: bool | UnsetType = UNSET
    fetch: WorkspaceFetch | UnsetType = UNSET
    kept: DayWorkspace | UnsetType | None = UNSET


class Replaced(msgspec.Struct, kw_only=True):
    """The version of the day this snapshot replaced, and where it is kept."""

    snapshot_at: str | None
    export_id: str | None
    deployments: int | None
    tables: list[str]
    #: Relative to the dataset root: `_replaced/<day>-<when>-<id>`.
    kept_in: str


class Identity(msgspec.Struct, kw_only=True):
    """Which snapshot this is, of which dataset: known before anything is written."""

    manifest_version: int
    snapshot_date: str
    snapshot_at: str
    #: Also in every file's metadata (`dims.export_id`).
    export_id: str
    schema_version: int
    #: The dataset root relative to `--out`: "." or "filtered/<filters>".
    dataset: str
    filters: dict[str, Filter]


class Manifest(Identity, kw_only=True):
    """A snapshot's manifest: its identity, what it holds, what it replaced, the evidence."""

    records: int
    rejected: int
    original_name_conflicts: int = 0
    unreadable_quantities: int = 0
    #: resource_spec figures no cluster runs (negative, above 2^32): null in their columns,
    #: kept in deployments.unreadable_values_json
    unreadable_values: int = 0
    rows: dict[str, int]
    #: Each table's file, relative to the dataset root.
    files: dict[str, str]
    replaced: Replaced | None
    written_at: str
    fetch: FetchSection
    #: Every workspace of the day (an export of workspaces only).
    workspaces: dict[str, DayWorkspace] | UnsetType = UNSET

    @property
    def deployments(self) -> int | None:
        """Deployments rows of the snapshot (None when the manifest does not say)."""
        return self.rows.get("deployments")

    def failed_workspaces(self) -> list[str]:
        """The workspaces of the day that failed, by name."""
        day = self.workspaces
        if isinstance(day, UnsetType):
            return []
        return sorted(tenant for tenant, section in day.items() if section.status == "failed")

    def to_dict(self) -> dict[str, Any]:
        """The manifest as JSON values, in the JSON's order (`dims export --json`)."""
        found: dict[str, Any] = msgspec.to_builtins(self)
        return found


_DECODER = msgspec.json.Decoder(Manifest)


def encode(manifest: Manifest | Mapping[str, Any]) -> bytes:
    """The file's bytes: two-space indented JSON and a newline, non-ASCII escaped."""
    found = manifest.to_dict() if isinstance(manifest, Manifest) else manifest
    return (json.dumps(found, indent=2) + "\n").encode()


def decode(data: bytes | None, where: object) -> Manifest | None:
    """The manifest in `data` (None when there is no file), validated; `where` names the
    file in the error when it is not one."""
    if data is None:
        return None
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as exc:  # ValidationError included
        raise ManifestError(
            f"{where} is not a dims manifest ({exc}); move it aside, or export that day "
            "again to replace it"
        ) from None


def schema() -> dict[str, Any]:
    """The manifest's JSON Schema, generated from the types above (their docstrings are
    the descriptions; properties in the JSON's order)."""
    found: dict[str, Any] = msgspec.json.schema(Manifest)
    for definition in found["$defs"].values():
        if "description" in definition:
            definition["description"] = " ".join(definition["description"].split())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **found}


def schema_text() -> str:
    """The schema as `manifest.schema.json` holds it."""
    return json.dumps(schema(), indent=2) + "\n"


if __name__ == "__main__":  # python -m dims._storage.manifest: the schema file again
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
