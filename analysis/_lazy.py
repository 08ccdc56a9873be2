"""Package exports that import their module on first use.

A package re-exports its public names for users, but importing every module up front
would make `dims --help` or a write that needs no pandas pay for all of them. `exports`
gives a package the module-level `__getattr__` and `__dir__` (PEP 562) that import a
name's home module when the name is first asked for, and its `__all__`.

Each name is written once: in the package's `if TYPE_CHECKING:` block, as
`from ._home import Name as Name`, which is also what type checkers and editors read. The
homes are read from that block (`homes_in`), so the list, the homes and `__all__` cannot
drift apart.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def homes_in(source: str) -> dict[str, tuple[str, str]]:
    """name -> (relative module, attribute) of every import in the `if TYPE_CHECKING:` block."""
    homes: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom) or not statement.level:
                raise TypeError(f"line {statement.lineno}: only `from .x import Name as Name`")
            module = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                name = alias.asname or alias.name
                if name in homes:
                    raise TypeError(f"line {statement.lineno}: {name} is exported twice")
                homes[name] = (module, alias.name)
    return homes


def exports(
    package: str, namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """(`__getattr__`, `__dir__`, `__all__`) for `package`, from its TYPE_CHECKING block.

    `from . import _x as x` exports the module itself.
    """
    homes = homes_in(Path(namespace["__file__"]).read_text(encoding="utf-8"))

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, attribute = home
        if module_name.strip(".") == "":  # `from . import _x as x`: the module itself
            value = importlib.import_module(f"{module_name}{attribute}", package)
        else:
            value = getattr(importlib.import_module(module_name, package), attribute)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(homes)

    return getattr_, dir_, sorted(homes)
