"""A saved dump as a source (`dims export --from-json FILE`): the service's output read back
as pages of records, like the fetch's, for the orchestrator to hand on.

- `_reader`: the dump's shapes (an array of records or of pages, one page, NDJSON), read
  whole, in chunks or raw; its docstring says why it reads the way it does.
"""

from __future__ import annotations

from ._reader import MAX_RECORD_BYTES, read_dump

__all__ = ["MAX_RECORD_BYTES", "read_dump"]
