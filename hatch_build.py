"""Builds dims' compiled modules (`analysis.tables.columnar`, `.unknownkeys`) at `pip install`.

They are built in place (next to their sources, git-ignored), so that an editable install
imports them from the work tree and a wheel carries them. setuptools only compiles them:
it knows the compiler and flags this Python was built with on every platform. Where they
cannot be compiled (no compiler, no Python headers) the install goes on with a warning:
dims then takes its Python paths, slower, and the wheel is pure Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCES = {
    "analysis.tables.columnar": ["analysis/tables/columnar.c"],
    "analysis.tables.unknownkeys": ["analysis/tables/unknownkeys.c"],
}


class CompiledModules(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        from setuptools import Distribution, Extension
        from setuptools.command.build_ext import build_ext
        from setuptools.errors import BaseError, CCompilerError

        modules = [Extension(name, sources) for name, sources in SOURCES.items()]
        command = build_ext(Distribution({"name": "dims", "ext_modules": modules}))
        command.inplace = True
        command.ensure_finalized()
        try:
            command.run()
        except (CCompilerError, BaseError) as exc:
            self.app.display_warning(
                f"dims: the C modules were not built ({exc}); dims will use its slower "
                "Python paths. Install a C compiler and Python's headers, then reinstall."
            )
            return
        if self.target_name == "wheel" and version != "editable":
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            for name in SOURCES:  # git-ignored, so named explicitly: built path -> wheel path
                built = Path(command.get_ext_fullpath(name))
                build_data["force_include"][str(built)] = str(built.relative_to(self.root))
