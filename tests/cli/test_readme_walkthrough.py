"""The README's walkthrough runs as written: what a newcomer types right after `make demo`.

The blocks marked `<!-- walkthrough -->` in README.md are run, line by line, by bash in a
temporary folder where `.venv` is this checkout's, after `.venv/bin/dims demo` (what `make
demo` runs). A command that fails, or a block that is no longer there, fails the test; so
does a demo whose closing lines no longer name commands that run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

VENV = Path(sys.executable).parent.parent
MARK = "<!-- walkthrough -->"


def walkthrough_blocks(readme: str) -> list[list[str]]:
    """The command lines of every marked ```sh block (comments and blank lines left out)."""
    blocks = []
    for match in re.finditer(re.escape(MARK) + r"\s*```sh\n(.*?)```", readme, re.S):
        lines = [line.strip() for line in match[1].splitlines()]
        blocks.append([line for line in lines if line and not line.startswith("#")])
    return blocks


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def after_demo(tmp_path: Path) -> tuple[Path, str]:
    """A folder as `make demo` leaves it: `.venv` there, the demo's dataset written."""
    (tmp_path / ".venv").symlink_to(VENV)
    done = run(".venv/bin/dims demo", tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path, done.stdout


def test_the_readme_walkthrough_runs_as_written(after_demo):
    folder, _ = after_demo
    blocks = walkthrough_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks and all(blocks), "the README lost its walkthrough"
    for block in blocks:
        for command in block:
            done = run(command, folder)
            assert done.returncode == 0, f"{command}\n{done.stderr}"
    assert (folder / "dims-demo" / "deployments").is_dir()
    assert not (folder / "dims-data").exists()  # the demo never writes where real data goes


def test_the_demo_ends_with_commands_that_run_as_printed(after_demo):
    folder, printed = after_demo
    tail = printed[printed.index("next:\n") :].splitlines()[1:]
    commands = [line.split("   #")[0].strip() for line in tail]
    assert commands[0].startswith(".venv/bin/dims sql --out dims-demo ")
    assert any("--roll-out" in command for command in commands)  # before diff needs two days
    for command in commands:
        done = run(command, folder)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
