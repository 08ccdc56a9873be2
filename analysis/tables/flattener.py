"""The Flattener: pages of records in, Arrow tables of every table out, batch by batch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
import pyarrow as pa

from analysis.errors import ExportError
from analysis.gcpause import paused_gc
from analysis.pages import Page

from .careful import Columns
from .layout import TABLE_NAMES, Layout, components_from, defaults
from .redaction import redact
from .rows import RowState
from .rules import TIMESTAMP, Plan, Reject, describe, json_type, to_json_text
from .typed import FALLBACK_ERRORS, TypedReader

if TYPE_CHECKING:  # writing tables needs no pandas; the DataFrame conveniences import it
    import pandas as pd


class RejectedRecordError(ExportError):
    """Raised in strict mode for the first record that cannot be read."""


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
    ) -> None:
        at = snapshot_at or datetime.now(UTC)
        self.snapshot_at = at if at.tzinfo else at.replace(tzinfo=UTC)
        self.include_env_values = include_env_values
        self.strict = strict
        self._state = RowState(TABLE_NAMES)
        self._rows = self._state.rows
        self._row_lists = list(self._rows.values())
        self._layout = Layout(include_env_values, self._state)
        self.schemas = self._layout.schemas()
        self._typed: TypedReader | None = None
        self._provider_defaults = defaults("OAuthProvider")
        self._repository_defaults = defaults("Repository")
        #: deployments read, deployments rejected, and all rejected (providers, repositories too)
        self.counts = {"records": 0, "rejected": 0}
        #: deployments the fast typed reader took (the careful reader read the rest)
        self.typed_records = 0
        self.pending = 0

    # ----- deployments

    def add_page(self, page: Page) -> None:
        """Flatten every record of a page; unreadable ones become rejected_records rows.

        Records given as raw JSON text (`msgspec.Raw`, from `read_dump(raw=True)`) are read
        by the fast typed reader when it can; otherwise, and for parsed records, by the
        careful reader, which validates every field and gives rejects their reasons.
        """
        typed_count = 0
        with paused_gc():
            for i, record in enumerate(page.records):
                marks = [len(rows) for rows in self._row_lists]
                if type(record) is msgspec.Raw:
                    if self._read_typed(record, page):
                        typed_count += 1
                        continue
                    self._roll_back(marks)
                    try:
                        record = parse_raw(record)
                    except Unparsable as exc:
                        self._reject(page.source, page.first_index + i, str(exc), _UNPARSABLE)
                        continue
                try:
                    self._read_careful(record, page)
                except Reject as reject:
                    self._roll_back(marks)
                    self._reject(page.source, page.first_index + i, reject.reason, record)
        n = len(page.records)
        self.typed_records += typed_count
        self.counts["records"] += n
        self.pending += n

    def add_counts(self, records: int, rejected: int, typed: int) -> None:
        """Count records another Flattener read for this one (a worker process's batch)."""
        self.counts["records"] += records
        self.counts["rejected"] += rejected
        self.typed_records += typed

    def _read_typed(self, record: msgspec.Raw, page: Page) -> bool:
        """Read a raw record with the fast reader; False when the careful one must."""
        layout, state = self._layout, self._state
        try:
            row = self._typed_reader().read(record)
        except (Reject, *FALLBACK_ERRORS):
            return False
        if row[layout.deployment_type_index] is None:
            row[layout.deployment_type_index] = page.listed_type(state.deployment_id)
        row[layout.secret_count_index] = state.secret_count
        self._rows["deployments"].append(row)
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

    def _typed_reader(self) -> TypedReader:
        if self._typed is None:  # built on first use: `--from-json` is its only caller
            self._typed = TypedReader(self._state, self._layout)
        return self._typed

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

    def add_providers(self, records: Iterable[Any], *, source: str = "oauth_providers") -> None:
        """Add OAuth provider records (spec 2.1), applying the spec's defaults."""
        layout = self._layout
        self._add_records(
            records,
            source,
            "OAuthProvider",
            layout.provider_plan,
            layout.providers,
            self._rows["oauth_providers"],
            self._provider_defaults,
        )

    def add_repositories(self, records_by_integration: Mapping[str, Iterable[Any]]) -> None:
        """Add repository records (spec 2.2), keyed by the integration that listed them."""
        layout = self._layout
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

    def take(self, *, spent: list[list[Any]] | None = None) -> dict[str, pa.Table]:
        """Every table (empty ones too) for the rows added since the last take; clears them.

        Freeing millions of row objects takes a while; with `spent`, the row lists are put
        there instead, so a caller can free them while the tables are being written.
        """
        at = pa.scalar(self.snapshot_at, type=TIMESTAMP)
        out: dict[str, pa.Table] = {}
        with paused_gc():
            for name, schema in self.schemas.items():
                if name == "deployment_components":
                    continue
                rows = self._rows[name]
                taken = rows.copy()  # the readers hold `rows` itself: clear it in place
                rows.clear()
                out[name] = to_table(taken, schema, at)
                if spent is not None:
                    spent.append(taken)
                del taken
        out["deployment_components"] = components_from(out["deployments"])
        self.pending = 0
        return {name: out[name] for name in self.schemas}


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
        # column 9`), never the text itself
        raise Unparsable(f"record: not valid JSON ({exc})") from None


def to_table(rows: list[Any], schema: pa.Schema, at: pa.Scalar) -> pa.Table:
    """Rows (every column but snapshot_at) as a table of `schema`.

    The rows are converted as one struct array (pyarrow reads each tuple in C++) and split
    into its columns: about twice as fast as transposing them in Python first.
    """
    row_type = pa.struct(list(schema)[:-1])  # every row lacks snapshot_at
    rows_array = pa.array(map(tuple, rows), type=row_type, size=len(rows))
    return pa.Table.from_arrays([*rows_array.flatten(), pa.repeat(at, len(rows))], schema=schema)


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
