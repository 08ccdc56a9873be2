"""What `pip install` builds: a wheel of dims carries its compiled modules and parsed spec.

hatch_build.py compiles the C modules (its SOURCES) at install time; an editable install imports
them from the work tree (tests/tables/test_columnar.py checks they are there), and a wheel
must carry them, else an installed dims silently takes the slower Python paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from repo import ROOT

#: What a wheel is built from (a copy: the build writes its modules next to their sources).
#: .gitignore included: it hides the built modules from the wheel unless named explicitly.
BUILD_INPUTS = ("pyproject.toml", "hatch_build.py", "README.md", "openapi.yaml", ".gitignore")
BUILD_TREES = ("analysis", "generated_client")


def build_wheel(tmp_path: Path, **env: str) -> Path:
    """A wheel built by pip from a copy of the tree (what the build reads), with `env`."""
    source = tmp_path / "src"
    source.mkdir()
    for name in BUILD_INPUTS:
        shutil.copy2(ROOT / name, source / name)
    for tree in BUILD_TREES:
        shutil.copytree(
            ROOT / tree, source / tree, ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), "."],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = tmp_path.glob("dims-*.whl")
    return wheel


def test_a_wheel_carries_the_compiled_modules_and_a_platform_tag(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    assert not wheel.name.endswith("-none-any.whl"), wheel.name  # it holds compiled code
    names = zipfile.ZipFile(wheel).namelist()
    for module in ("_tables/_columnar", "_tables/_unknownkeys", "_tables/_gather"):
        prefix = f"dims/{module}."
        built = [n for n in names if n.startswith(prefix) and n.endswith((".so", ".pyd"))]
        assert built, f"{module}: no compiled module in {wheel.name}"
        assert f"dims/{module}.pyi" in names
    # the parsed spec, next to the spec itself (dims._spec reads both)
    assert {"dims/openapi.parsed.json", "dims/openapi.yaml"} <= set(names)
    # installed, dims puts names of its own into site-packages (issue 37): `dims`, `dims_client`
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"dims", "dims_client"}, tops


def test_without_a_compiler_the_install_goes_on_pure_python(tmp_path: Path) -> None:
    """`CC=false`: nothing compiles, and the wheel is still built, without the modules (the
    Python paths stand in; `make test` fails on such a build, see test_columnar.py)."""
    wheel = build_wheel(tmp_path, CC="false")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith((".so", ".pyd"))]
