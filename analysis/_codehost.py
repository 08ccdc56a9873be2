"""Which code host the repositories path names: an argument, `DIMS_CODE_HOST`, or the default.

The interface spec writes `/v1/integrations/forge/codehost/{integration_id}/repos`, where
`codehost` stands for the code host of the original path; the published service answers at
`…/forge/github/…`. openapi.yaml makes the segment the operation's `code_host` path
parameter, so the generated client still builds every URL: this module only chooses and
checks the value. It imports nothing heavy, because the CLI checks `--code-host` while
parsing the command line.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from . import _spec as spec
from ._errors import ConfigurationError

__all__ = [
    "DEFAULT",
    "ENV_CODE_HOST",
    "PUBLISHED",
    "PUBLISHED_HOSTS",
    "SELF_HOSTED_PATH",
    "SETTING",
    "check",
    "default_for",
    "is_published",
    "resolve",
]

ENV_CODE_HOST = "DIMS_CODE_HOST"
SETTING = f"the code host ({ENV_CODE_HOST} / --code-host)"
#: The interface spec's literal, which dims sends unless told otherwise.
DEFAULT = spec.code_host_segment().default
#: The published service's segment.
PUBLISHED = spec.code_host_segment().published

_SHOWN = 80
#: The published service's hosts (its US and EU regions; its public documentation).
PUBLISHED_HOSTS = ("api.host.langchain.com", "eu.api.host.langchain.com")
#: The path under which a self-hosted install of the published service serves the API.
SELF_HOSTED_PATH = "/api-host"


def check(value: str, what: str = SETTING) -> str:
    """`value` when it can be the segment, else a one-line ConfigurationError naming `what`.

    A plain path segment only: the generated client would send a `/` as `%2F`, and URL
    normalisation folds `.` and `..` away, so no code host is named that way; a value that
    could only fail at the service is refused before any request.
    """
    if not value:
        raise ConfigurationError(
            f"{what} is empty; give the code host's path segment, e.g. "
            f"{PUBLISHED} (the published service) or {DEFAULT} (the spec)"
        )
    if re.fullmatch(spec.code_host_segment().pattern, value) is None:
        raise ConfigurationError(
            f"{what} {value[:_SHOWN]!r} is not one path segment: expected a letter or digit, "
            "then letters, digits, '.', '_', '~' or '-', at most 64 characters "
            f"(e.g. {PUBLISHED})"
        )
    return value


def resolve(value: str | None = None) -> str:
    """The segment to send: `value`, else `DIMS_CODE_HOST` when set and not empty, else
    DEFAULT; checked either way."""
    if value is not None:
        return check(value)
    from_env = os.environ.get(ENV_CODE_HOST)
    return check(from_env) if from_env else DEFAULT


def is_published(base_url: str | None) -> bool:
    """Whether `base_url` is the published service: one of its regions' hosts, or a
    self-hosted install's API path (`https://dims.example.com/api-host`)."""
    if not base_url:
        return False
    try:
        parts = urlsplit(base_url)
        host = (parts.hostname or "").lower()
    except ValueError:  # a malformed URL (`http://[bad`): refused later, by the URL's check
        return False
    return host in PUBLISHED_HOSTS or parts.path.rstrip("/").endswith(SELF_HOSTED_PATH)


def default_for(base_url: str | None) -> tuple[str, str]:
    """The segment to send when nothing sets one, and why: the published service's
    (`github`) for its base URLs, where the spec's literal would make every repositories
    request answer 404 (0 repositories); the spec's own elsewhere."""
    if is_published(base_url):
        return PUBLISHED, "default (the published service's, from the base URL)"
    return DEFAULT, "default (the interface spec's)"
