"""What `pip install` builds: a wheel of dims carries its compiled modules and parsed spec.

hatch_build.py compiles the C modules (dims._compiled.SOURCES) at install time; an editable
install imports them from the work tree (tests/tables/test_columnar.py checks they are there),
and a wheel must carry them, else an installed dims takes the slower Python paths. A wheel
builds them in a folder of its own: the tree it is built from is left as it was, and a `.so`
found there is never what the wheel carries. Without a compiler the build says so in one line,
and so does dims, once a process, when it exports without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from repo import ROOT

from dims._compiled import SLOWER_WITHOUT

#: Each test builds wheels (about 20 s each); on one worker, so the pure wheel is built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]

#: What a wheel is built from (a copy, so that what the build leaves in it can be seen).
#: .gitignore included: it hides the built modules from the wheel unless named explicitly.
BUILD_INPUTS = ("pyproject.toml", "hatch_build.py", "README.md", "openapi.yaml", ".gitignore")
BUILD_TREES = ("analysis", "generated_client")


def copy_tree(tmp_path: Path) -> Path:
    """A copy of what the build reads (no built module in it)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in BUILD_INPUTS:
        shutil.copy2(ROOT / name, source / name)
    for tree in BUILD_TREES:
        shutil.copytree(
            ROOT / tree,
            source / tree,
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "openapi.parsed.json"),
        )
    return source


def build_wheel(tmp_path: Path, source: Path | None = None, **env: str) -> Path:
    """A wheel built by pip from `source` (a fresh copy of the tree by default), with `env`."""
    wheel, _ = build_wheel_saying(tmp_path, source, **env)
    return wheel


def build_wheel_saying(tmp_path: Path, source: Path | None = None, **env: str) -> tuple[Path, str]:
    """The wheel and what the build said (`pip wheel -v`: pip shows a backend's warnings
    only so), into a folder of its own under tmp_path."""
    source = source or copy_tree(tmp_path)
    out = Path(tempfile.mkdtemp(dir=tmp_path, prefix="wheel-"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(out), str(source)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("dims-*.whl")
    return wheel, done.stdout + done.stderr


def built_files(source: Path) -> list[str]:
    """What a build would leave in the tree: compiled modules, objects, the parsed spec."""
    return sorted(
        str(p.relative_to(source))
        for p in source.rglob("*")
        if p.suffix in (".so", ".o", ".pyd") or p.name in ("openapi.parsed.json", "build")
    )


@pytest.fixture(scope="module")
def pure(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel built with `CC=false` (no compiler), and what its build said."""
    return build_wheel_saying(tmp_path_factory.mktemp("pure"), CC="false")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the tree and the wheel built from it (the C modules compiled)."""
    tmp_path = tmp_path_factory.mktemp("compiled")
    source = copy_tree(tmp_path)
    return source, build_wheel(tmp_path, source)


def test_a_wheel_carries_the_compiled_modules_and_a_platform_tag(
    compiled: tuple[Path, Path],
) -> None:
    _, wheel = compiled
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


def test_without_a_compiler_the_install_goes_on_pure_python_saying_so_once(
    pure: tuple[Path, str],
) -> None:
    """`CC=false`: nothing compiles, and the wheel is still built, without the modules (the
    Python paths stand in; `make test` fails on such a build, see test_columnar.py), and the
    build says so in one line, with what it costs."""
    wheel, said = pure
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith((".so", ".pyd"))]
    lines = [line for line in said.splitlines() if "C modules" in line]
    assert len(lines) == 1, lines
    assert f"about {SLOWER_WITHOUT}x as long" in lines[0], lines[0]
    assert "not built at install" in lines[0]


def test_dims_without_its_c_modules_says_so_once_when_it_exports(
    tmp_path: Path, pure: tuple[Path, str]
) -> None:
    """The build's line shows only under `pip install -v`, so dims says it too: the pure wheel
    (built with `CC=false`) unpacked and imported, `dims demo` exports twice (yesterday's
    snapshot and today's) and says the line once, with the cost."""
    wheel, _ = pure
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = (
        "import sys, dims\n"
        "assert dims.__file__.startswith(sys.argv[1]), dims.__file__\n"
        "from dims._cli import main\n"
        "sys.exit(main(sys.argv[2:]))\n"
    )
    argv = ["demo", "--out", str(tmp_path / "demo"), "--deployments", "30", "--roll-out", "9.9.9"]
    env = {k: v for k, v in os.environ.items() if k != "DIMS_NO_C"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(site), *argv],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        env={**env, "PYTHONPATH": str(site)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if "C modules" in line]
    assert len(lines) == 1, done.stderr
    assert f"about {SLOWER_WITHOUT}x as long" in lines[0]
    assert "_columnar, _unknownkeys, _gather not built at install" in lines[0]


def test_a_wheel_build_leaves_the_tree_as_it_was_and_reuses_nothing_built(
    tmp_path: Path, compiled: tuple[Path, Path]
) -> None:
    """Nothing is built into the tree a wheel is built from (`pip install <dir>`), and a
    module left there (by an editable install, or stale) is not what the next wheel carries:
    each is compiled afresh in the build's own folder. (Last in the module: it leaves stale
    modules in the shared copy.)"""
    source, first = compiled
    assert built_files(source) == []
    stale = b"\x7fELF a module from an older build"
    for module in ("_columnar", "_unknownkeys", "_gather"):
        (source / "analysis" / "_tables" / f"{module}.cpython-stale.so").write_bytes(stale)
        carried = [n for n in zipfile.ZipFile(first).namelist() if f"/{module}." in n]
        (so,) = [n for n in carried if n.endswith(".so")]
        (source / "analysis" / so.removeprefix("dims/")).write_bytes(stale)
    second = build_wheel(tmp_path, source)
    with zipfile.ZipFile(second) as archive:
        modules = [n for n in archive.namelist() if n.endswith(".so")]
        assert len(modules) == 3, modules
        for name in modules:
            assert archive.read(name) != stale, name
            assert archive.read(name)[:4] == b"\x7fELF"
    assert all(p.endswith(".so") for p in built_files(source))  # only the stale ones, kept
