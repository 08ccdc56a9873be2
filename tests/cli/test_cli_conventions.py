"""What people reach for in a command line (issue 37, item 4): `dims help CMD`, `--quiet`,
shell completion made from the parser, and progress lines in a log.

Run as a user runs them: `.venv/bin/dims` in a subprocess, against the sandbox on loopback
where a command needs a service; the completion scripts checked by the shells themselves.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dims._cli._parser import COMMANDS
from dims.sandbox import run_sandbox

DIMS = Path(sys.executable).parent / "dims"


def dims(*argv: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DIMS), *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


# --- dims help ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_of_a_command_is_its_own_help(name):
    asked, flagged = dims("help", name), dims(name, "--help")
    assert asked.returncode == flagged.returncode == 0, asked.stderr
    assert asked.stdout == flagged.stdout
    assert asked.stdout.startswith(f"usage: dims {name} ")


def test_help_alone_is_the_top_help():
    asked, flagged = dims("help"), dims("--help")
    assert asked.returncode == flagged.returncode == 0
    assert asked.stdout == flagged.stdout
    assert all(name in asked.stdout for name in COMMANDS)


def test_help_of_an_unknown_command_is_a_usage_error_with_a_guess():
    done = dims("help", "exprot")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "dims help: error: argument COMMAND: unknown command 'exprot'; did you mean 'export'? "
        "(see `dims help --help`)"
    ]


# --- --quiet --------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_silences_warnings_and_keeps_the_result(tmp_path, where):
    """The base URL's /v2 is dropped with a warning line; --quiet drops the line, not the
    export or its summary."""
    with run_sandbox(deployments=20, seed=3) as sandbox:
        args = ["export", "--base-url", f"{sandbox.base_url}/v2", "--out", tmp_path / "q"]
        loud = dims(*args[:-1], tmp_path / "loud")
        quiet = dims("--quiet", *args) if where == "before" else dims(*args, "--quiet")
    assert loud.returncode == quiet.returncode == 0, (loud.stderr, quiet.stderr)
    assert "warning" in loud.stderr and "/v2" in loud.stderr
    assert quiet.stderr == ""
    assert quiet.stdout.startswith("wrote snapshot ")
    assert "20 deployments" in quiet.stdout and "20 deployments" in loud.stdout


def test_quiet_still_prints_errors_with_the_same_exit_code(tmp_path):
    loud = dims("report", "--out", tmp_path / "nothing")
    quiet = dims("report", "--out", tmp_path / "nothing", "--quiet")
    assert loud.returncode == quiet.returncode == 1
    assert quiet.stderr == loud.stderr and len(quiet.stderr.splitlines()) == 1
    usage = dims("--quiet", "report", "--otu", "x")
    assert usage.returncode == 2 and "did you mean --out?" in usage.stderr


# --- a long export in a log -----------------------------------------------------------------

PROGRESS_LINE = re.compile(
    r"^dims: (?:[^:]+: )?([\d,]+) deployments, ([\d,]+) pages, ([\d,]+) retries, \d+ s$",
    re.MULTILINE,
)


def slow_export(out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """`dims export` of 60 deployments, 6 to a page, one request in flight, each answered
    after 250 ms (about 3 s in all), with a progress line asked for every 0.2 s."""
    with run_sandbox(deployments=60, seed=5, latency_ms=250) as sandbox:
        done = dims(
            "export", "--base-url", sandbox.base_url, "--out", out, "--page-size", "6",
            "--concurrency", "1", *extra,
            env={"DIMS_PROGRESS_EVERY_S": "0.2"},
        )  # fmt: skip
        return done, len(sandbox.fleet.deployments)


def test_a_piped_export_prints_progress_lines_as_it_goes(tmp_path):
    done, fleet = slow_export(tmp_path / "o")
    assert done.returncode == 0, done.stderr
    counts = [int(m.group(1).replace(",", "")) for m in PROGRESS_LINE.finditer(done.stderr)]
    assert len(counts) >= 2, done.stderr
    assert counts == sorted(counts) and counts[-1] <= fleet
    assert counts[-1] > 0  # lines while it ran, not only before the first page
    assert "\r" not in done.stderr  # a log gets lines, never a bar's redraws


def test_quiet_prints_no_progress_lines(tmp_path):
    done, _ = slow_export(tmp_path / "o", "--quiet")
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_bad_progress_interval_is_one_line(tmp_path):
    done = dims(
        "export", "--from-json", "/dev/null", "--out", tmp_path, env={"DIMS_PROGRESS_EVERY_S": "x"}
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "dims export: error: DIMS_PROGRESS_EVERY_S='x': expected seconds above 0"
    ]


# --- shell completion -----------------------------------------------------------------------


def completion(shell: str, tmp_path: Path) -> Path:
    done = dims("completion", shell)
    assert done.returncode == 0, done.stderr
    script = tmp_path / f"dims.{shell}"
    script.write_text(done.stdout, encoding="utf-8")
    return script


def shell_or_skip(shell: str) -> str:
    found = shutil.which(shell)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{shell} is missing: .ci/run installs it")
        pytest.skip(f"{shell} is not installed here (.ci/run installs it)")
    return found


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_completion_script_parses_in_its_shell(tmp_path, shell):
    script = completion(shell, tmp_path)
    done = subprocess.run(
        [shell_or_skip(shell), "-n", str(script)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    text = script.read_text(encoding="utf-8")
    assert all(name in text for name in COMMANDS)  # made from the parser: every command


BASH_COMPLETES = """
source "$1"
spec=$(complete -p dims) || exit 3
function=${spec##*-F }
function=${function%% *}
shift
COMP_WORDS=(dims "$@")
COMP_CWORD=$#
COMP_LINE="dims $*"
COMP_POINT=${#COMP_LINE}
"$function" dims "${@: -1}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\\n' "${COMPREPLY[@]}"
"""


@pytest.mark.parametrize(
    ("words", "expected"),
    [(["rep"], ["report"]), (["export", "--base"], ["--base-url"]), (["sql", "--qu"], ["--quiet"])],
)
def test_the_bash_script_sourced_completes_commands_and_options(tmp_path, words, expected):
    script = completion("bash", tmp_path)
    done = subprocess.run(
        [shell_or_skip("bash"), "-c", BASH_COMPLETES, "bash", str(script), *words],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected


def test_an_unknown_shell_is_a_usage_error():
    done = dims("completion", "tcsh")
    assert done.returncode == 2 and "invalid choice: 'tcsh'" in done.stderr
