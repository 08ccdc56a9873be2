"""The demo's closing lines name commands that run as printed: what a newcomer types right
after `make demo`. (The README's walkthrough itself runs in tests/docs/test_docs_blocks.py,
with every other block of the docs.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

VENV = Path(sys.executable).parent.parent


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


def test_the_demo_ends_with_commands_that_run_as_printed(after_demo):
    folder, printed = after_demo
    tail = printed[printed.index("next:\n") :].splitlines()[1:]
    commands = [line.split("   #")[0].strip() for line in tail]
    assert commands[0].startswith(".venv/bin/dims sql --out dims-demo ")
    assert any("--roll-out" in command for command in commands)  # before diff needs two days
    for command in commands:
        done = run(command, folder)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
    # what it wrote is under the demo's --out (ignored by the checkout's .gitignore): nothing
    # else in the folder, as `git status` of a checkout would show nothing untracked
    assert sorted(p.name for p in folder.iterdir()) == [".venv", "dims-demo"]
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "dims-demo/" in ignored
