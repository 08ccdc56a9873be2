"""Defaults the command line and the library share.

Kept apart from the modules that use them, and importing nothing heavy, so that `dims
--help` starts without loading httpx, pyarrow or pandas. Facts of the service come from
openapi.yaml (`spec`); the rest are dims' own choices.
"""

from __future__ import annotations

from . import _spec as spec

#: Pages as large as the spec allows: fewer requests for the same fleet.
PAGE_SIZE = spec.page_size_range()[1]
#: Requests in flight per budget (deployment pages; repositories have their own).
CONCURRENCY = 8
#: Seconds a request may wait for the service (per connect or read).
TIMEOUT_S = 30.0
#: Seconds for one request as a whole: every attempt, body and wait between them.
DEADLINE_S = 300.0
#: Largest response body as sent, and once gzip or deflate is undone (MiB).
MAX_BODY_MIB = 256
MAX_DECODED_MIB = 256
#: Retries per request after the first attempt.
RETRIES = 5
MIB = 1024 * 1024
#: The most series one family of `dims metrics` holds (`--max-series`): a scrape stays cheap.
MAX_SERIES = 2000
API_KEY_HEADER, TENANT_HEADER = spec.header_names()
