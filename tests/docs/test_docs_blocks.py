"""Every code block of README.md and docs/ runs as written (issue 37 item 5).

One test per page runs the page's blocks in order, in one folder of its own (a copy of
`reader_folder`: what a reader of the docs has in front of them), so a block may use what an
earlier one made (the README's walkthrough: the demo, then its report). Python blocks run in a
fresh interpreter of this venv, shell blocks through `bash -eu` with `.venv/bin` on PATH;
settings files (rules, price sheets) are written where the page names them and read by dims'
own loader. A block marked `<!-- not run: why -->` is skipped and listed at the end of the run
with its reason (tests/docs/conftest.py); a block marked `<!-- sandbox -->` runs against the
sandbox (tests/docs_blocks.py). Nothing is written into the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from docs_blocks import (
    PYTHON,
    SETTINGS,
    SHELL,
    SHOWN,
    Block,
    blocks_in,
    blocks_of,
    every_block,
    pages,
)
from repo import ROOT

import dims
from dims.sandbox import SandboxHandle, run_sandbox

pytestmark = pytest.mark.xdist_group("docs-blocks")

VENV = Path(sys.executable).parent.parent
#: The days of the reader's `./dims-data`: the dates the docs' examples name.
EXPORT_DAYS = ("2025-05-26", "2025-06-02")


#: A settings file's kind (the start of its name) -> dims' loader of it.
def _load_config(path: Path) -> None:
    """Every profile of a config file, each read and checked as `--profile NAME` would."""
    import tomllib

    from dims import _profiles

    names = tomllib.loads(path.read_text(encoding="utf-8")).get("profiles", {})
    assert names, f"{path}: no profile"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(_profiles.ENV_CONFIG, str(path))
        for name in names:
            assert _profiles.load_profile(name) is not None


LOADERS: dict[str, Callable[[Path], Any]] = {
    "rules": dims.load_rules,
    "prices": dims.load_prices,
    "config": _load_config,
}


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _environment(sandbox: SandboxHandle | None) -> dict[str, str]:
    """The reader's shell: `.venv/bin` first on PATH, no DIMS_* of this machine's; the
    sandbox's DIMS_* when the block is marked for it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIMS_")}
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "100"
    if sandbox is not None:
        env |= _sandbox_variables(sandbox)
    return env


def _sandbox_variables(sandbox: SandboxHandle) -> dict[str, str]:
    """Where the sandbox is (no DIMS_TENANT_ID: unscoped, it lists every workspace)."""
    return {
        "DIMS_BASE_URL": sandbox.base_url,
        "DIMS_API_KEY": "docs-test-key",
        "DIMS_CODE_HOST": sandbox.code_host,
    }


def _for_sandbox(text: str, sandbox: SandboxHandle) -> str:
    """The block with every `export DIMS_X=…` assignment given the sandbox's value (the
    workspaces: the sandbox's own)."""
    chosen = _sandbox_variables(sandbox)
    chosen["DIMS_TENANT_ID"] = ",".join(sandbox.fleet.tenant_ids())
    lines = []
    for line in text.splitlines():
        if line.lstrip().startswith("export "):
            words = line.split("#")[0].split()[1:]
            kept = [w for w in words if w.partition("=")[0] not in chosen]
            given = [
                f"{w.partition('=')[0]}={chosen[w.partition('=')[0]]}"
                for w in words
                if w not in kept
            ]
            line = "export " + " ".join([*kept, *given]) if kept or given else line
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def docs_sandbox() -> Iterator[SandboxHandle]:
    """The service the `<!-- sandbox -->` blocks talk to: the demo's fleet (500, seed 0)."""
    with run_sandbox() as handle:
        yield handle


@pytest.fixture(scope="session")
def reader_folder(tmp_path_factory: pytest.TempPathFactory, docs_sandbox: SandboxHandle) -> Path:
    """What a reader of the docs has: `.venv` (this one), the demo's `./dims-demo` (what
    `make demo` leaves), a `./dims-data` exported from the service on the days the examples
    name, and the settings files the pages show (`# rules.yaml`, `# prices.yaml`)."""
    folder = tmp_path_factory.mktemp("reader")
    (folder / ".venv").symlink_to(VENV)
    steps = [([".venv/bin/dims", "demo"], None)]
    export = [".venv/bin/dims", "export", "--snapshot-date"]
    steps += [([*export, day], docs_sandbox) for day in EXPORT_DAYS]
    for argv, service in steps:
        done = _run(argv, folder, _environment(service))
        assert done.returncode == 0, f"{argv}: {done.stderr}"
    for block in every_block():
        if block.lang in SETTINGS and block.file_name:
            (folder / block.file_name).write_text(block.text, encoding="utf-8")
    return folder


def _runnable_pages() -> list[str]:
    return [
        str(page.relative_to(ROOT))
        for page in pages()
        if any(b.lang not in SHOWN and b.not_run is None for b in blocks_of(page))
    ]


@pytest.mark.parametrize("page", _runnable_pages())
def test_every_block_of_the_page_runs(page, reader_folder, docs_sandbox, tmp_path):
    folder = tmp_path / "reader"
    shutil.copytree(reader_folder, folder, symlinks=True)
    scripts = tmp_path / "blocks"  # the Python blocks' files, outside the reader's folder
    scripts.mkdir()
    for block in blocks_of(ROOT / page):
        if block.not_run is None:
            _run_block(block, folder, scripts, docs_sandbox)


def _run_block(block: Block, folder: Path, scripts: Path, sandbox: SandboxHandle) -> None:
    env = _environment(sandbox if block.against_sandbox else None)
    if block.lang in PYTHON:
        script = scripts / f"line{block.line}.py"
        script.write_text(block.text, encoding="utf-8")
        done = _run([str(VENV / "bin" / "python"), str(script)], folder, env)
    elif block.lang in SHELL:
        text = block.commands()
        text = _for_sandbox(text, sandbox) if block.against_sandbox else text
        if block.allowed_exit is not None:
            _run_lines(block, text, folder, env)
            return
        # -e as a reader means it (a failing command stops the block), no pipefail: a reader's
        # shell has none, and `dims metrics | head` closing the pipe early is no failure.
        done = _run(["bash", "-eu", "-c", text], folder, env)
    elif block.lang in SETTINGS:
        _read_settings(block, folder)
        return
    else:
        assert block.lang in SHOWN, f"{block.where}: a ```{block.lang} block: run it, or show it"
        return
    assert done.returncode == 0, (
        f"{block.where} ({block.lang}) failed:\n{block.text}\n{done.stderr}"
    )


def _run_lines(block: Block, text: str, folder: Path, env: dict[str, str]) -> None:
    """Each command line on its own: exit 0, or the one the block allows, and one line of
    error at most (never a traceback)."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    for line in lines:
        done = _run(["bash", "-u", "-c", line], folder, env)
        assert done.returncode in (0, block.allowed_exit), f"{block.where}: {line}\n{done.stderr}"
        assert "Traceback" not in done.stderr, f"{block.where}: {line}\n{done.stderr}"


def _read_settings(block: Block, folder: Path) -> None:
    """A settings file is written as the page names it and read by dims' own loader."""
    name = block.file_name
    assert name, f"{block.where}: a ```{block.lang} block names its file first (`# rules.yaml`)"
    kinds = [kind for kind in LOADERS if name.startswith(kind)]
    assert kinds, f"{block.where}: {name} is no settings file dims reads ({sorted(LOADERS)})"
    path = folder / name
    path.write_text(block.text, encoding="utf-8")
    LOADERS[kinds[0]](path)


def test_every_block_is_run_shown_or_marked_with_a_reason():
    """A block of an unknown language, or a `not run` mark without a reason, is a mistake."""
    known = (*PYTHON, *SHELL, *SETTINGS, *SHOWN)
    blocks = every_block()
    assert [b.where for b in blocks if b.lang not in known] == []
    assert [b.where for b in blocks if b.mark.startswith("not run") and not b.not_run] == []
    assert sum(b.lang in PYTHON for b in blocks if b.not_run is None) >= 4
    assert sum(b.lang in SHELL for b in blocks if b.not_run is None) >= 10


def test_the_collector_reads_marks_and_settings_files(docs_sandbox):
    """The parts the page tests rely on, on a page made up here."""
    first, second, third = blocks_in(
        "<!-- not run: a real cloud -->\n```sh\nexit 1\n```\n\n<!-- sandbox -->\n\n"
        "```sh\nexport DIMS_BASE_URL=https://… OTHER=1  # yours\n```\n"
        "- item\n\n  ```yaml\n  # prices.yaml\n  cpu_core_hour: 1\n  ```\n",
        "made-up.md",
    )
    assert (first.not_run, first.line) == ("a real cloud", 2)
    assert second.against_sandbox and second.not_run is None
    assert (third.file_name, third.text) == ("prices.yaml", "# prices.yaml\ncpu_core_hour: 1\n")
    rewritten = _for_sandbox(second.text, docs_sandbox)
    assert rewritten == f"export OTHER=1 DIMS_BASE_URL={docs_sandbox.base_url}\n"
