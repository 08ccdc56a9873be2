"""`connect()`: the generated client, configured safely from arguments, `DIMS_*` or a profile.

Settings are decided once, by `resolve_settings`: a flag or argument, then its `DIMS_*`
variable, then the profile (`dims._profiles`), then the default, each setting's origin
kept for `dims config`. The result, a frozen `Settings`, is what every layer below is handed
(`connect(settings=…)`, one client per workspace): nothing re-reads a variable or the file,
and a profile's key command runs at most once per command.

The API key is attached per request by `ApiKeyAuth` (an httpx auth flow) rather than put
in the client's default headers, because the generated `Client` is an attrs class whose
repr prints its headers. The auth flow also refuses to send the key over plain http to a
host other than loopback unless explicitly allowed.

The key is checked before any use: surrounding whitespace (a key file with a trailing
newline or Windows line ending) is stripped with a warning, and any other character that
cannot be part of a key (a space, a control character, non-ASCII) is a ConfigurationError
that does not show the key. Once configured, the key is scrubbed from any text that came
from the service (errors, HTTP logs): see `dims._errors.scrub`.
"""

from __future__ import annotations

import ipaddress
import os
import warnings
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import attrs
import httpx

from dims_client import Client

from .. import _codehost as codehost
from .. import _defaults as defaults
from .. import _spec as spec
from .._errors import ConfigurationError
from .._profiles import Profile, load_profile
from .._secrets import add_secret, protect_generated_models, scrub_http_logs
from ._transport import ResponseLimits, RetryPolicy, RetryTransport, with_refusal_hints

#: The embedded sandbox's default address (`dims sandbox`).
DEFAULT_BASE_URL = "http://127.0.0.1:8765"
DEFAULT_API_KEY_HEADER = defaults.API_KEY_HEADER  # from openapi.yaml's securitySchemes
DEFAULT_TENANT_HEADER = defaults.TENANT_HEADER
DEFAULT_TIMEOUT = httpx.Timeout(defaults.TIMEOUT_S, connect=10.0)

#: The first segment of every path of the API (`/v1`, `/v2`: openapi.yaml's paths), which
#: the generated client adds to the base URL itself.
VERSION_PREFIXES = frozenset("/" + path.split("/")[1] for path in spec.document()["paths"])

ENV_BASE_URL = "DIMS_BASE_URL"
ENV_API_KEY = "DIMS_API_KEY"
ENV_TENANT_ID = "DIMS_TENANT_ID"


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_NAMES = {"\r": "a carriage return", "\n": "a line feed", "\t": "a tab", " ": "a space"}
_SURROUNDING = " \t\r\n"


def clean_credential(value: str | None, what: str) -> str | None:
    """`value` without surrounding whitespace (with a warning), or None when unset.

    `what` names the setting in messages ("the API key (DIMS_API_KEY / --api-key)"); the
    value itself is never shown.
    """
    if not value:
        return None
    stripped = value.strip(_SURROUNDING)
    if not stripped:
        raise ConfigurationError(f"{what} is blank (only whitespace)")
    if stripped != value:
        warnings.warn(
            f"{what} had leading or trailing whitespace (a key file with a final newline or "
            "Windows line endings?); it was stripped",
            stacklevel=2,
        )
    check_credential(stripped, what)
    return stripped


def check_credential(value: str, what: str) -> None:
    """A header value that is a token: printable ASCII without spaces, or an error."""
    for position, char in enumerate(value, start=1):
        if not "!" <= char <= "~":
            kind = _NAMES.get(char) or (
                "a control character" if char.isascii() else "a non-ASCII character"
            )
            raise ConfigurationError(
                f"{what} contains {kind} at position {position}; expected printable ASCII "
                "without spaces (the value is not shown)"
            )


KEY_SETTING = "the API key (DIMS_API_KEY / --api-key)"
TENANT_SETTING = "the tenant id (DIMS_TENANT_ID / --tenant-id)"
#: Where a key given as an argument came from, as a 401's message names it.
KEY_ARGUMENT = "--api-key or api_key="


def _refusal_hints(key_from: str | None, tenant_id: str | None) -> dict[int, str]:
    """What a 401 and a 403 mean for requests carrying this key and tenant: whether a key
    was sent at all, and which setting gave it (`key_from`: None when none was sent). A
    missing key and a wrong one call for different fixes; the key itself is never shown."""
    if key_from is None:
        missing = f"no API key was sent: set {ENV_API_KEY} or pass --api-key"
        return {401: missing, 403: missing}
    key = f"the API key sent, from {key_from},"
    refused = f"{key} was refused: check it, or give another with {ENV_API_KEY} or --api-key"
    if tenant_id:
        forbidden = (
            f"{key} has no access to tenant {tenant_id!r}, from {ENV_TENANT_ID} or --tenant-id: "
            "check the tenant id, or use a key of that workspace"
        )
    else:
        forbidden = f"{key} has no access to this; use a key that has"
    return {401: refused, 403: forbidden}


class ApiKeyAuth(httpx.Auth):
    """Adds the key and tenant headers to each request; never shows the key."""

    def __init__(
        self,
        api_key: str | None,
        tenant_id: str | None = None,
        *,
        api_key_header: str = DEFAULT_API_KEY_HEADER,
        tenant_header: str = DEFAULT_TENANT_HEADER,
        allow_insecure_http: bool = False,
        key_from: str | None = None,
    ) -> None:
        """`key_from` names the setting the key came from (`DIMS_API_KEY`, `--api-key`), for
        the message of a 401 or 403; it defaults to naming both."""
        if api_key:
            add_secret(api_key)  # scrubbed from text the service sends, even if malformed
            check_credential(api_key, KEY_SETTING)
        if tenant_id:
            check_credential(tenant_id, TENANT_SETTING)
        self._api_key = api_key
        self._tenant_id = tenant_id
        self._api_key_header = api_key_header
        self._tenant_header = tenant_header
        self._allow_insecure_http = allow_insecure_http
        sent_from = (key_from or f"{ENV_API_KEY} or --api-key") if api_key else None
        self._refusal_hints = _refusal_hints(sent_from, tenant_id)

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return f"ApiKeyAuth(api_key=<{key}>, tenant_id={self._tenant_id!r})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._api_key:
            check_key_transport(request.url, self._allow_insecure_http)
            request.headers[self._api_key_header] = self._api_key
        if self._tenant_id:
            request.headers[self._tenant_header] = self._tenant_id
        with_refusal_hints(request, self._refusal_hints)
        yield request


def check_key_transport(url: httpx.URL, allow_insecure_http: bool) -> None:
    """Refuse to send a key in clear text anywhere but this machine."""
    if url.scheme == "http" and not is_loopback(url.host) and not allow_insecure_http:
        raise ConfigurationError(
            f"refusing to send the API key over plain http to {url.host}: use https, "
            "or pass --allow-insecure-http (allow_insecure_http=True) if you accept the risk"
        )


def tenant_ids(given: list[str] | None = None) -> list[str]:
    """The workspaces to export: `given` (each may be a comma-separated list), else
    `DIMS_TENANT_ID` (one id or a comma-separated list); [] when neither names one.

    Order is kept and repeats dropped; an empty item (`A,,B`) is an error.
    """
    texts = given or ([os.environ[ENV_TENANT_ID]] if os.environ.get(ENV_TENANT_ID) else [])
    found: list[str] = []
    for text in texts:
        for item in text.split(","):
            tenant = clean_credential(item, TENANT_SETTING) if item.strip() else None
            if tenant is None:
                raise ConfigurationError(
                    f"{TENANT_SETTING} has an empty workspace in {text!r}; give ids separated "
                    "by commas (A,B) or repeat --tenant-id"
                )
            if tenant not in found:
                found.append(tenant)
    return found


#: Where a setting came from, as `dims config` shows it: an argument or flag (its name), a
#: variable, a profile, or dims' default.
Origins = Mapping[str, str]


@dataclass(frozen=True)
class Given:
    """What the caller passed, before variables and the profile are consulted: flags for
    the CLI, arguments for the SDK (`flag` names the kind in origins: "flag --base-url",
    "argument base_url"). None means not given."""

    base_url: str | None = None
    api_key: str | None = None
    tenants: tuple[str, ...] = ()
    code_host: str | None = None
    api_key_header: str | None = None
    tenant_header: str | None = None
    allow_insecure_http: bool = False
    flag: bool = False

    def origin(self, name: str) -> str:
        return f"flag --{name.replace('_', '-')}" if self.flag else f"argument {name}"

    def __repr__(self) -> str:  # the key is never shown
        key = "set" if self.api_key else "unset"
        return f"Given(base_url={self.base_url!r}, api_key=<{key}>, tenants={self.tenants!r})"


@dataclass(frozen=True)
class Settings:
    """Connection settings resolved once (flag or argument, then `DIMS_*`, then the
    profile, then the default) and checked: every layer below is handed this value and
    reads no variable or file again. The key is kept out of the repr.

    `base_url` is None only where no default applies (`dims export`, `dims config`) and
    nothing set one: `connect()` refuses that in one line. `origins` says, per setting,
    where its value came from; `tenants` are every workspace to export, `tenant_id` the one
    a single client sends."""

    base_url: str | None = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    tenant_id: str | None = None
    api_key_header: str = DEFAULT_API_KEY_HEADER
    tenant_header: str = DEFAULT_TENANT_HEADER
    allow_insecure_http: bool = False
    #: The repositories path's code-host segment (`codehost` as the spec writes it).
    code_host: str = codehost.DEFAULT
    #: The setting the key came from (`DIMS_API_KEY`, or the argument), for a 401's message.
    api_key_from: str | None = None
    tenants: tuple[str, ...] = ()
    #: The profile these settings read (None: none), and where each setting came from.
    profile: Profile | None = field(default=None, repr=False, compare=False)
    origins: Origins = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def resolve(
        cls,
        base_url: str | None = None,
        api_key: str | None = None,
        tenant_id: str | None = None,
        *,
        code_host: str | None = None,
        api_key_header: str | None = None,
        tenant_header: str | None = None,
        allow_insecure_http: bool = False,
        profile: str | None = None,
    ) -> Settings:
        """One client's settings: arguments first, then `DIMS_*` environment variables,
        then the profile (`profile`, `DIMS_PROFILE` or the config file's `default`), then
        the sandbox default. One workspace at most (`tenant_id`)."""
        if tenant_id is not None and not isinstance(tenant_id, str):
            raise ConfigurationError(
                f"{TENANT_SETTING} must be one id (a str), got {type(tenant_id).__name__}: "
                "for several workspaces use dims.Client(tenant_id=[…]), or "
                "connect() once per workspace"
            )
        given = Given(
            base_url, api_key, (tenant_id,) if tenant_id else (), code_host,
            api_key_header, tenant_header, allow_insecure_http,
        )  # fmt: skip
        settings = resolve_settings(given, load_profile(profile))
        if len(settings.tenants) > 1:
            raise ConfigurationError(
                f"{TENANT_SETTING} names several workspaces; a client takes one (tenant_id=…): "
                "use dims.Client, which takes several, or export them with "
                "`dims export --tenant-id A --tenant-id B`"
            )
        return settings

    def auth(self) -> ApiKeyAuth:
        """The auth flow that sends these settings' key and workspace."""
        return ApiKeyAuth(
            self.api_key,
            self.tenant_id,
            api_key_header=self.api_key_header,
            tenant_header=self.tenant_header,
            allow_insecure_http=self.allow_insecure_http,
            key_from=self.api_key_from,
        )

    def for_workspace(self, tenant: str | None) -> Settings:
        """These settings for one client of one workspace (None: none named)."""
        if tenant is not None:
            check_credential(tenant, TENANT_SETTING)
        return replace(self, tenant_id=tenant)

    def validate(self) -> None:
        if self.base_url is None:
            return
        try:
            url = httpx.URL(self.base_url)
        except httpx.InvalidURL as exc:
            raise ConfigurationError(f"invalid base URL {self.base_url!r}: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ConfigurationError(
                f"invalid base URL {self.base_url!r}: expected http(s)://host[:port], "
                "e.g. http://127.0.0.1:8765"
            )
        # httpx percent-encodes characters no host may contain ("http://[bad", a space)
        # instead of refusing them; such a host would only fail later, as a DNS error.
        if "%" in url.host or (url.port is not None and not 0 < url.port < 65536):
            raise ConfigurationError(
                f"invalid base URL {self.base_url!r}: the host or port is malformed; "
                "expected http(s)://host[:port], e.g. http://127.0.0.1:8765"
            )
        if self.api_key:
            check_credential(self.api_key, KEY_SETTING)
            check_key_transport(url, self.allow_insecure_http)
        if self.tenant_id:
            check_credential(self.tenant_id, TENANT_SETTING)
        codehost.check(self.code_host)


def _first(*candidates: tuple[str | None, str]) -> tuple[str | None, str]:
    """The first candidate (value, origin) whose value is set and not empty (an empty
    `DIMS_*` counts as unset), else (None, "unset")."""
    return next(((v, o) for v, o in candidates if v), (None, "unset"))


def _of(profile: Profile | None, key: str) -> tuple[str | None, str]:
    """A profile's value of `key`, and its origin (`profile us (FILE:LINE)`)."""
    if profile is None:
        return None, "unset"
    value = getattr(profile, key)
    return value, f"{profile.label} ({profile.where(key)})"


def _tenants(given: Given, profile: Profile | None) -> tuple[tuple[str, ...], str]:
    """The workspaces, and where they came from: given, `DIMS_TENANT_ID`, the profile."""
    from_env = os.environ.get(ENV_TENANT_ID)
    if given.tenants:
        return tuple(tenant_ids(list(given.tenants))), given.origin("tenant_id")
    if from_env:
        return tuple(tenant_ids([from_env])), f"env {ENV_TENANT_ID}"
    if profile is not None and profile.workspaces:
        _, origin = _of(profile, "workspaces")
        return tuple(tenant_ids(list(profile.workspaces))), origin
    return (), "default (none: no workspace header is sent)"


def _key(given: Given, profile: Profile | None) -> tuple[str | None, str | None, str]:
    """The key as given (uncleaned), the setting a 401 names, and its origin. The profile's
    command runs only when neither a flag nor `DIMS_API_KEY` gives the key."""
    if given.api_key:
        return given.api_key, KEY_ARGUMENT, given.origin("api_key")
    if os.environ.get(ENV_API_KEY):
        return os.environ[ENV_API_KEY], ENV_API_KEY, f"env {ENV_API_KEY}"
    if profile is not None:
        key, origin = profile.api_key()
        if key:
            return key, origin, origin
        if origin != "unset":
            return None, None, f"unset ({origin} is not set)"
    return None, None, "unset"


def _code_host(given: Given, profile: Profile | None, url: str | None) -> tuple[str, str]:
    """The code-host segment and its origin; one given empty is refused, not skipped."""
    if given.code_host is not None:
        return given.code_host, given.origin("code_host")
    host, origin = _first(
        (os.environ.get(codehost.ENV_CODE_HOST), f"env {codehost.ENV_CODE_HOST}"),
        _of(profile, "code_host"),
    )
    return (host, origin) if host else codehost.default_for(url)


def resolve_settings(
    given: Given, profile: Profile | None, *, default_base_url: str | None = DEFAULT_BASE_URL
) -> Settings:
    """`given`, then `DIMS_*` variables, then `profile`, then the defaults: the one place
    connection settings are decided (flag > env > profile > default), each setting's origin
    kept. `default_base_url` None: no base URL unless one is set (`dims export`)."""
    url, url_from = _first(
        (given.base_url, given.origin("base_url")),
        (os.environ.get(ENV_BASE_URL), f"env {ENV_BASE_URL}"),
        _of(profile, "base_url"),
        (default_base_url, "default (the sandbox, `dims sandbox`)"),
    )
    url = url.rstrip("/") if url else None
    tenants, tenants_from = _tenants(given, profile)
    key, key_from, key_origin = _key(given, profile)
    add_secret(key or "")  # as given, whitespace and all: a service may echo it back
    host, host_from = _code_host(given, profile, url)
    key_header, key_header_from = _first(
        (given.api_key_header, given.origin("api_key_header")),
        _of(profile, "api_key_header"),
        (DEFAULT_API_KEY_HEADER, "default"),
    )
    tenant_header, tenant_header_from = _first(
        (given.tenant_header, given.origin("tenant_header")),
        _of(profile, "tenant_header"),
        (DEFAULT_TENANT_HEADER, "default"),
    )
    settings = Settings(
        base_url=url,
        api_key=clean_credential(key, KEY_SETTING),
        api_key_from=key_from,
        tenant_id=tenants[0] if len(tenants) == 1 else None,
        tenants=tenants,
        code_host=codehost.check(host, codehost.SETTING),
        api_key_header=key_header or DEFAULT_API_KEY_HEADER,
        tenant_header=tenant_header or DEFAULT_TENANT_HEADER,
        allow_insecure_http=given.allow_insecure_http,
        profile=profile,
        origins=MappingProxyType({
            "base_url": url_from, "workspaces": tenants_from, "api_key": key_origin,
            "code_host": host_from, "api_key_header": key_header_from,
            "tenant_header": tenant_header_from,
            "allow_insecure_http": given.origin("allow_insecure_http")
            if given.allow_insecure_http else "default",
        }),
    )  # fmt: skip
    settings.validate()
    if settings.base_url is None:
        return settings
    root = without_version_prefix(settings.base_url)
    return settings if root == settings.base_url else replace(settings, base_url=root)


def without_version_prefix(url: str) -> str:
    """A valid base URL without the API's version prefix at its end.

    `https://host/v2` is what the service's documentation shows next to its paths, and the
    generated client adds `/v2/deployments` itself: kept, the prefix would make every request
    `/v2/v2/...`, whose 404 blames the identifier. So it is dropped, with one warning."""
    head, _, last = url.rpartition("/")
    if f"/{last}" not in VERSION_PREFIXES or not httpx.URL(url).path.endswith(f"/{last}"):
        return url
    warnings.warn(
        f"the base URL {url!r} ends in /{last}, the API's version prefix, which dims adds to "
        f"every path itself; using {head!r}",
        stacklevel=4,
    )
    return head


@attrs.define
class DimsClient(Client):
    """The generated client, carrying the settings its operations take as arguments.

    The repositories operation has the code host as a path parameter (openapi.yaml); a client
    keeps the one it was connected with, so that every fetch through it names the same
    segment. It keeps its RetryTransport too (the one in its `httpx_args`), since the
    generated client holds those arguments privately and httpx's clients hold their
    transport privately: the progress display and the tests read its retries from here.
    `with_headers` and the like keep both (attrs' `evolve`).
    """

    code_host: str = attrs.field(default=codehost.DEFAULT, kw_only=True)
    transport: RetryTransport | None = attrs.field(default=None, kw_only=True)


def code_host_of(client: Client) -> str:
    """The code-host segment requests through `client` name: its own when `connect()` made
    it, else as `DIMS_CODE_HOST` or the default says."""
    if isinstance(client, DimsClient):
        return client.code_host
    return codehost.resolve()


def connect(
    base_url: str | None = None,
    api_key: str | None = None,
    tenant_id: str | None = None,
    *,
    code_host: str | None = None,
    api_key_header: str | None = None,
    tenant_header: str | None = None,
    allow_insecure_http: bool = False,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    retry: RetryPolicy | None = None,
    limits: ResponseLimits | None = None,
    transport: RetryTransport | None = None,
    raise_errors: bool = True,
    profile: str | None = None,
    settings: Settings | None = None,
) -> DimsClient:
    """The generated client, with a timeout, retries, limits, and the key attached safely.

    Unset arguments come from `DIMS_BASE_URL`, `DIMS_API_KEY`, `DIMS_TENANT_ID` and
    `DIMS_CODE_HOST`, then from the profile (`profile`, `DIMS_PROFILE`, or the config
    file's `default`: see docs/profiles.md); with none of them, the client points at the
    local sandbox (`dims sandbox`) and names the code host `codehost`, as the interface
    spec writes it (the published service's base URLs get `github`). `settings`, already
    resolved (`Settings.resolve`), replaces all of those arguments: nothing is read again.
    `timeout` bounds each connect and read; `limits` bound a whole request (a deadline, body
    sizes; see `ResponseLimits`). A `transport` given brings its own policy and limits.
    An error status raises dims' typed error (`AuthenticationError`, `NotFoundError`, …),
    through the generated operations too; `raise_errors=False` hands back the generated
    client's parsed error bodies instead (`ErrorDetail`, `ValidationErrorBody`).
    One workspace per client (`tenant_id` is one id): `dims.Client`, built on this,
    takes several.
    """
    scrub_http_logs()
    if settings is None:
        settings = Settings.resolve(
            base_url,
            api_key,
            tenant_id,
            code_host=code_host,
            api_key_header=api_key_header,
            tenant_header=tenant_header,
            allow_insecure_http=allow_insecure_http,
            profile=profile,
        )
    if settings.base_url is None:
        raise ConfigurationError(no_base_url(settings.profile))
    auth = settings.auth()
    if not isinstance(timeout, httpx.Timeout):
        timeout = httpx.Timeout(timeout)
    protect_generated_models()  # the models this client returns never show a secret value
    transport = transport or RetryTransport(retry, limits=limits, raise_errors=raise_errors)
    return DimsClient(
        base_url=settings.base_url,
        code_host=settings.code_host,
        timeout=timeout,
        transport=transport,
        httpx_args={"auth": auth, "transport": transport},
    )


def no_base_url(profile: Profile | None) -> str:
    """The one line for settings that name no service: what sets one."""
    where = f"{profile.label} ({profile.file}) has no base_url" if profile else "no profile"
    return (
        f"no base URL is set (no --base-url, no {ENV_BASE_URL}, {where}): give one of them, "
        f"e.g. --base-url {DEFAULT_BASE_URL} for `dims sandbox`, or a profile of "
        "docs/profiles.md"
    )


def retry_transport(client: Client) -> RetryTransport:
    """The RetryTransport a client from `connect()` uses (for its stats)."""
    transport = client.transport if isinstance(client, DimsClient) else None
    if transport is None:
        raise ConfigurationError("this client was not made by dims.connect()")
    return transport
