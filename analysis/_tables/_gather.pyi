# The compiled module (_gather.c); see analysis/_tables/_gathered.py for how it is used.
# read, read_many and take raise RuntimeError when a rule calls them while a record is read.
from typing import Any

#: (null_count, validity, offsets, data) of a column
Buffers = tuple[int, bytes | None, bytes | None, bytes]

class Gatherer:
    def __init__(
        self,
        kinds: list[str],
        levels: list[tuple[type, list[tuple[Any, ...]]]],
        roots: tuple[int, ...],
        wide: int,
        unknown_col: int,
        type_col: int,
        dumps: Any,
        fallback: type[BaseException],
        unset: Any,
        id_field: str,
        raw_type: type,
        /,
    ) -> None: ...
    def read(
        self, record: Any, deployment_id: str, unknown: dict[str, Any], listed_type: Any, /
    ) -> None: ...
    def read_many(
        self, records: list[Any], start: int, decode: Any, listed_type: Any, tags: Any, /
    ) -> tuple[int, BaseException | None]: ...
    def take(self, table: int, /) -> tuple[int, list[Buffers]]: ...
    def rows(self, table: int, /) -> int: ...
