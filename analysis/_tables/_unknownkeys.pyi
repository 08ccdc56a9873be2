# The compiled module (_unknownkeys.c); see _typed.UnknownFields for how it is used.
from typing import Any, NewType

Levels = NewType("Levels", object)

def compile(tree: tuple[bool, dict[str, Any]], /) -> Levels: ...
def scan(raw: Any, levels: Levels, /) -> list[tuple[str, int, int, bool]] | None: ...
