"""What an export is asked to do, checked once where it comes in: `ExportOptions`, `Filters`.

The command line, the notebooks and the tests hand an export its options and its deployment
filters in different forms (parsed options, keyword arguments, a mapping). Each is turned
into these frozen values at the edge (`dims._snapshot.take_snapshot`), so the layers
below read one form and never normalise again: the fetch sends `Filters` as the query,
the manifest and the files' metadata keep them sorted, and the dataset's root is named
after them.

No third-party import here: `dims export --from-json` and `dims --help` load this module.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypedDict

from . import _defaults as defaults
from . import _spec as spec
from ._errors import ConfigurationError

__all__ = [
    "DeploymentFilters",
    "DeploymentTypeName",
    "ExportOptions",
    "FetchLimits",
    "FilterText",
    "FilterValue",
    "Filters",
    "filter_choices",
    "filter_names",
]

#: A filter's value as the query sends it and the manifest keeps it.
FilterValue = str | bool | list[str]

#: A text filter's value: one text, or several (the query repeats the parameter).
FilterText = str | Sequence[str]

#: The deployment types openapi.yaml's `DeploymentType` enumerates, for type checkers (so
#: `deployment_type="prd"` is an error before it runs); `Filters.of` checks the values
#: against the spec itself, and tests/fetch/test_filters.py holds the two equal.
DeploymentTypeName = Literal["dev_free", "dev", "prod"]


class DeploymentFilters(TypedDict, total=False):
    """The spec's list-deployments filters, as keyword arguments of
    `client.deployments.list(**filters)` (and its raw, async and `take_snapshot` kin).

    Each is checked where it is given, as `dims export`'s options are (`Filters.of`): an
    unknown name, a value of the wrong kind or a deployment type the spec does not list is a
    `ConfigurationError` naming the filter and what it takes, before anything is sent. None
    is no filter. tests/fetch/test_filters.py holds the keys and kinds equal to openapi.yaml's.
    """

    name_contains: FilterText | None
    """Deployments whose name contains this text."""
    status: FilterText | None
    """Deployments of this status (the spec lists no values; the service's: READY, …)."""
    remote_reconciled: bool | None
    """Deployments that are (True) or are not (False) remote-reconciled."""
    tag_value_ids: FilterText | None
    """Comma-separated tag value identifiers."""
    image_version: FilterText | None
    """Deployments on this image version."""
    deployment_type: DeploymentTypeName | None
    """One of the spec's deployment types: dev_free, dev, prod."""
    deployment_ids: FilterText | None
    """Comma-separated deployment identifiers."""


#: How long a second export into the same dataset waits for the first (seconds).
LOCK_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class FetchLimits:
    """Ceilings per listing, far above any real fleet.

    A service that keeps answering with new records (a paging bug, an endless listing)
    ends in a PaginationError at one of these instead of an endless fetch; they also bound
    the memory the ids seen take.
    """

    max_pages: int = 100_000
    max_records: int = 2_000_000


@dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """How one export fetches, reads and writes (every field has the CLI's default).

    Filters are not options: they choose what the snapshot is of (`Filters`).
    """

    #: Requests in flight in all: listings and repositories, every workspace together.
    concurrency: int = defaults.CONCURRENCY
    #: Records asked for per page (the service may cap it lower).
    page_size: int = defaults.PAGE_SIZE
    limits: FetchLimits | None = None
    #: Keep env values (`deployment_container_env.value`); off, only their names.
    include_env_values: bool = False
    #: Stop at the first record that cannot be read, instead of keeping it aside.
    strict: bool = False
    #: Processes reading records beside this one (None: one per other core, at most 3).
    workers: int | None = None
    #: The day the snapshot is of (default: the day of `snapshot_at`, in UTC).
    snapshot_date: dt.date | None = None
    #: When the snapshot was taken (default: now); every row carries it.
    snapshot_at: dt.datetime | None = None
    #: Publish a snapshot of 0 deployments where the dataset's latest had some.
    allow_empty: bool = False
    #: Publish the workspaces that worked when others failed (exit 3 from the CLI).
    allow_partial: bool = False
    #: Deployments per Parquet row group.
    row_group_records: int = 10_000
    #: How long to wait for another export writing to the same `--out` (seconds).
    lock_timeout: float = LOCK_TIMEOUT_S

    @classmethod
    def given(
        cls, options: ExportOptions | None, keywords: Mapping[str, Any]
    ) -> tuple[ExportOptions, dict[str, Any]]:
        """`options` with the keyword arguments that name options (they win), and the other
        keywords (filters): `take_snapshot(client, out, strict=True, status="READY")`."""
        names = {field.name for field in dataclasses.fields(cls)}
        chosen = {name: value for name, value in keywords.items() if name in names}
        rest = {name: value for name, value in keywords.items() if name not in names}
        return dataclasses.replace(options or cls(), **chosen), rest


def filter_names() -> tuple[str, ...]:
    """The list-deployments filters of the spec (every query parameter but limit/offset)."""
    return tuple(_parameters())


def filter_choices(name: str) -> tuple[str, ...] | None:
    """The values the spec allows filter `name` (its enum: deployment_type's dev_free, dev,
    prod), None when it takes any; the CLI's `choices` and `Filters.of` both ask here."""
    _, ref = spec.kind_of(_parameters()[name]["schema"])
    if ref is None:
        return None
    return tuple(spec.document()["components"]["schemas"][ref]["enum"])


def _parameters() -> dict[str, dict[str, Any]]:
    params = spec.document()["paths"]["/v2/deployments"]["get"]["parameters"]
    return {p["name"]: p for p in params if p["name"] not in ("limit", "offset")}


class Filters(Mapping[str, FilterValue]):
    """The deployment filters of one export: names the spec has, values of their kinds.

    Built once (`Filters.of`) from any mapping: a None value (or an empty list) is no
    filter, an enum member is its value, a tuple is a list; an unknown name or a value of
    the wrong kind is a ConfigurationError. Iterating gives the names in the order given
    (the fetch's evidence keeps it); `sorted()` is the order the manifest and the dataset's
    folder name use. Empty: the whole fleet.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, FilterValue] | None = None) -> None:
        self._values: dict[str, FilterValue] = dict(values or {})

    @classmethod
    def of(cls, given: Mapping[str, Any] | None) -> Filters:
        """`given` checked and normalised (a Filters already is: returned as it is)."""
        if isinstance(given, Filters):
            return given
        chosen = dict(given or {})
        known = _parameters()
        unknown = set(chosen) - set(known)
        if unknown:
            raise ConfigurationError(
                f"unknown deployment filter(s) {sorted(unknown)}; the spec names {list(known)}"
            )
        values = {name: _value(name, value, known[name]) for name, value in chosen.items()}
        return cls({name: value for name, value in values.items() if value is not None})

    def sorted(self) -> dict[str, FilterValue]:
        """By name: as the manifest and the files' metadata keep them."""
        return dict(sorted(self._values.items()))

    def query(self) -> dict[str, Any]:
        """As the list-deployments request takes them (keyword arguments)."""
        return dict(self._values)

    def __getitem__(self, name: str) -> FilterValue:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Filters({self._values!r})"


def _value(name: str, value: Any, param: dict[str, Any]) -> FilterValue | None:
    """One filter's value in its normal form, or None for no filter."""
    value = getattr(value, "value", value)  # an enum member (DeploymentType.PROD)
    if value is None:
        return None
    kind, _ = spec.kind_of(param["schema"])
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        return _refused(name, value, "true or false")
    if isinstance(value, str):
        return _chosen(name, value)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        # several values: the query repeats the parameter
        return [_chosen(name, v) for v in value] or None
    return _refused(name, value, "text (or a list of texts)")


def _chosen(name: str, value: str) -> str:
    """`value`, when filter `name` takes it (any text, or one of the spec's enum)."""
    choices = filter_choices(name)
    if choices is not None and value not in choices:
        raise ConfigurationError(
            f"deployment filter {name}: invalid choice: {value[:80]!r} "
            f"(choose from {', '.join(map(repr, choices))})"
        )
    return value


def _refused(name: str, value: Any, wanted: str) -> NoReturn:
    raise ConfigurationError(
        f"deployment filter {name} must be {wanted}, got {type(value).__name__} {str(value)[:80]!r}"
    )
