"""The Flattener: pages of records in, Arrow tables of every table out, batch by batch."""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from dims import _rawjson as rawjson
from dims._copies import LISTED_BY
from dims._errors import OriginalNameConflictWarning as OriginalNameConflictWarning
from dims._errors import RejectedRecordError as RejectedRecordError
from dims._errors import UnreadableQuantityWarning as UnreadableQuantityWarning
from dims._gcpause import paused_gc
from dims._pages import Page

from . import _gathered as gathered
from ._arrays import arrays_from_rows, column
from ._careful import Columns
from ._figures import UNREADABLE_VALUES_COLUMN, unreadable_figures
from ._gathered import GATHERED, GatheredReader, row_fields
from ._lanes import COMPILED, PYTHON, LaneRuns, in_record_order
from ._layout import (
    TABLE_NAMES,
    TENANT_COLUMN,
    Layout,
    components_from,
    defaults,
    unreadable_quantities,
)
from ._quantities import LARGEST_FIGURE
from ._redaction import redact
from ._rows import RowState
from ._rules import TIMESTAMP, Plan, Reject, describe, json_type, to_json_text
from ._typed import FALLBACK_ERRORS

if TYPE_CHECKING:  # writing tables needs no pandas; the DataFrame conveniences import it
    import pandas as pd


#: Tables whose rows take the workspace they were fetched from (`Page.tenant_id`, or the
#: `tenant_id` given with providers and repositories). Child tables take their deployment's.
_BY_WORKSPACE = ("deployments", "rejected_records", "oauth_providers", "repositories")
#: Tables read from records (the components are made from the deployments).
_LISTED = tuple(name for name in TABLE_NAMES if name != "deployment_components")


class Flattener:
    """Accumulates pages of records as columns; `take()` hands them over as Arrow tables.

    Streaming use: `add_page` as pages arrive, `take` whenever `pending` is large enough to
    make a row group, and once at the end. `counts` tracks records read and rejected.
    """

    def __init__(
        self,
        *,
        snapshot_at: datetime | None = None,
        include_env_values: bool = False,
        strict: bool = False,
        listed_by: bool = False,
    ) -> None:
        at = snapshot_at or datetime.now(UTC)
        self.snapshot_at = at if at.tzinfo else at.replace(tzinfo=UTC)
        self.include_env_values = include_env_values
        self.strict = strict
        #: Whether every table `take` hands over carries `LISTED_BY`, the workspace whose
        #: listing returned each row (`dims._copies`: the day decides between copies).
        self.listed_by = listed_by
        self._state = RowState(TABLE_NAMES)
        self._rows = self._state.rows
        self._row_lists = list(self._rows.values())
        self._layout = Layout(include_env_values, self._state)
        self.schemas = self._layout.schemas()
        #: The compiled lane (gathered.py), when built: it holds the rows of GATHERED's
        #: tables for the records it reads, in C, until `take`.
        self._gathered: GatheredReader | None = None
        #: True once raw records were found to have no compiled lane (`_gather.c` not built)
        self._careful_only = False
        #: Which lane read which rows of GATHERED's tables this batch: each lane keeps its
        #: rows until `take` puts them in record order (`_lanes`).
        self._runs = LaneRuns(len(GATHERED))
        self._provider_defaults = defaults("OAuthProvider")
        self._repository_defaults = defaults("Repository")
        #: deployments read; records rejected (providers and repositories too); deployments
        #: that sent a field under both its names with different values (the spec's kept);
        #: container quantities that are no Kubernetes quantity (their columns are null);
        #: resource figures no cluster runs (`_figures`: null, kept in unreadable_values_json)
        self.counts = {
            "records": 0,
            "rejected": 0,
            "original_conflicts": 0,
            "unreadable_quantities": 0,
            "unreadable_values": 0,
        }
        #: deployments the compiled lane took (the careful reader read the rest)
        self.typed_records = 0
        self.pending = 0
        #: The workspace of every row not yet taken, for the tables in _BY_WORKSPACE (and,
        #: with `listed_by`, every table read from records).
        tracked = _LISTED if listed_by else _BY_WORKSPACE
        self._workspaces: dict[str, list[str | None]] = {name: [] for name in tracked}
        #: Deployments per workspace whose own tenant_id names another workspace (kept).
        self.tenant_mismatches: Counter[str] = Counter()

    @contextlib.contextmanager
    def _from_workspace(self, tenant_id: str | None) -> Iterator[None]:
        """Rows added in the block come from workspace `tenant_id`."""
        marks = self._held_of(self._workspaces)
        try:
            yield
        finally:
            after = self._held_of(self._workspaces)
            for name, mark in marks.items():
                self._workspaces[name].extend([tenant_id] * (after[name] - mark))

    # ----- deployments

    def add_page(self, page: Page) -> None:
        """Flatten every record of a page; unreadable ones become rejected_records rows.

        Records given as raw JSON text (`msgspec.Raw`, from `read_dump(raw=True)`) are read
        by the compiled lane when it can; otherwise, and for parsed records, by the careful
        reader, which validates every field and gives rejects their reasons.
        """
        typed_count = 0
        records, n, i = page.records, len(page.records), 0
        with paused_gc(), self._from_workspace(page.tenant_id):
            while i < n:
                record = records[i]
                if type(record) is msgspec.Raw:
                    self._prepare()
                    if self._gathered is not None:  # a run of records in one call into C
                        self._switch_to(COMPILED)
                        stop, refused = self._gathered.read_many(page, i)
                        typed_count += stop - i
                        if refused is None:  # at the end, or at a parsed record
                            i = stop
                            continue
                        i, record = stop, records[stop]
                        if self._given_back(record, refused, page):
                            typed_count += 1
                            i += 1
                            continue
                    try:
                        record = parse_raw(record)
                    except Unparsable as exc:
                        self._reject(page.source, page.first_index + i, str(exc), _UNPARSABLE)
                        i += 1
                        continue
                self._switch_to(PYTHON)
                marks = list(map(len, self._row_lists))  # where to roll back to
                try:
                    self._read_careful(record, page)
                except Reject as reject:
                    self._roll_back(marks)
                    self._reject(page.source, page.first_index + i, reject.reason, record)
                i += 1
        self.typed_records += typed_count
        self.counts["records"] += n
        self.pending += n

    def add_counts(
        self, counts: Mapping[str, int], typed: int, mismatches: Mapping[str, int] | None = None
    ) -> None:
        """Count records another Flattener read for this one (a worker process's batch)."""
        for name, count in counts.items():
            self.counts[name] += count
        self.typed_records += typed
        self.tenant_mismatches.update(mismatches or {})

    def warn_of_conflicts(self) -> None:
        """Once an export's records are read: one warning when any record sent a field
        under both its names with different values (which value the tables hold, and where
        the other one is)."""
        conflicts = self.counts["original_conflicts"]
        if conflicts:
            warnings.warn(
                OriginalNameConflictWarning(
                    f"{conflicts:,} deployment(s) sent a field under both the spec's name and "
                    "the service's own (e.g. cache_cpu and redis_cpu) with different values: "
                    "the spec's name was kept, the other value is in unknown_fields_json"
                ),
                stacklevel=2,
            )

    def warn_of_findings(self) -> None:
        """Once an export's records are read: what they held that the tables keep apart
        (fields sent under two names; quantities that are not quantities; figures no
        cluster runs), one warning each."""
        self.warn_of_conflicts()
        self.warn_of_unreadable_quantities()
        self.warn_of_unreadable_values()

    def warn_of_unreadable_values(self) -> None:
        """Once an export's records are read: one warning when any resource_spec figure was
        one no cluster runs (negative, or above 2^32), saying where it is kept."""
        unreadable = self.counts["unreadable_values"]
        if unreadable:
            warnings.warn(
                UnreadableQuantityWarning(
                    f"{unreadable:,} resource_spec figure(s) are none a cluster runs (negative, "
                    f"or above {LARGEST_FIGURE:,.0f}, such as cpu -2): their columns in "
                    "deployments and deployment_components are null, not 0, the values are "
                    f"in {UNREADABLE_VALUES_COLUMN}, and `dims report` prices those "
                    "deployments nowhere and lists each figure as an unreadable_quantity "
                    "anomaly with its reason"
                ),
                stacklevel=2,
            )

    def warn_of_unreadable_quantities(self) -> None:
        """Once an export's records are read: one warning when any container quantity was
        not a Kubernetes quantity (where the text is, and where the reasons are)."""
        unreadable = self.counts["unreadable_quantities"]
        if unreadable:
            warnings.warn(
                UnreadableQuantityWarning(
                    f"{unreadable:,} container resource quantity value(s) are not Kubernetes "
                    'quantities a cluster runs (such as "١٢", " 2 " or "-1"): their columns in '
                    "deployment_containers are null, not 0, the text is in "
                    "resources_requests_json or "
                    "resources_limits_json, and `dims report` lists each as an "
                    "unreadable_quantity anomaly with its reason"
                ),
                stacklevel=2,
            )

    def _given_back(self, record: msgspec.Raw, refused: BaseException, page: Page) -> bool:
        """The compiled lane's second look at a record its run stopped at (one with fields
        the spec does not name); False when the careful reader must read it."""
        assert self._gathered is not None
        try:
            self._gathered.read_given_back(record, refused, page)
        except (Reject, *FALLBACK_ERRORS):
            return False
        return True

    def _read_careful(self, record: Any, page: Page) -> None:
        """Read a parsed record with every check; Reject says why it cannot be read."""
        layout, state = self._layout, self._state
        if type(record) is not dict:
            raise Reject("record", f"expected object, got {json_type(record)}")
        record_id = record.get("id")
        if record_id is None:
            raise Reject("id", "missing" if "id" not in record else "null")
        if type(record_id) is not str:
            raise Reject("id", f"expected string (uuid), got {describe(record_id, True)}")
        unknown = state.begin(record_id)
        row: list[Any] = [None] * len(layout.wide.names)
        layout.deployment_plan.read(record, "", row, unknown)
        row[layout.deployment_type_index] = page.type_of(record)
        row[layout.secret_count_index] = state.secret_count
        if unknown:
            row[layout.unknown_index] = to_json_text(unknown)
            for path, index in layout.service_columns.items():
                value = unknown.get(path)
                if type(value) is str:
                    row[index] = value
        self._rows["deployments"].append(row)

    def _roll_back(self, marks: list[int]) -> None:
        """Drop the rows a record added before it failed: nothing of it stays."""
        for rows, mark in zip(self._row_lists, marks, strict=True):
            del rows[mark:]

    def prepare(self) -> None:
        """Build the fast reader now rather than at the first raw record."""
        self._prepare()

    def _prepare(self) -> None:
        if self._gathered is None and not self._careful_only:  # built on first use:
            if gathered.available():  # raw records are its only input
                self._gathered = GatheredReader(self._layout, self.schemas)
            else:
                self._careful_only = True
                gathered.say_not_built()

    def _switch_to(self, lane: int) -> None:
        """Before a record of `lane`: the other lane's run of rows ends (counted, not moved)."""
        if self._runs.lane != lane:
            self._end_run()
            self._runs.lane = lane

    def _end_run(self) -> None:
        """The current lane's run ends: how many rows of each table it added."""
        if self._runs.lane == PYTHON:
            self._runs.close([len(self._rows[name]) for name in GATHERED])
        elif self._runs.lane == COMPILED and self._gathered is not None:
            self._runs.close(self._gathered.held())

    def _held_of(self, names: Iterable[str]) -> dict[str, int]:
        """Rows of each table not yet taken, whichever lane read them."""
        compiled = self._gathered.held() if self._gathered is not None else []
        return {
            name: len(self._rows[name])
            + (compiled[GATHERED.index(name)] if compiled and name in GATHERED else 0)
            for name in names
        }

    def _reject(
        self, source: str, index: int, reason: str, record: Any, schema: str = "Deployment"
    ) -> None:
        self.counts["rejected"] += 1
        if self.strict:
            raise RejectedRecordError(
                f"record rejected: {source} record {index}: {reason} "
                "(drop --strict to export the rest and list it in rejected_records)"
            )
        text = None if record is _UNPARSABLE else to_json_text(redact(record, schema))
        self._rows["rejected_records"].append((source, index, reason, text))

    # ----- providers and repositories

    def add_providers(
        self,
        records: Iterable[Any],
        *,
        source: str = "oauth_providers",
        tenant_id: str | None = None,
    ) -> None:
        """Add OAuth provider records (spec 2.1), applying the spec's defaults; `tenant_id`
        is the workspace they were listed in (None: no X-Tenant-Id was sent)."""
        layout = self._layout
        with self._from_workspace(tenant_id):
            self._add_records(
                records,
                source,
                "OAuthProvider",
                layout.provider_plan,
                layout.providers,
                self._rows["oauth_providers"],
                self._provider_defaults,
            )

    def add_repositories(
        self, records_by_integration: Mapping[str, Iterable[Any]], *, tenant_id: str | None = None
    ) -> None:
        """Add repository records (spec 2.2), keyed by the integration that listed them."""
        layout = self._layout
        with self._from_workspace(tenant_id):
            for integration_id, records in records_by_integration.items():
                self._add_records(
                    records,
                    f"repositories integration={integration_id}",
                    "Repository",
                    layout.repository_plan,
                    layout.repositories,
                    self._rows["repositories"],
                    self._repository_defaults,
                )

    def _add_records(
        self,
        records: Iterable[Any],
        source: str,
        schema_name: str,
        plan: Plan,
        columns: Columns,
        rows: list[Any],
        defaults: dict[str, Any],
    ) -> None:
        width = len(columns.names)
        for i, record in enumerate(records):
            try:
                if type(record) is not dict:
                    raise Reject("record", f"expected object, got {json_type(record)}")
                unknown: dict[str, Any] = {}
                row: list[Any] = [None] * width
                plan.read({**defaults, **record}, "", row, unknown)
            except Reject as reject:
                self._reject(source, i, reject.reason, record, schema_name)
                continue
            row[-1] = to_json_text(unknown) if unknown else None
            rows.append(row)

    # ----- output

    def take(self) -> dict[str, pa.Table]:
        """Every table (empty ones too) for the rows added since the last take; clears them."""
        at = column([self.snapshot_at], TIMESTAMP)[0]
        out: dict[str, pa.Table] = {}
        workspaces = {name: column(ws, pa.string()) for name, ws in self._workspaces.items()}
        for found in self._workspaces.values():
            found.clear()
        with paused_gc():
            self._end_run()
            self._runs.lane = None
            compiled = self._gathered.take() if self._gathered is not None else {}
            for name, schema in self.schemas.items():  # deployments first: children need it
                if name == "deployment_components":
                    continue
                columns = self._take_columns(name, schema, compiled.pop(name, None))
                if name == "deployments":
                    out[name] = self._with_workspace(
                        self._figures_read(table_of(columns, schema, at, _none_unreadable)),
                        workspaces[name],
                    )
                else:
                    tenant = workspaces[name] if name in _BY_WORKSPACE else None
                    parent = _parent(out, self.listed_by and workspaces, name)
                    out[name] = table_of(
                        columns, schema, at, tenant if tenant is not None else parent
                    )
                del columns
        out["deployment_components"] = components_from(out["deployments"])
        if self.listed_by:
            out = _with_listers(out, workspaces)
        self.counts["original_conflicts"] += self._layout.original_conflicts(out["deployments"])
        self.counts["unreadable_quantities"] += unreadable_quantities(out["deployment_containers"])
        self.pending = 0
        return {name: out[name] for name in self.schemas}

    def _figures_read(self, deployments: pa.Table) -> pa.Table:
        """The batch's deployments with resource figures no cluster runs null and kept
        aside (`_figures`: one pass, whichever lane read them), counted."""
        deployments, found = unreadable_figures(deployments)
        self.counts["unreadable_values"] += found
        return deployments

    def _take_columns(
        self, name: str, schema: pa.Schema, compiled: list[pa.Array] | None
    ) -> list[pa.Array]:
        """A table's row columns (`row_fields`) for every row not yet taken, in record order,
        from the Python rows and the compiled lane's columns (if any); clears them."""
        rows = self._rows[name]
        taken = rows.copy()  # the readers hold `rows` itself: clear it in place
        rows.clear()
        columns = arrays_from_rows(taken, row_fields(name, schema))
        if name not in GATHERED:
            return columns
        return in_record_order(self._runs.take(GATHERED.index(name)), compiled, columns)

    def _with_workspace(self, deployments: pa.Table, workspaces: pa.Array) -> pa.Table:
        """A deployment's tenant_id is its own; the workspace it came from where it has none.
        One that names another workspace keeps its own and is counted."""
        own = deployments[TENANT_COLUMN].combine_chunks()
        differs = pc.not_equal(own, workspaces)  # null where it has none: filtered out
        for item in pc.value_counts(workspaces.filter(differs)).to_pylist():
            self.tenant_mismatches[item["values"]] += item["counts"]
        index = deployments.schema.get_field_index(TENANT_COLUMN)
        return deployments.set_column(index, TENANT_COLUMN, pc.coalesce(own, workspaces))


def _with_listers(tables: dict[str, pa.Table], listers: dict[str, pa.Array]) -> dict[str, pa.Table]:
    """Every table with `LISTED_BY`: the workspace whose listing returned each row (a
    deployment's components: its deployment's, each component of it in turn)."""
    deployments = listers["deployments"]
    components = tables["deployment_components"].num_rows
    if len(deployments):
        each = np.repeat(np.arange(len(deployments)), components // len(deployments))
        listers = {**listers, "deployment_components": deployments.take(pa.array(each))}
    else:
        listers = {**listers, "deployment_components": pa.nulls(0, pa.string())}
    return {name: t.append_column(LISTED_BY, listers[name]) for name, t in tables.items()}


class Unparsable(ValueError):
    """A raw record that only a full parse finds is not JSON (1e999, bad UTF-8 in a string)."""


#: Stands in for a record that cannot be parsed: its text cannot be redacted, so it is
#: never stored (rejected_records.record_json is null) and only the reason says why.
_UNPARSABLE = object()


def parse_raw(record: msgspec.Raw) -> Any:
    """A raw record parsed for the careful reader."""
    try:
        return orjson.loads(memoryview(record))
    except orjson.JSONDecodeError as exc:
        # orjson's message names what and where (e.g. `number out of range: line 1
        # column 9`), never the text itself; the part's path is added where the grammar
        # reads it (a lone surrogate, 1e400: JSON by the grammar, values for no parser)
        raise Unparsable(f"record: not valid JSON ({exc}{_unreadable_at(record)})") from None


def _unreadable_at(record: msgspec.Raw) -> str:
    """`; at name: a string that is not Unicode text (...)`, or nothing when not found."""
    try:
        found = rawjson.unreadable_part(rawjson.grammar_loads(record))
    except ValueError:
        return ""
    return "" if found is None else f"; at {found}"


#: A tenant_id column given apart: the array itself, or how to make it from the others.
TenantOf: TypeAlias = pa.Array | Callable[[dict[str, pa.Array]], pa.Array]


def table_of(
    columns: list[pa.Array], schema: pa.Schema, at: pa.Scalar, tenant: TenantOf | None = None
) -> pa.Table:
    """A table of `schema` from its columns but snapshot_at (and but the column before it,
    given apart as `tenant`: an array or a function of the other columns; a child table's
    tenant_id, the deployments' unreadable_values_json)."""
    columns = list(columns)
    n = len(columns[0]) if columns else 0
    if tenant is not None:
        names = [f.name for f in schema][: len(columns)]
        by_name = dict(zip(names, columns, strict=True))
        columns.append(tenant(by_name) if callable(tenant) else tenant)
    return pa.Table.from_arrays([*columns, pa.repeat(at, n)], schema=schema)


def _none_unreadable(columns: dict[str, pa.Array]) -> pa.Array:
    """The deployments' unreadable_values_json before their figures are read: null."""
    return pa.nulls(len(columns["id"]), pa.string())


def _parent(
    tables: Mapping[str, pa.Table], listers: Mapping[str, pa.Array] | bool, name: str
) -> Callable[[dict[str, pa.Array]], pa.Array]:
    """A child row's tenant_id: its deployment's (read in the same batch). With `listers`
    (each table's workspace per row), its own copy's: a batch may hold copies of one id
    from several workspaces, each naming its own."""
    deployments = tables["deployments"]
    ids = deployments["id"].combine_chunks()
    if isinstance(listers, Mapping):
        ids = _copy_key(ids, listers["deployments"])

    def tenant(columns: dict[str, pa.Array]) -> pa.Array:
        key = columns["deployment_id"]
        if isinstance(listers, Mapping):
            key = _copy_key(key, listers[name])
        found = pc.index_in(key, value_set=ids)
        return pc.take(deployments[TENANT_COLUMN], found).combine_chunks()

    return tenant


def _copy_key(ids: pa.Array, listers: pa.Array) -> pa.Array:
    """Which copy a row is of: its deployment id and the workspace that listed it."""
    return pc.binary_join_element_wise(ids, pc.fill_null(listers, ""), "\x1f")


# --- conveniences for notebooks -----------------------------------------------------------


def flatten(
    pages: Iterable[Page],
    *,
    providers: Iterable[Any] = (),
    repositories: Mapping[str, Iterable[Any]] | None = None,
    snapshot_at: datetime | None = None,
    include_env_values: bool = False,
) -> dict[str, pa.Table]:
    """Every table for the given pages, providers and repositories, in memory."""
    flattener = Flattener(snapshot_at=snapshot_at, include_env_values=include_env_values)
    for page in pages:
        flattener.add_page(page)
    flattener.add_providers(providers)
    if repositories:
        flattener.add_repositories(repositories)
    return flattener.take()


def flatten_providers(records: Iterable[Any], *, snapshot_at: datetime | None = None) -> pa.Table:
    """The oauth_providers table for provider records (rejected ones are left out)."""
    return flatten((), providers=records, snapshot_at=snapshot_at)["oauth_providers"]


def flatten_repositories(
    records_by_integration: Mapping[str, Iterable[Any]], *, snapshot_at: datetime | None = None
) -> pa.Table:
    """The repositories table for repository records keyed by integration id."""
    return flatten((), repositories=records_by_integration, snapshot_at=snapshot_at)["repositories"]


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """A DataFrame keeping nulls in integer and boolean columns (nullable dtypes)."""
    import pandas as pd

    mapping = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    frame: pd.DataFrame = table.to_pandas(types_mapper=mapping.get)
    return frame


def _as_pages(pages_or_records: Iterable[Any]) -> list[Page]:
    items = list(pages_or_records)
    if all(isinstance(item, Page) for item in items):
        return items
    return [Page(records=items, source="records")]


def to_dataframes(
    pages_or_records: Iterable[Any],
    *,
    providers: Iterable[Any] = (),
    repositories: Mapping[str, Iterable[Any]] | None = None,
    snapshot_at: datetime | None = None,
    include_env_values: bool = False,
) -> dict[str, pd.DataFrame]:
    """Every table as a pandas DataFrame, from Pages or from a plain list of records."""
    tables = flatten(
        _as_pages(pages_or_records),
        providers=providers,
        repositories=repositories,
        snapshot_at=snapshot_at,
        include_env_values=include_env_values,
    )
    return {name: to_pandas(table) for name, table in tables.items()}


def deployments_dataframe(pages_or_records: Iterable[Any]) -> pd.DataFrame:
    """The wide deployments table as a DataFrame, from Pages or a plain list of records."""
    return to_pandas(flatten(_as_pages(pages_or_records))["deployments"])
