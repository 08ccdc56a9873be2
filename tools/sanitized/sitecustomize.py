"""`make test-sanitize`: dims' C modules imported from their sanitized build.

tools/test_sanitize.py puts this folder on PYTHONPATH, so every Python process of that run
(pytest, its xdist workers, the export workers and commands the tests start) runs this at
start-up, and `DIMS_SANITIZED_MODULES` names the folder the modules were built into (with
AddressSanitizer and UBSan). Those modules are then imported instead of the ones an
editable install built in place; the Python code is the work tree's own. Any process
without that variable is untouched.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType


class SanitizedModules(importlib.abc.MetaPathFinder):
    """Finds the built modules under `folder` (laid out as packages) before anyone else."""

    def __init__(self, folder: Path) -> None:
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        self.files = {
            ".".join(path.relative_to(folder).parts)[: -len(suffix)]: path
            for path in folder.rglob(f"*{suffix}")
        }

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(name)
        return None if file is None else importlib.util.spec_from_file_location(name, file)


_folder = os.environ.get("DIMS_SANITIZED_MODULES")
if _folder:
    sys.meta_path.insert(0, SanitizedModules(Path(_folder)))
