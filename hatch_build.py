"""Builds dims' compiled modules (`dims._tables._columnar`, `._unknownkeys`, `._gather`)
at `pip install`, and the parsed copy of openapi.yaml (`dims._spec.PARSED_COPY`).

They are built in place (next to their sources, git-ignored), so that an editable install
imports them from the work tree and a wheel carries them. setuptools only compiles them:
it knows the compiler and flags this Python was built with on every platform. Where they
cannot be compiled (no compiler, no Python headers) the install goes on with a warning:
dims then takes its Python paths, slower, and the wheel is pure Python.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCES = {
    "dims._tables._columnar": ["analysis/_tables/_columnar.c"],
    "dims._tables._unknownkeys": ["analysis/_tables/_unknownkeys.c"],
    "dims._tables._gather": ["analysis/_tables/_gather.c"],
}


class CompiledModules(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._parsed_spec(version, build_data)
        self._compiled_modules(version, build_data)

    def _parsed_spec(self, version: str, build_data: dict[str, Any]) -> None:
        """openapi.yaml parsed once here, as JSON (`dims._spec.PARSED_COPY`), so that dims
        starts without a YAML parser. The format is analysis/_spec.py's own, loaded from its
        file (importing the package would need its dependencies)."""
        root = Path(self.root)
        loaded = importlib.util.spec_from_file_location("_dims_spec", root / "analysis/_spec.py")
        assert loaded is not None and loaded.loader is not None
        spec = importlib.util.module_from_spec(loaded)
        sys.modules[loaded.name] = spec  # its dataclasses look their module up
        try:
            loaded.loader.exec_module(spec)
        finally:
            del sys.modules[loaded.name]
        out = Path(spec.PARSED_COPY)
        copy = spec.parsed_copy((root / spec.SPEC_FILENAME).read_text(encoding="utf-8"))
        if copy is None:
            out.unlink(missing_ok=True)
            self.app.display_warning("dims: openapi.yaml does not fit JSON; it is read as YAML")
            return
        out.write_text(copy, encoding="utf-8")
        if self.target_name == "wheel" and version != "editable":
            build_data["force_include"][str(out)] = f"dims/{out.name}"  # analysis/ is dims/

    def _compiled_modules(self, version: str, build_data: dict[str, Any]) -> None:
        from setuptools import Distribution, Extension
        from setuptools.command.build_ext import build_ext
        from setuptools.errors import BaseError, CCompilerError

        headers = [str(p.relative_to(self.root)) for p in Path(self.root).glob("analysis/*/*.h")]
        modules = [Extension(name, sources, depends=headers) for name, sources in SOURCES.items()]
        # the folder analysis/ is the package dims (pyproject.toml's wheel sources)
        layout = {"name": "dims", "ext_modules": modules, "package_dir": {"dims": "analysis"}}
        command = build_ext(Distribution(layout))
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
                inside = built.relative_to(Path(self.root) / "analysis")
                build_data["force_include"][str(built)] = f"dims/{inside}"
