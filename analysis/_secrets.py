"""Keeping secret values out of what dims shows: the service's text, logs, and model reprs.

Text from the service and log records: every secret configured in this process (the API
key, object-store credentials) is remembered (`add_secret`) and replaced by REDACTED
wherever text from the service is shown (`scrub`: error lines, `--debug` tracebacks, the
HTTP stack's log records through `ScrubFilter`), in every escaped form a log line may give
it, because a service may echo the key it rejected.

Model reprs: openapi.yaml marks secret values `format: password` (a deployment's
secrets[].value and a container's env[].value). The generated attrs models print every
field in their repr, and the generator's templates offer no per-field repr without copying
its model template whole, so the repr of each model holding such a field is replaced by one
explicit step, `protect_generated_models()` (which also leaves UNSET fields out of reprs),
taken by `dims.connect()` before it hands out a client (call it yourself to use the
generated client without `connect`); the generated files stay untouched.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from typing import Any

from . import _spec as spec

#: What stands in for a secret value wherever one would otherwise be shown or stored.
REDACTED = "***REDACTED***"

#: Every secret configured in this process (API keys), with the pattern `scrub` finds it by.
_SECRETS: dict[str, re.Pattern[str]] = {}

#: Shorter values are not scrubbed: no real key is that short, and replacing every "k" in a
#: message would make it unreadable.
MIN_SECRET_LENGTH = 8


def add_secret(value: str) -> None:
    """Remember a secret (an API key) so that `scrub` removes it from any text shown later."""
    if len(value) >= MIN_SECRET_LENGTH and value not in _SECRETS:
        pattern = "".join(_any_form(char) for char in value)
        _SECRETS[value] = re.compile(f"(?=({pattern}))")  # a lookahead finds overlaps too


#: In a pattern: no backslash or some, and at least one. Each escaping doubles the
#: backslashes before a character (a backslash shows as two in a repr, four in the repr of
#: that repr), so a secret is found however many times it was escaped.
_ANY_BACKSLASHES, _SOME_BACKSLASHES = r"\\*", r"\\+"
#: The letter of a control character's escape in Python reprs and JSON.
_NAMED_ESCAPES = {"\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f", "\0": "0"}


def _hex(value: int, digits: int) -> str:
    return f"(?i:{value:0{digits}x})"


def _any_form(char: str) -> str:
    """A pattern for `char` as a log line may show it: itself (after backslashes: an escaped
    quote or backslash), or as an escape of its code (repr, JSON, `\\u…` of any encoder) or
    of its UTF-8 bytes (a bytes repr)."""
    code = ord(char)
    codes = [f"u{_hex(code, 4)}" if code < 0x10000 else f"U{_hex(code, 8)}"]
    if code < 0x100:
        codes.append(f"x{_hex(code, 2)}")
    if code > 0x7F:
        utf8 = char.encode("utf-8", "surrogatepass")
        codes.append(_SOME_BACKSLASHES.join(f"x{_hex(byte, 2)}" for byte in utf8))
    if code >= 0x10000:  # JSON writes a surrogate pair
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        codes.append(f"u{_hex(high, 4)}{_SOME_BACKSLASHES}u{_hex(low, 4)}")
    if char in _NAMED_ESCAPES:
        codes.append(_NAMED_ESCAPES[char])
    escaped = f"{_SOME_BACKSLASHES}(?:{'|'.join(codes)})"
    return f"(?:{_ANY_BACKSLASHES}{re.escape(char)}|{escaped})"


def scrub(text: str) -> str:
    """`text` with every known secret replaced by REDACTED, in every form a log line may
    give it (see `_any_form`). Where secrets overlap, or one holds another, all that any of
    them covers goes: no piece of either is left."""
    if not _SECRETS:
        return text
    spans = sorted(
        match.span(1) for pattern in _SECRETS.values() for match in pattern.finditer(text)
    )
    covered: list[list[int]] = []
    for start, stop in spans:
        if covered and start <= covered[-1][1]:
            covered[-1][1] = max(covered[-1][1], stop)
        else:
            covered.append([start, stop])
    parts, at = [], 0
    for start, stop in covered:
        parts += [text[at:start], REDACTED]
        at = stop
    parts.append(text[at:])
    return "".join(parts)


class ScrubFilter(logging.Filter):
    """Rewrites a log record's message and traceback without secrets (a service can echo a
    key in a header that httpcore logs at DEBUG, or in a reason phrase that httpx logs at
    INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRETS:
            message = record.getMessage()
            clean = scrub(message)
            if clean != message:
                record.msg, record.args = clean, None
            if record.exc_info and not record.exc_text:  # the traceback shown with it
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = scrub(record.exc_text)
        return True


#: Loggers of the HTTP stack that print text from the service.
HTTP_LOGGERS = (
    "httpx",
    "httpcore.connection",
    "httpcore.connection_pool",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)


def scrub_http_logs() -> None:
    """Attach one ScrubFilter to each logger in HTTP_LOGGERS (once; idempotent)."""
    for name in HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ScrubFilter) for f in logger.filters):
            logger.addFilter(ScrubFilter())


def _readable_repr(secret_names: tuple[str, ...]) -> Callable[[Any], str]:
    """A repr that shows the fields a record has (not the UNSET ones), secrets masked."""
    from dims_client.types import Unset

    def __repr__(self: Any) -> str:
        parts = []
        for attribute in type(self).__attrs_attrs__:
            value = getattr(self, attribute.name)
            if isinstance(value, Unset) or (
                attribute.name == "additional_properties" and not value
            ):
                continue
            masked = attribute.name in secret_names and isinstance(value, str)
            parts.append(f"{attribute.name}={REDACTED if masked else repr(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    return __repr__


@functools.cache
def protect_generated_models() -> tuple[str, ...]:
    """Give every generated model a readable repr: fields it has, secret values masked.

    Returns the models that hold a secret field.
    """
    import attrs

    import dims_client.models as models  # here: REDACTED alone must stay light to import

    secrets = {
        name: tuple(spec.python_name(n) for n in fields)
        for name, fields in spec.secret_fields().items()
    }
    for name in dir(models):
        model = getattr(models, name)
        if isinstance(model, type) and attrs.has(model):
            model.__repr__ = _readable_repr(secrets.get(name, ()))  # type: ignore[method-assign]
    return tuple(name for name in secrets if hasattr(models, name))
