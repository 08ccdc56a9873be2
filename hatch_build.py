"""Builds dims' compiled modules (`dims._tables._columnar`, `._unknownkeys`, `._gather`)
at `pip install`, and the parsed copy of openapi.yaml (`dims._spec.PARSED_COPY`).

A wheel (`make wheel`, `pip install <dir>`, `uv build`) builds both in a temporary folder of
its own, compiled afresh every time, and carries them from there: nothing is written into the
source tree, and a `.so` left there by an earlier build is never what a wheel carries. An
editable install (`make venv`, `pip install -e .`) builds them in place, next to their
sources (git-ignored), because the work tree is what it imports. setuptools only compiles
them: it knows the compiler and flags this Python was built with on every platform. Where
they cannot be compiled (no compiler, no Python headers) the install goes on with one
warning line (`dims._compiled.off_line`: what it costs), and dims says the same line once a
process when an export runs without them (pip shows a build's warnings only with `-v`).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _module(root: Path, path: str) -> ModuleType:
    """One of dims' modules loaded from its file (importing the package would need its
    dependencies, which a build environment does not have)."""
    loaded = importlib.util.spec_from_file_location(f"_dims_build_{Path(path).stem}", root / path)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    sys.modules[loaded.name] = module  # its dataclasses look their module up
    try:
        loaded.loader.exec_module(module)
    finally:
        del sys.modules[loaded.name]
    return module


#: analysis/_compiled.py, the C modules' own module (their names, the line when they are off).
COMPILED = _module(Path(__file__).parent, "analysis/_compiled.py")
SOURCES: dict[str, list[str]] = COMPILED.SOURCES


class CompiledModules(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        #: A wheel's own folder for what it builds; None for an editable install (in place).
        self._scratch = None
        if self.target_name == "wheel" and version != "editable":
            self._scratch = Path(tempfile.mkdtemp(prefix="dims-build-"))
        self._parsed_spec(build_data)
        self._compiled_modules(build_data)

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def _parsed_spec(self, build_data: dict[str, Any]) -> None:
        """openapi.yaml parsed once here, as JSON (`dims._spec.PARSED_COPY`), so that dims
        starts without a YAML parser. The format is analysis/_spec.py's own."""
        root = Path(self.root)
        spec = _module(root, "analysis/_spec.py")
        in_place = Path(spec.PARSED_COPY)
        out = in_place if self._scratch is None else self._scratch / in_place.name
        copy = spec.parsed_copy((root / spec.SPEC_FILENAME).read_text(encoding="utf-8"))
        if copy is None:
            out.unlink(missing_ok=True)
            self.app.display_warning("dims: openapi.yaml does not fit JSON; it is read as YAML")
            return
        out.write_text(copy, encoding="utf-8")
        if self._scratch is not None:
            build_data["force_include"][str(out)] = f"dims/{out.name}"  # analysis/ is dims/

    def _compiled_modules(self, build_data: dict[str, Any]) -> None:
        from setuptools import Distribution, Extension
        from setuptools.command.build_ext import build_ext
        from setuptools.errors import BaseError, CCompilerError

        headers = [str(p.relative_to(self.root)) for p in Path(self.root).glob("analysis/*/*.h")]
        modules = [Extension(name, sources, depends=headers) for name, sources in SOURCES.items()]
        # the folder analysis/ is the package dims (pyproject.toml's wheel sources)
        layout = {"name": "dims", "ext_modules": modules, "package_dir": {"dims": "analysis"}}
        command = build_ext(Distribution(layout))
        if self._scratch is None:
            command.inplace = True
        else:  # compiled afresh into the scratch folder: no object file reused, none left
            command.build_lib = str(self._scratch / "lib")
            command.build_temp = str(self._scratch / "temp")
            command.force = True
        command.ensure_finalized()
        try:
            command.run()
        except (CCompilerError, BaseError) as exc:
            reason = str(exc).strip().splitlines()[-1:] or [type(exc).__name__]
            self.app.display_warning(COMPILED.off_line(f"not built at install: {reason[0]}"))
            return
        if self._scratch is not None:
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
            for name in SOURCES:  # built path -> wheel path (analysis/ is dims/)
                built = Path(command.get_ext_fullpath(name))
                inside = built.relative_to(self._scratch / "lib" / "dims")
                build_data["force_include"][str(built)] = f"dims/{inside}"
