"""Package exports that import their module on first use.

A package re-exports its public names for users, but importing every module up front
would make `dims --help` or a write that needs no pandas pay for all of them. `exports`
gives a package the module-level `__getattr__` and `__dir__` (PEP 562) that import a
name's home module when the name is first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`; `homes` maps a name to its relative module.

    A name whose home is the module of the same name (`"fetch": ".fetch"`) is that module.
    """

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home, package)
        value = module if module.__name__ == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *homes})

    return getattr_, dir_
