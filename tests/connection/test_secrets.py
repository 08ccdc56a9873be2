"""Secrets: canary values planted in the sandbox, and the API key, never leave memory.

A canary secret value (in every deployment's secrets) and a canary env value (in sidecar
env entries) are planted in the sandbox, which requires an API key. They are then looked
for, byte for byte, everywhere dims writes or shows something: the output folder after
`dims export` + `dims report` (run with --debug, so logging is at DEBUG), the commands'
stdout and stderr, messages, reprs and tracebacks of errors, reprs of the generated models
of a fetched deployment, and rejected_records. A key is never sent over plain http to a
host other than loopback: that is checked before any request, and with an httpx
MockTransport where traffic to such a host is explicitly allowed (no real host contacted).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import traceback
from datetime import date
from pathlib import Path

import httpx
import pytest

import dims  # noqa: F401  (importing analysis masks secret fields of generated models)
from dims import _fetch as fetch
from dims._cli import main
from dims._connection import (
    ApiKeyAuth,
    RetryPolicy,
    RetryTransport,
    Settings,
    connect,
    retry_transport,
)
from dims._errors import (
    APIConnectionError,
    AuthenticationError,
    ConfigurationError,
    PaginationError,
    ResponseFormatError,
    ServerError,
)
from dims._pages import Page
from dims._secrets import REDACTED, add_secret, scrub, scrub_http_logs
from dims._snapshot import export_snapshot
from dims._tables import RejectedRecordError
from dims.sandbox import Faults, run_sandbox
from dims_client.api.deployments import list_deployments
from dims_client.models import DeploymentPage

CANARY_SECRET = "CANARY-SECRET-d41e7c"
CANARY_ENV = "CANARY-ENV-VALUE-93b0fa"
API_KEY = "dims-key-CANARY-5f2a0e"
WRONG_KEY = "dims-wrong-key-CANARY-77c1d3"
CANARIES = (CANARY_SECRET, CANARY_ENV, API_KEY, WRONG_KEY)
DIMS = Path(sys.executable).parent / "dims"
FAST = RetryPolicy(retries=1, initial_backoff=0.005, max_backoff=0.01, jitter=0.0)


def leaks(text: str | bytes) -> list[str]:
    """The canaries found in `text` (bytes are searched as UTF-8, and as UTF-16 too)."""
    if isinstance(text, str):
        return [c for c in CANARIES if c in text]
    return [
        c
        for c in CANARIES
        if c.encode() in text or c.encode("utf-16-le") in text or c.encode("utf-16-be") in text
    ]


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def described(error: BaseException) -> str:
    """Everything an error shows: message, repr, and the formatted traceback with causes."""
    return "\n".join([str(error), repr(error), *traceback.format_exception(error)])


@pytest.fixture(scope="module")
def canary_sandbox():
    """The sandbox with both canaries planted, a required key, and faults to be logged."""
    with run_sandbox(
        deployments=40,
        seed=21,
        api_key=API_KEY,
        canary_secret=CANARY_SECRET,
        canary_env_value=CANARY_ENV,
        faults=Faults(error_every=7, truncate_every=5),  # retries get logged too
    ) as handle:
        yield handle


@pytest.fixture
def canary_client(canary_sandbox):
    """A dims client of the canary sandbox, holding its key."""
    return connect(
        canary_sandbox.base_url, api_key=API_KEY, retry=RetryPolicy(initial_backoff=0.005)
    )


def test_the_canaries_are_really_served(canary_sandbox, canary_client):
    """Without this, every 'not found' below would prove nothing."""
    records = [r for page in fetch.fetch_deployments(canary_client) for r in page.records]
    served = str(records)
    assert CANARY_SECRET in served and CANARY_ENV in served


def test_cli_export_and_report_at_debug_level_leak_nothing(canary_sandbox, tmp_path):
    """The whole journey through the CLI, key from DIMS_API_KEY, logs at DEBUG."""
    out = tmp_path / "data"
    env = {**os.environ, "DIMS_API_KEY": API_KEY, "DIMS_BASE_URL": canary_sandbox.base_url}
    outputs = []
    for command in (
        ["--debug", "export", "--out", str(out), "--retries", "8"],
        ["--debug", "report", "--out", str(out)],
    ):
        done = subprocess.run(
            [str(DIMS), *command], capture_output=True, env=env, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr.decode()
        outputs += [done.stdout, done.stderr]
    assert b"DEBUG" in outputs[1]  # debug logging was really on
    assert (out / "deployments").is_dir() and (out / "reports").is_dir()
    assert leaks(every_byte(out)) == []
    assert [leaks(output) for output in outputs] == [[], [], [], []]


def test_in_process_debug_logs_leak_nothing(canary_sandbox, canary_client, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    from dims._snapshot import take_snapshot

    take_snapshot(canary_client, tmp_path, snapshot_date=date(2025, 1, 1))
    assert retry_transport(canary_client).stats.retries >= 1  # the retry paths logged something
    assert caplog.records
    assert leaks(caplog.text) == []
    assert leaks(every_byte(tmp_path)) == []


def test_generated_model_reprs_mask_secret_values(canary_sandbox, canary_client):
    page = list_deployments.sync(client=canary_client, limit=100)
    assert isinstance(page, DeploymentPage)
    values = [
        secret.value for deployment in page.resources for secret in (deployment.secrets or [])
    ]
    assert CANARY_SECRET in values  # the model holds the value...
    shown = "\n".join([repr(page), str(page), *map(repr, page.resources)])
    assert leaks(shown) == []  # ...and never shows it
    assert "***" in shown
    assert "Unset object" not in shown  # fields a record lacks are left out, not <Unset …>


def test_errors_never_show_the_key_or_a_canary(canary_sandbox):
    """Every typed error the fetch raises, with a key configured, in message/repr/traceback."""
    errors: list[BaseException] = []
    with run_sandbox(deployments=5, seed=1, api_key=API_KEY) as sb:
        with pytest.raises(AuthenticationError) as info:
            list(fetch.fetch_deployments(connect(sb.base_url, api_key=WRONG_KEY, retry=FAST)))
        errors.append(info.value)
        assert "401" in str(info.value)
    cases = [
        (Faults(error_every=1), ServerError),
        (Faults(truncate_every=1), ResponseFormatError),
        (Faults(reset_every=1), APIConnectionError),
        (Faults(ignore_offset=True), PaginationError),
    ]
    for faults, expected in cases:
        with run_sandbox(deployments=30, seed=1, api_key=API_KEY, faults=faults) as sb:
            client = connect(sb.base_url, api_key=API_KEY, retry=FAST)
            with pytest.raises(expected) as info:
                list(fetch.fetch_deployments(client, page_size=5))
            errors.append(info.value)
    with pytest.raises(APIConnectionError) as info:
        fetch.list_providers(connect("http://127.0.0.1:9", api_key=API_KEY, retry=FAST))
    errors.append(info.value)
    for error in errors:
        assert leaks(described(error)) == [], type(error).__name__


def test_cli_errors_with_debug_tracebacks_never_show_the_key(tmp_path):
    """A wrong key through the CLI: one line without --debug, a traceback with it; the key
    (from the environment) and the sandbox's key appear in neither."""
    with run_sandbox(deployments=5, seed=1, api_key=API_KEY) as sb:
        env = {**os.environ, "DIMS_API_KEY": WRONG_KEY}
        options = ["--out", str(tmp_path / "o"), "--retries", "0"]
        for debug in ([], ["--debug"]):
            done = subprocess.run(
                [str(DIMS), *debug, "export", "--base-url", sb.base_url, *options],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
                check=False,
            )
            assert done.returncode == 1
            assert "401" in done.stderr
            assert ("Traceback" in done.stderr) == bool(debug)
            assert leaks(done.stdout + done.stderr) == []


def test_rejected_records_and_strict_errors_never_hold_secret_values(tmp_path):
    """Broken records around secret values: reasons quote no value, record_json is redacted."""
    base = {"id": "9b2f6a1e-0000-4000-8000-000000000001", "name": "leaky"}
    sidecar_env = {"name": "TOKEN", "value": CANARY_ENV}
    broken = [
        {**base, "secrets": [{"name": 5, "value": CANARY_SECRET}]},
        {
            **base,
            "secrets": [{"name": "s", "value": CANARY_SECRET, "extra": CANARY_SECRET}],
            "id": 7,
        },
        {**base, "secrets": [{"name": "s", "value": [CANARY_SECRET]}]},
        {**base, "secrets": CANARY_SECRET},
        {**base, "secrets": [CANARY_SECRET]},
        {
            **base,
            "source_config": {
                "resource_spec": {"sidecars": [{"name": 1, "env": [sidecar_env]}]},
            },
        },
        {
            **base,
            "source_config": {
                "resource_spec": {"sidecars": [{"env": [{**sidecar_env, "name": False}]}]},
            },
        },
        {
            **base,
            "source_config": {
                "resource_spec": {"init_containers": [{"env": [{"name": "X", "value": 3}]}]},
            },
            "secrets": [{"name": "s", "value": CANARY_SECRET}],
        },
    ]
    result = export_snapshot([Page(broken, source="leaky.json")], tmp_path / "out")
    assert result.rejected == len(broken)
    assert leaks(every_byte(tmp_path / "out")) == []
    for record in broken:
        with pytest.raises(RejectedRecordError) as info:
            export_snapshot([Page([record], source="leaky.json")], tmp_path / "strict", strict=True)
        assert leaks(described(info.value)) == []


def test_key_from_the_environment_never_shows_in_reprs(monkeypatch, canary_sandbox):
    monkeypatch.setenv("DIMS_API_KEY", API_KEY)
    monkeypatch.setenv("DIMS_BASE_URL", canary_sandbox.base_url)
    client = connect()
    assert len(fetch.list_providers(client)) == len(canary_sandbox.fleet.providers)  # the key works
    settings = Settings.resolve()
    assert settings.api_key == API_KEY
    shown = [
        repr(client),
        str(client),
        repr(settings),
        repr(client.get_httpx_client()),
        repr(client._httpx_args),
        repr(retry_transport(client)),
        repr(canary_sandbox),
    ]
    assert [leaks(text) for text in shown] == [[]] * len(shown)


def test_wrong_key_against_the_sandbox_names_neither_key(canary_sandbox):
    client = connect(canary_sandbox.base_url, api_key=WRONG_KEY, retry=FAST)
    with pytest.raises(AuthenticationError) as info:
        fetch.list_providers(client)
    assert info.value.status_code == 401 and "X-Api-Key" in str(info.value)
    assert leaks(described(info.value)) == []


# --- never over plain http to another host -----------------------------------------------------


def recording_transport(seen: list[httpx.Request]) -> RetryTransport:
    """A MockTransport inside the real RetryTransport: requests are recorded, none sent."""

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=[])

    return RetryTransport(FAST, sync_transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(
    "base_url", ["http://deployments.example.com", "http://10.0.0.8:8080", "http://[2001:db8::1]"]
)
def test_plain_http_to_another_host_is_refused_before_any_request(base_url, monkeypatch):
    seen: list[httpx.Request] = []
    with pytest.raises(ConfigurationError, match="refusing to send the API key over plain http"):
        connect(base_url, api_key=API_KEY, transport=recording_transport(seen))
    monkeypatch.setenv("DIMS_API_KEY", API_KEY)
    monkeypatch.setenv("DIMS_BASE_URL", base_url)
    with pytest.raises(ConfigurationError, match="--allow-insecure-http"):
        connect(transport=recording_transport(seen))
    assert seen == []


def test_the_cli_refuses_plain_http_to_another_host(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DIMS_API_KEY", API_KEY)
    code = main(["export", "--base-url", "http://deployments.example.com", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "plain http" in err and len(err.strip().splitlines()) == 1
    assert leaks(err) == []


def test_the_auth_flow_itself_refuses_a_plain_http_request_to_another_host():
    """Defence in depth: even a request built by hand never carries the key there."""
    seen: list[httpx.Request] = []
    auth = ApiKeyAuth(API_KEY)
    with httpx.Client(auth=auth, transport=recording_transport(seen)) as http:
        with pytest.raises(ConfigurationError, match="plain http"):
            http.get("http://deployments.example.com/v2/auth/providers")
        http.get("http://127.0.0.1:1/v2/auth/providers")  # loopback: allowed
        http.get("https://deployments.example.com/v2/auth/providers")  # https: allowed
    assert [str(r.url.host) for r in seen] == ["127.0.0.1", "deployments.example.com"]
    assert all(r.headers["X-Api-Key"] == API_KEY for r in seen)
    assert leaks(repr(auth)) == []


def test_allow_insecure_http_sends_the_key_only_when_asked():
    """With the explicit opt-in the key goes over http (to a mock: no host is contacted)."""
    seen: list[httpx.Request] = []
    client = connect(
        "http://deployments.example.com",
        api_key=API_KEY,
        tenant_id="tenant-7",
        allow_insecure_http=True,
        transport=recording_transport(seen),
    )
    assert fetch.list_providers(client) == []
    (request,) = seen
    assert (request.url.scheme, request.url.host) == ("http", "deployments.example.com")
    assert request.headers["X-Api-Key"] == API_KEY
    assert request.headers["X-Tenant-Id"] == "tenant-7"


def test_a_redirect_is_not_followed_so_the_key_stays_with_the_first_host():
    """An https service redirecting to plain http elsewhere does not get the key sent on."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(307, headers={"Location": "http://elsewhere.example.net/v2/x"})

    client = connect(
        "https://deployments.example.com",
        api_key=API_KEY,
        transport=RetryTransport(FAST, sync_transport=httpx.MockTransport(handler)),
    )
    with pytest.raises(Exception) as info:
        fetch.list_providers(client)
    assert [r.url.host for r in seen] == ["deployments.example.com"]
    assert leaks(described(info.value)) == []


# --- the key checked before use (issue 13, row 9) ------------------------------------------------


@pytest.mark.parametrize(
    "padded",
    [API_KEY + "\r", API_KEY + "\r\n", API_KEY + "\n", " " + API_KEY, "\t" + API_KEY + " "],
    ids=["CR", "CRLF", "LF", "leading-space", "tab-and-space"],
)
def test_whitespace_around_the_key_is_stripped_with_a_warning(padded, monkeypatch):
    """A key file with a final newline or Windows line endings: the key works, a warning
    says what was done, and neither shows the key (h11 used to print it in its error)."""
    monkeypatch.setenv("DIMS_API_KEY", padded)
    with pytest.warns(UserWarning, match="leading or trailing whitespace") as warned:
        settings = Settings.resolve("http://127.0.0.1:1")
    assert settings.api_key == API_KEY
    assert leaks(" ".join(str(w.message) for w in warned)) == []


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("dims-key\rCANARY-5f2a0e", "a carriage return at position 9"),
        ("dims-key CANARY-5f2a0e", "a space at position 9"),
        ("dims-key\x00CANARY-5f2a0e", "a control character"),
        ("dims-key-CANARY-5f2a0é", "a non-ASCII character"),
        ("dims-key\nCANARY-5f2a0e", "a line feed"),
    ],
    ids=["CR", "space", "NUL", "non-ASCII", "LF"],
)
def test_a_malformed_key_is_refused_without_showing_it(key, kind):
    with pytest.raises(ConfigurationError, match=kind) as info:
        connect("http://127.0.0.1:1", api_key=key)
    assert "the API key" in str(info.value)
    assert "CANARY" not in described(info.value)
    with pytest.raises(ConfigurationError):
        ApiKeyAuth(key)  # the auth flow refuses it too, whoever builds it


def test_a_blank_key_is_an_error_not_an_anonymous_request():
    with pytest.raises(ConfigurationError, match=r"the API key .* is blank"):
        connect("http://127.0.0.1:1", api_key=" \r\n")


def test_the_cli_strips_a_crlf_key_and_refuses_an_inner_cr(tmp_path):
    """Through `dims export` with the key in DIMS_API_KEY: CRLF works with one warning
    line; a CR inside the key is one error line; neither output shows the key."""
    with run_sandbox(deployments=5, seed=3, api_key=API_KEY) as plain:
        env = {**os.environ, "DIMS_BASE_URL": plain.base_url}
        outputs = [export_with_key(tmp_path, env, key) for key in (API_KEY + "\r\n", "k\rK")]
    for done, code in zip(outputs, [0, 1], strict=True):
        assert done.returncode == code, done.stderr
        (line,) = done.stderr.strip().splitlines()
        expected = "dims: warning: the API key" if code == 0 else "dims export: error: the API"
        assert line.startswith(expected), line
        assert leaks(done.stdout + done.stderr) == [] and "CANARY" not in done.stderr


def export_with_key(tmp_path: Path, env: dict, key: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(DIMS), "export", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env={**env, "DIMS_API_KEY": key},
        timeout=120,
    )


def test_a_wrong_key_through_the_generated_client_is_a_typed_error_not_an_error_body():
    """Issue 16: `list_deployments.sync` with a wrong key used to hand back an ErrorDetail,
    which then failed as `'ErrorDetail' object has no attribute 'resources'`."""
    from dims_client.api.deployments import list_deployments

    with run_sandbox(deployments=5, seed=1, api_key=API_KEY) as sb:
        client = connect(sb.base_url, api_key="sk-wrong-but-long-enough")
        with pytest.raises(AuthenticationError, match="HTTP 401") as info:
            list_deployments.sync(client=client, limit=5)
    assert "\n" not in str(info.value) and "sk-wrong-but-long-enough" not in str(info.value)


# --- issue 27 item 10: every form a secret takes, and secrets within secrets --------------------


def _forms(secret: str) -> list[str]:
    """`secret` as log lines and messages show it: as is, in reprs of text and of bytes, in
    JSON, and each of those escaped once more (the repr of an exception quoting a repr)."""
    once = [
        secret,
        repr(secret),
        repr(secret.encode()),
        repr(bytearray(secret.encode())),
        repr([(b"x-rejected-key", secret.encode())]),  # httpcore's header log line
        json.dumps(secret),
        json.dumps(secret, ensure_ascii=False),
    ]
    return [*once, *map(repr, once), *map(json.dumps, once)]


#: Secrets whose every form differs from the plain text; each is made of zqS pieces.
ESCAPED_SECRETS = [
    "zqS1\\zqS2\\\\zqS3",
    "zqS1'zqS2\"zqS3",
    "zqS1\\'zqS2\\\"zqS3",
    "zqS1\\xffzqS2\\u00e9zqS3",
    "zqS1\u00e9zqS2\U0001f600zqS3",  # non-ASCII (a key cannot be, but any secret may)
    "zqS1\r\nzqS2\tzqS3",
]


def _pieces(text: str, prefix: str) -> list[str]:
    return [f"{prefix}{n}" for n in range(10) if f"{prefix}{n}" in text]


@pytest.mark.parametrize("secret", ESCAPED_SECRETS)
def test_every_escaped_form_of_a_secret_is_scrubbed(secret):
    add_secret(secret)
    for form in _forms(secret):
        clean = scrub(f"before {form} after")
        assert REDACTED in clean and not _pieces(clean, "zqS"), (form, clean)
        assert clean.startswith("before ") and clean.endswith(" after")


def _upper_hex_forms(secret: str) -> list[str]:
    """`secret` as encoders that write hex in upper case give it: `\\u00C9` (JSON from Java,
    .NET, …, for every character or the non-ASCII ones), `\\xC9` (one byte of Latin-1) and
    `\\xC3\\x89` (its UTF-8 bytes), once and escaped once more."""

    def escaped(char: str, how: str) -> str:
        code = ord(char)
        if how == "all-u":
            return f"\\u{code:04X}"
        if code < 0x80:
            return char
        if how == "u":
            return f"\\u{code:04X}"
        if how == "x":
            return f"\\x{code:02X}"
        return "".join(f"\\x{byte:02X}" for byte in char.encode())

    once = ["".join(escaped(c, how) for c in secret) for how in ("all-u", "u", "x", "utf8")]
    assert all(form != form.lower() for form in once)  # hex digits in upper case, each
    return [*once, *(form.replace("\\", "\\\\") for form in once)]


def test_a_secret_written_with_upper_case_hex_escapes_is_scrubbed():
    secret = "zqe1\u00c9zqe2\u00e9zqe3"  # É and é; an ASCII key is the first form's case
    add_secret(secret)
    for form in _upper_hex_forms(secret):
        assert scrub(f"before {form} after") == f"before {REDACTED} after", form


@pytest.mark.parametrize("outer_first", [True, False])
def test_a_secret_within_another_leaves_no_piece_of_either(outer_first):
    tag = "zqA" if outer_first else "zqB"
    inner = f"{tag}1\\{tag}2"
    outer = f"{tag}0-{inner}-{tag}3"
    for secret in (outer, inner) if outer_first else (inner, outer):
        add_secret(secret)
    texts = [outer, inner, f"{inner}{outer}{inner}", f"{outer}{outer}"]
    for text in texts:
        for form in _forms(text):
            clean = scrub(f"<{form}>")
            assert REDACTED in clean and not _pieces(clean, tag), (form, clean)


def test_overlapping_secrets_leave_no_piece_of_either():
    first, second = "zqC1-zqC2", "zqC2-zqC3"  # the end of one is the start of the other
    add_secret(first)
    add_secret(second)
    for form in _forms("zqC1-zqC2-zqC3"):
        clean = scrub(form)
        assert REDACTED in clean and not _pieces(clean, "zqC"), (form, clean)


def test_a_logged_traceback_does_not_show_a_secret(caplog):
    """A record logged with its exception: the traceback under it is scrubbed too."""
    secret = "zqD1\\zqD2-traceback"
    add_secret(secret)
    scrub_http_logs()
    caplog.set_level(logging.DEBUG)
    try:
        raise ValueError(f"the service rejected {secret!r}")
    except ValueError:
        logging.getLogger("httpx").debug("a request failed", exc_info=True)
    assert "a request failed" in caplog.text and "ValueError" in caplog.text
    assert "REDACTED" in caplog.text and not _pieces(caplog.text, "zqD"), caplog.text


def test_a_store_error_cut_at_its_limit_leaves_no_piece_of_a_credential():
    """An object store's message is cut to 200 characters: a credential it quotes across
    the cut is replaced before, so no piece of it is shown."""
    from dims._storage import _remote as remote

    secret = "zqE1/zqE2+zqE3-store-credential"
    add_secret(secret)
    for at in range(150, 200, 5):  # the cut at 199 falls before, within and after it
        reason = remote._reason(OSError("x" * at + f" signature of {secret} did not match"))
        assert not _pieces(reason, "zqE") and len(reason) <= 200, reason
