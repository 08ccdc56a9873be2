"""`make test-sanitize`: dims' C modules built with AddressSanitizer and UBSan, and the tests
that drive them run under both, the way msgspec runs its C core's tests.

Why: the C modules read Python objects and fill Arrow buffers by hand. A use-after-free, a
read past a buffer or undefined arithmetic can pass every ordinary test and corrupt data
later; the sanitizers stop the run at the first one and name the line.

How: the modules in dims._compiled.SOURCES (what hatch_build.py builds) are compiled with
`-fsanitize=address,undefined` (and gcov's `--coverage`) into `.venv/sanitized/`.
hatch_build.py builds them in place for the editable install, which this leaves alone;
`tools/sanitized/sitecustomize.py` imports the sanitized ones instead in every Python
process of this run. The run is msgspec's: libasan preloaded (this Python is not built
with it), `PYTHONMALLOC=malloc` (every object goes through ASan's allocator, not pymalloc's
arenas, so a freed object read again is seen), no leak report (CPython leaves objects
behind at exit), UBSan halting at its first report. Then the line coverage of each C file
under these tests is printed (gcov).

    python tools/test_sanitize.py [pytest arguments]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / ".venv" / "sanitized"
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
#: what the run is held to beyond the sanitizers: no compiler warning
WARNINGS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
#: -fno-wrapv: signed overflow undefined again (Python builds with -fwrapv), so UBSan sees it
COMPILE = [*SANITIZE, *WARNINGS, "-Werror", "-fno-wrapv", "-O1", "-g", "-fno-omit-frame-pointer",
           "--coverage"]  # fmt: skip
ENV = {
    "PYTHONMALLOC": "malloc",
    "ASAN_OPTIONS": "detect_leaks=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}


def sources() -> dict[str, list[str]]:
    """The C modules' sources, as hatch_build.py compiles them (dims._compiled.SOURCES)."""
    from dims._compiled import SOURCES

    return SOURCES


def build(modules: dict[str, list[str]]) -> None:
    """The modules compiled afresh into OUT/lib, their objects (and gcov's data) in OUT/build."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    shutil.rmtree(OUT, ignore_errors=True)
    headers = [str(p.relative_to(ROOT)) for p in ROOT.glob("analysis/*/*.h")]
    extensions = [
        Extension(name, files, depends=headers, extra_compile_args=COMPILE,
                  extra_link_args=[*SANITIZE, "--coverage"])
        for name, files in modules.items()
    ]  # fmt: skip
    command = build_ext(Distribution({"name": "dims-sanitized", "ext_modules": extensions}))
    command.build_lib = str(OUT / "lib")
    command.build_temp = str(OUT / "build")
    command.ensure_finalized()
    command.run()


def environment() -> dict[str, str]:
    libasan = subprocess.run(
        ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    paths = [str(ROOT / "tools" / "sanitized"), os.environ.get("PYTHONPATH", "")]
    return {
        **os.environ,
        **ENV,
        "LD_PRELOAD": libasan,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "DIMS_SANITIZED_MODULES": str(OUT / "lib"),
    }


def check_loaded(modules: dict[str, list[str]], env: dict[str, str]) -> None:
    """Every module is imported from the sanitized build (else the run tests the usual one)."""
    code = (
        "import importlib, sys\nfor m in sys.argv[1:]: print(importlib.import_module(m).__file__)"
    )
    files = subprocess.run(
        [sys.executable, "-c", code, *modules], env=env, capture_output=True, text=True,
        check=True, cwd=ROOT,
    ).stdout.split()  # fmt: skip
    wrong = [f for f in files if not f.startswith(str(OUT))]
    if wrong or len(files) != len(modules):
        raise SystemExit(f"test_sanitize: not the sanitized build: {wrong or files}")


def coverage(modules: dict[str, list[str]]) -> None:
    """gcov's line coverage of each C file, from what the test processes wrote at exit."""
    print("C line coverage under these tests (gcov):")
    for files in modules.values():
        for source in files:
            objects = OUT / "build" / Path(source).parent
            report = subprocess.run(
                ["gcov", "-n", "-o", str(objects), source],
                cwd=ROOT, capture_output=True, text=True, check=False,
            ).stdout  # fmt: skip
            found = re.search(rf"File '{re.escape(source)}'\nLines executed:(\S+) of (\d+)", report)
            print(f"  {source}: {found.group(1)} of {found.group(2)} lines" if found
                  else f"  {source}: no coverage data")  # fmt: skip


def main(args: list[str]) -> int:
    modules = sources()
    build(modules)
    env = environment()
    check_loaded(modules, env)
    # --capture=sys: a sanitizer's report goes to file descriptor 2, which pytest's default
    # capture would hold in a file the dying process never shows
    pytest = [sys.executable, "-m", "pytest", "--capture=sys", *args]
    status = subprocess.run(pytest, env=env, cwd=ROOT).returncode
    coverage(modules)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
