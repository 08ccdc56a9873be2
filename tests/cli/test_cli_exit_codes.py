"""One table of exit codes that every command follows (issue 37, items 4 and 6).

`dims._cli._exits` holds the table; docs/cli.md prints it as made from there. Each
command is walked over the rows that apply to it: a command line that must change exits 2,
something it names that the data lacks (a dataset, a date, a deployment, a file) exits 1;
so an unknown deployment and an unknown date give the same code. Done (0) is every other
test's; 3 is tests/cli/test_cli_workspaces.py's, the signals tests/storage/test_signals.py's.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cli_in_process import run
from fleet_math import export_fleet
from repo import ROOT

from dims._cli._exits import MEANINGS, Exit, markdown_table
from dims._cli._parser import COMMANDS
from dims.sandbox import generate_fleet

DAY, UNKNOWN_DAY = "2025-06-01", "1999-01-01"
#: Commands that name nothing a dataset or a service could lack: only their usage can fail.
NOTHING_TO_FIND = {"help", "completion"}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    fleet = generate_fleet(8, seed=6)
    folder = tmp_path_factory.mktemp("exits")
    export_fleet(fleet.deployments, dict(fleet.deployment_types), folder / "data", DAY)
    (folder / "rules.yaml").write_text("budgets:\n  fleet: 1000000000\n", encoding="utf-8")
    (folder / "a-file").write_text("", encoding="utf-8")
    return folder


def not_found(folder: Path, port: int) -> dict[str, list[list[str]]]:
    """For each command, command lines that are well-formed and name what is not there."""
    data, empty = str(folder / "data"), str(folder / "empty")
    rules = str(folder / "rules.yaml")
    return {
        "demo": [["demo", "--out", str(folder / "a-file" / "demo")]],
        "export": [["export", "--from-json", str(folder / "no-such.json"), "--out", empty]],
        "config": [["config", "--profile", "no-such-profile"]],
        "report": [["report", "--out", empty], ["report", "--out", data, "--date", UNKNOWN_DAY]],
        "diff": [["diff", "--out", data, "--from", UNKNOWN_DAY, "--to", DAY]],
        "history": [["history", "--out", data, "--by", "type", "--from", UNKNOWN_DAY]],
        "check": [["check", "--rules", rules, "--out", data, "--date", UNKNOWN_DAY]],
        "explain": [
            ["explain", "no-such-deployment", "--out", data],
            ["explain", "no-such-deployment", "--out", data, "--date", DAY],
            [
                "explain",
                "00000000-0000-4000-8000-000000000000",
                "--out",
                data,
                "--date",
                UNKNOWN_DAY,
            ],
        ],
        "metrics": [["metrics", "--out", data, "--date", UNKNOWN_DAY]],
        "sql": [
            ["sql", "--out", empty, "select 1"],
            ["sql", "--out", data, "select * from nosuch"],
        ],
        "catalog": [["catalog", str(folder / "c.duckdb"), "--out", empty]],
        "sandbox": [["sandbox", "--port", str(port)]],
    }


def usage_errors(command: str) -> list[list[str]]:
    """Command lines of `command` that must change: an unknown option, a mistyped one."""
    lines = [[command, "--no-such-option"], [command, "--ou", "x"]]
    if command == "help":
        lines.append(["help", "nosuch"])
    if command == "completion":
        lines.append(["completion", "tcsh"])
    return lines


def test_docs_hold_the_table_as_the_code_has_it():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert markdown_table() in page
    assert set(MEANINGS) == set(Exit)


def test_every_command_has_its_rows_walked(dataset):
    assert set(not_found(dataset, 0)) == set(COMMANDS) - NOTHING_TO_FIND


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_line_that_must_change_exits_usage(capsys, command):
    for argv in usage_errors(command):
        code, stdout, err = run(capsys, *argv)
        assert (code, stdout) == (Exit.USAGE, ""), (argv, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - NOTHING_TO_FIND))
def test_what_the_data_lacks_exits_failed(capsys, dataset, command):
    with socket.socket() as taken:  # a port that is in use, for `dims sandbox`
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        for argv in not_found(dataset, taken.getsockname()[1])[command]:
            code, _, err = run(capsys, *argv)
            assert code == Exit.FAILED, (argv, code, err)
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)


def test_an_unknown_deployment_and_an_unknown_date_give_the_same_code(capsys, dataset):
    data = str(dataset / "data")
    deployment = run(capsys, "explain", "no-such-deployment", "--out", data)[0]
    day = run(capsys, "report", "--out", data, "--date", UNKNOWN_DAY)[0]
    explained_day = run(capsys, "explain", "x", "--out", data, "--date", UNKNOWN_DAY)[0]
    assert deployment == day == explained_day == Exit.FAILED
