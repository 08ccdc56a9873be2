# The compiled module (_columnar.c); see analysis/_tables/_arrays.py for how it is used.
from typing import Any

def columns(
    rows: list[Any], kinds: str, /
) -> list[tuple[int, bytes | None, bytes | None, bytes]] | None: ...
