"""Every exception dims raises on purpose and every warning it gives, in one module.

Each error prints as one line that says what failed, where, and what to do about it, so
the CLI can show `str(error)` instead of a traceback (`one_line`, `first_line`). No message
ever contains the API key: requests are described by method and URL only, never by their
headers, and any text that came from the service (an error body, a reason phrase, a header
in a debug log) passes through `secrets.scrub` first, because a service may echo the key it
rejected. Which response becomes which error is `_http_errors.py`'s job; scrubbing is
`secrets.py`'s.

The errors (catch `DimsError` for every failure dims reports on purpose):

    DimsError
    ├── ConfigurationError          the settings cannot work; nothing was sent
    │   ├── PriceSheetError         a price file or price option
    │   └── RulesError              a rules file of `dims check`
    ├── MissingExtraError (ImportError)  an extra the call needs is not installed
    ├── APIConnectionError          the service could not be reached, after retries
    │   └── APITimeoutError         a request timed out, after retries
    │       └── DeadlineExceededError   one request outlasted its deadline
    ├── ResponseFormatError         a 200 whose body is not the JSON the spec promises
    │   └── ResponseTooLargeError   a body beyond the size limits
    ├── PaginationError             the listing's paging broke its rule
    ├── APIStatusError              the service answered with an error status
    │   ├── AuthenticationError     401: no key, or a key the service refused
    │   ├── PermissionDeniedError   403: a key the service knows, refused this workspace
    │   ├── NotFoundError           404
    │   ├── ValidationError         400, 422
    │   ├── RateLimitError          429, after retries
    │   └── ServerError             5xx, after retries
    ├── DumpError                   a saved dump cannot be read
    ├── ExportError                 a snapshot could not be written
    │   ├── RejectedRecordError     a record refused in strict mode
    │   ├── WorkspacesFailed        workspaces of an export failed
    │   └── LeaseLost               an export on object storage lost its lease
    ├── DatasetError                the dataset cannot be read as asked
    │   ├── ManifestError          a day's manifest is not one dims wrote
    │   └── DeploymentLookupError  no deployment, or several, answer to an id or name
    ├── ObjectStoreError            object storage refused or failed an operation
    └── ReportError                 a report could not be written

Each error has one name. The names, and the attributes of a status error (`status_code`,
`response`, `headers`, `body`; `retry_after` of a 429), are openai-python's. As there, a 403
is a `PermissionDeniedError` and not an `AuthenticationError`: the service knew the key and
refused it the workspace, and a handler that asks for a new key would be wrong about it.
Catch `DimsError` for every failure.

The warnings (filter `DimsWarning` for all of them; each keeps the standard category it
always had, so a filter on UserWarning or RuntimeWarning still sees it):

    DimsWarning
    ├── ListingShiftedWarning          (UserWarning)
    ├── PagingWarning                  (UserWarning)
    ├── CodeHostWarning                (UserWarning)
    ├── UnreadableQuantityWarning      (UserWarning)
    ├── OriginalNameConflictWarning    (UserWarning)
    ├── TenantMismatchWarning          (UserWarning)
    ├── DuplicateDeploymentsWarning    (UserWarning)
    ├── ExportWaitWarning              (UserWarning)
    ├── UnknownPriceTypeWarning        (UserWarning)
    ├── UnknownGroupWarning            (UserWarning)
    ├── GroupNameWarning               (UserWarning)
    ├── SeriesLimitWarning             (UserWarning)
    ├── NameCollisionWarning           (UserWarning)
    ├── NotCompiledWarning             (RuntimeWarning)
    └── WorkerLost                     (RuntimeWarning)

Warnings live here with the errors, not beside the code that gives them: both are what
dims tells its user went wrong, a user filters a warning by its class (`pytest.warns`,
`warnings.simplefilter`) as they catch an error by its class, and this module is the
foundation every layer already imports, so the layer that warns (the orchestrator warns
of the code host, fetch of paging) never reaches into another layer for the class.
Every class is exported from `analysis` (tests/spec/test_structure.py checks it, and that
the two trees above are the classes' own).
"""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

import orjson

from ._escape import printable
from ._secrets import scrub

if TYPE_CHECKING:  # only in annotations: the CLI starts without loading httpx
    import httpx

_DETAIL_MAX = 300
#: Characters of a body read for its detail: scrubbing is not free, and bodies can be huge.
_DETAIL_SCAN = 64 * 1024


class DimsError(Exception):
    """Base class: catch this to handle every failure dims reports on purpose."""

    #: The workspace the failure came from, where a client of several says which (None: one
    #: workspace, or not told): its line starts `workspace <id>: ` then.
    workspace: str | None = None

    def from_workspace(self, tenant: str) -> Self:
        """This error, named as the failure of workspace `tenant`: of a client of several
        workspaces, a request alone does not say whose it was (the workspace is a header).
        An error named once keeps its name."""
        if self.workspace is None:
            self.workspace = tenant
            self.args = (f"workspace {tenant}: {self}",)
        return self


class ConfigurationError(DimsError):
    """The settings (base URL, key, options) cannot work; nothing was sent."""


class MissingExtraError(DimsError, ImportError):
    """What was asked needs an extra of dims that is not installed (`dims[sandbox]`): the
    default install leaves out what only some users need. An ImportError too, since it is
    raised where the extra's modules would be imported."""

    def __init__(self, extra: str, needed_by: str) -> None:
        super().__init__(f"{needed_by} needs the {extra} extra: pip install 'dims[{extra}]'")
        #: The extra's name (`sandbox`).
        self.extra = extra

    def needed_by(self, what: str) -> str:
        """The same line, naming `what` (`dims demo`) as what needs the extra."""
        return f"{what} needs the {self.extra} extra: pip install 'dims[{self.extra}]'"


class PriceSheetError(ConfigurationError):
    """A price file or price option cannot be used; the message names the file and key."""


class RulesError(ConfigurationError):
    """A rules file of `dims check` cannot be used (unreadable, an unknown key, a wrong type,
    a negative number); the message names the file and the key. `dims check` exits 2."""


class APIConnectionError(DimsError):
    """The service could not be reached or did not answer, after retries."""


class APITimeoutError(APIConnectionError):
    """A request timed out (connecting or reading, each within the client's `timeout`) on
    every attempt."""


class ResponseFormatError(DimsError):
    """The service answered 200 with a body that is not the JSON the spec promises."""


class PaginationError(DimsError):
    """The listing's paging broke its rule: the response offset did not advance."""


class DumpError(DimsError):
    """A saved dump file cannot be read."""


class ExportError(DimsError):
    """A snapshot could not be written; earlier snapshots are untouched."""


class RejectedRecordError(ExportError):
    """Raised in strict mode for the first record that cannot be read."""


class WorkspacesFailed(ExportError):
    """Workspaces of an export failed, so nothing was published (without allow_partial, or
    when every one failed); or, for tables read in memory (`call`, such as
    `deployments.list().to_pandas()`), so the call gave no tables.

    `workspaces` says, per workspace asked for, whether it was fetched or why it failed:
    `{"status": "fetched", "deployments": n}` or `{"status": "failed", "error": "…"}`. The
    raising site passes it, so this module knows nothing of the storage's `Workspace`.
    """

    def __init__(
        self, workspaces: Mapping[str, Mapping[str, Any]], call: str | None = None
    ) -> None:
        self.workspaces: dict[str, dict[str, Any]] = {
            tenant: dict(found) for tenant, found in workspaces.items()
        }
        self.call = call
        failed = [(tenant, found) for tenant, found in workspaces.items() if _failed(found)]
        fine = [
            f"{tenant} ({found.get('deployments') or 0:,} deployments)"
            for tenant, found in workspaces.items()
            if not _failed(found)
        ]
        others = (
            "pass --allow-partial to publish the others"
            if call is None
            else "leave them out of tenant_id to read the others"
        )
        advice = (
            "every workspace failed"
            if not fine
            else f"fetched: {', '.join(fine)}; fix the failed ones, or {others}"
        )
        reasons = "; ".join(f"{tenant}: {found['error']}" for tenant, found in failed)
        outcome = "nothing was published" if call is None else f"{call} gave no tables"
        super().__init__(
            f"{len(failed)} of {len(workspaces)} workspace(s) failed, so {outcome}: "
            f"{reasons}; {advice}"
        )


def _failed(found: Mapping[str, Any]) -> bool:
    return found.get("status") == "failed"


class LeaseLost(ExportError):
    """This export's lease expired or was taken over: it must publish nothing more."""


class DatasetError(DimsError):
    """The dataset is missing, empty, lacks the requested snapshot, or holds a bad file."""


class ManifestError(DatasetError):
    """A dataset's manifest (`_manifests/<day>.json`) is not one dims wrote: not JSON, or
    not the manifest's schema (`dims._storage.manifest`)."""


class DeploymentLookupError(DatasetError):
    """No deployment of the snapshot has the id or name asked for (the message suggests
    the nearest), or several share the name (`ids` holds theirs: give one of them)."""

    def __init__(self, message: str, ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ids = ids


class ObjectStoreError(DimsError):
    """Object storage refused or failed an operation (credentials, bucket, network)."""


class ReportError(DimsError):
    """A report could not be written; the dataset and earlier reports are untouched."""


class ResponseTooLargeError(ResponseFormatError):
    """The service sent a body larger than the limit, as sent or once decompressed."""


class DeadlineExceededError(APITimeoutError):
    """One request (its attempts and waits included) did not finish within the deadline."""


class APIStatusError(DimsError):
    """The service answered with an error status (after retries, for the statuses retried).

    `response` is the last answer, its body read; the request it carries has no secret
    header (`without_secrets`). `headers` are the response's; `body` is its JSON (a dict for
    FastAPI's `{"detail": …}`), or its text when it is not JSON, secrets scrubbed from both
    as from `detail`. Errors built by hand (a message, no response) have empty headers and
    no body.
    """

    hint = "check the request and the service's status"

    def __init__(
        self,
        request: str,
        status_code: int,
        detail: str,
        hint: str | None = None,
        *,
        response: httpx.Response | None = None,
    ) -> None:
        self.request = request
        self.status_code = status_code
        self.detail = detail = scrub(detail)
        #: What to do: the class's advice, or the caller's when it knows more (a 401 says
        #: whether a key was sent at all, and which setting gave it).
        self.hint = hint or self.hint
        self.response = response
        self.body = None if response is None else _body(response)
        super().__init__(f"{request} failed: HTTP {status_code}: {detail} ({self.hint})")

    @property
    def headers(self) -> Mapping[str, str]:
        return {} if self.response is None else self.response.headers


class AuthenticationError(APIStatusError):
    hint = "check DIMS_API_KEY / --api-key and DIMS_TENANT_ID / --tenant-id"


class PermissionDeniedError(APIStatusError):
    hint = "check DIMS_API_KEY / --api-key and DIMS_TENANT_ID / --tenant-id"


class NotFoundError(APIStatusError):
    hint = "check the identifier; list the records to see which exist"


class ValidationError(APIStatusError):
    hint = "check the parameter values against the interface spec"


class RateLimitError(APIStatusError):
    hint = "the service kept rate-limiting after retries; lower --concurrency or retry later"

    @property
    def retry_after(self) -> float | None:
        """Seconds the last answer asked to wait (its Retry-After, in seconds or as a date),
        or None when it named none."""
        return retry_after(self.headers.get("retry-after"))


class ServerError(APIStatusError):
    hint = "the service failed after retries; retry later"


# --- warnings ------------------------------------------------------------------------------


class DimsWarning(Warning):
    """Base class: filter this for every warning dims gives on purpose."""


class ListingShiftedWarning(DimsWarning, UserWarning):
    """The listing changed while it was paged: some records came twice and were dropped."""


class PagingWarning(DimsWarning, UserWarning):
    """The service answered an offset that does not advance; dims carried on by counting."""


class CodeHostWarning(DimsWarning, UserWarning):
    """Every repositories request of an export answered 404: far likelier a code-host segment
    the service does not have (`--code-host`) than that every integration is unknown to it."""


class UnreadableQuantityWarning(DimsWarning, UserWarning):
    """Containers sent resource quantities that are not Kubernetes quantities (`"١٢"`, `" 2 "`):
    their columns are null, never 0, and `dims report` lists each with its reason."""


class OriginalNameConflictWarning(DimsWarning, UserWarning):
    """Deployments sent a field under the spec's name and the published service's name
    (`cache_cpu` and `redis_cpu`) with different values: the spec's name was kept."""


class TenantMismatchWarning(DimsWarning, UserWarning):
    """Deployments fetched from one workspace name another in their own tenant_id."""


class DuplicateDeploymentsWarning(DimsWarning, UserWarning):
    """Deployments came from more than one workspace; each is in the day once."""


class ExportWaitWarning(DimsWarning, UserWarning):
    """Another export holds the dataset; this one waits for it."""


class UnknownPriceTypeWarning(DimsWarning, UserWarning):
    """A per-type override names a type no deployment has and the spec does not list: most
    likely a typo (`prdo`), whose prices then apply to nothing."""


class UnknownGroupWarning(DimsWarning, UserWarning):
    """A rule of `dims check` names a group no deployment of the snapshot is in (a budget
    for `label:team=paymnets`): a typo, or a team gone; the rule checks nothing there."""


class GroupNameWarning(DimsWarning, UserWarning):
    """A group's value is shown under another name, never merged with another group: a real
    value written like one of dims' own (`__unallocated__`, `__other__`) is wrapped in two
    more underscores, and a metric label value with control characters shown escaped (or
    empty, which Prometheus reads as no label) is made distinct from any it would meet."""


class SeriesLimitWarning(DimsWarning, UserWarning):
    """`dims metrics` cut a scope (namespaces, versions, …) whose series would pass
    `--max-series`: its most expensive groups are kept and the others summed in one."""


class NameCollisionWarning(DimsWarning, UserWarning):
    """Two names would be one table or view once cleaned (`label:a.b` and `label:a b` both
    `cost_by_label_a_b`) or compared as DuckDB compares them, ignoring case: one is renamed,
    or left out of the views, and said so; never are the two merged."""


class NotCompiledWarning(DimsWarning, RuntimeWarning):
    """dims' compiled lane (`_gather.c`) was not built at install (no C compiler): raw
    records are read by the careful reader, which writes the same tables, more slowly.
    Given once per process, so that a slow export on such a machine says why."""


class WorkerLost(DimsWarning, RuntimeWarning):
    """A worker process stopped (killed for memory, say) or hung; this process reads on alone."""

    def __init__(self, why: str = "") -> None:
        super().__init__(why)
        self.why = why

    def __str__(self) -> str:
        why = f" ({self.why})" if self.why else ""
        return f"a worker process reading records stopped{why}; reading on in this process"


def one_line(text: str, limit: int = _DETAIL_MAX) -> str:
    """`text` (an error's, the service's) as one short line: its whitespace runs one space,
    every other control or bidi character escaped (`dims._escape.printable`), so a
    message printed or logged by whoever catches it cannot drive their terminal."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def first_line(error: BaseException) -> str:
    """An error's first line, as one line: DuckDB's messages run over several lines (the
    query, a caret), and the first says it."""
    text = str(error).strip()
    return one_line(text.splitlines()[0] if text else type(error).__name__)


def scrubbed_line(text: str, limit: int = _DETAIL_MAX) -> str:
    """Text from the service as one short line, secrets replaced before it is cut (a key
    cut in two would leave a piece that no longer matches). Only the start of a long text
    is read, cut where whitespace is, which no form of a key holds."""
    if len(text) > _DETAIL_SCAN:
        text = (text[:_DETAIL_SCAN].rsplit(None, 1) or [""])[0]
    return one_line(scrub(text), limit)


def _body(response: httpx.Response) -> Any:
    """The body as JSON (a dict, a list, …), else as text; secrets scrubbed from both."""
    text = scrub(response.text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks to wait (delta-seconds, or an HTTP date from now;
    never below 0), or None for no header or one that is neither."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT; RFC 850 forms parse without a zone
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())
