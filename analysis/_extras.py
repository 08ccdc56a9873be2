"""The extras of dims (`pip install 'dims[sandbox]'`): whether one is installed.

Why: the default install is the SDK, the export and the reports; what only some users need
(the sandbox's web server) is an extra. A module that needs one asks `require` before it
imports the extra's packages, so that a missing extra is one line that names the command to
run (`MissingExtraError`) rather than `No module named 'uvicorn'`. What each extra holds is
read from dims' own metadata (pyproject.toml's optional-dependencies), never written again.
"""

from __future__ import annotations

import importlib.metadata
import re

from ._errors import MissingExtraError

#: `starlette>=0.40; extra == "sandbox"`: the distribution's name and the extra it is of.
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)[^;]*;.*\bextra\s*==\s*['\"]([^'\"]+)")


def members(extra: str) -> list[str]:
    """The distributions `dims[extra]` adds, from the installed dims' metadata."""
    try:
        requirements = importlib.metadata.requires("dims") or []
    except importlib.metadata.PackageNotFoundError:  # run from a tree never installed
        return []
    found = [_REQUIREMENT.match(line) for line in requirements]
    return [match[1] for match in found if match is not None and match[2] == extra]


def missing(extra: str) -> list[str]:
    """The distributions of `dims[extra]` that are not installed."""
    absent = []
    for name in members(extra):
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            absent.append(name)
    return absent


def require(extra: str, needed_by: str) -> None:
    """Raise MissingExtraError (`<needed_by> needs the <extra> extra: pip install …`) when a
    distribution of `dims[extra]` is not installed."""
    if missing(extra):
        raise MissingExtraError(extra, needed_by)
