"""The grammar of `dims`, as git, gh and kubectl users expect it (issue 29, item 4).

`dims` alone prints the help and exits 0 (as gh and kubectl do); an unknown command or option
is one line with a "did you mean" and exit 2; no option may be abbreviated; a usage error in a
command points at that command's help, not the top-level one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import run

from dims._cli import build_parser
from dims.sandbox import fleet_dump_bytes, generate_fleet

DIMS = Path(sys.executable).parent / "dims"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def dims(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DIMS), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("argv", [[], ["--debug"]], ids=["alone", "debug-alone"])
def test_dims_alone_prints_the_help_and_exits_0(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert out.startswith("usage: dims")
    for command in ("demo", "export", "report", "diff", "sql", "sandbox"):
        assert f"    {command} " in out, command


def test_dims_alone_in_a_subprocess():
    done = dims()
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: dims") and "export" in done.stdout


@pytest.mark.parametrize(
    ("typed", "meant"), [("exprot", "export"), ("reprot", "report"), ("sandbx", "sandbox")]
)
def test_an_unknown_command_says_which_one_was_meant(capsys, typed, meant):
    code, out, err = run(capsys, typed)
    assert code == 2 and out == ""
    assert one_line(err) == (
        f"dims: error: unknown command '{typed}'; did you mean '{meant}'? (see `dims --help`)"
    )


def test_a_command_far_from_any_gets_no_guess(capsys):
    code, _, err = run(capsys, "frobnicate")
    assert code == 2
    assert one_line(err) == "dims: error: unknown command 'frobnicate' (see `dims --help`)"


UNKNOWN_OPTIONS = [
    (["export", "--otu", "x"], "export", "--otu x", "did you mean --out?"),
    (["export", "--from-jsn", "f"], "export", "--from-jsn f", "did you mean --from-json?"),
    (["sandbox", "--seeds", "3"], "sandbox", "--seeds 3", "did you mean --seed?"),
    (["diff", "--too", "2025-01-01"], "diff", "--too 2025-01-01", "did you mean --to?"),
]


@pytest.mark.parametrize(("argv", "command", "shown", "hint"), UNKNOWN_OPTIONS)
def test_an_unknown_option_says_which_one_was_meant_and_points_at_the_commands_help(
    capsys, argv, command, shown, hint
):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert one_line(err) == (
        f"dims {command}: error: unrecognized arguments: {shown}; {hint} "
        f"(see `dims {command} --help`)"
    )


ABBREVIATIONS = [
    (["report", "--pri", "p.yaml"], "report", "--prices"),
    (["export", "--js"], "export", "--json"),
    (["sql", "--js", "select 1"], "sql", "--json"),
    (["export", "--tenant", "t"], "export", "--tenant-header or --tenant-id"),
    (["export", "--re"], "export", "--remote-reconciled or --retries"),
]


@pytest.mark.parametrize(("argv", "command", "options"), ABBREVIATIONS)
def test_an_abbreviation_is_refused_naming_every_option_it_could_be(
    capsys, tmp_path, argv, command, options
):
    code, out, err = run(capsys, *argv, "--out", str(tmp_path / "o"))
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"dims {command}: error: unrecognized arguments: {argv[1]}")
    assert line.endswith(f"; did you mean {options}? (see `dims {command} --help`)")


def test_an_abbreviated_option_does_not_run_the_command(capsys, tmp_path):
    """`--ou` once meant `--out` (argparse's default): now nothing is written anywhere."""
    dump = tmp_path / "fleet.json"
    dump.write_bytes(fleet_dump_bytes(generate_fleet(5, seed=1)))
    out = tmp_path / "o"
    code, printed, err = run(capsys, "export", "--from-json", str(dump), "--ou", str(out))
    assert code == 2 and printed == ""
    assert "did you mean --out?" in one_line(err)
    assert not out.exists()


def test_no_parser_of_dims_accepts_abbreviations():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert parser.allow_abbrev is False
    assert {name: p.allow_abbrev for name, p in commands.choices.items()} == dict.fromkeys(
        commands.choices, False
    )


def test_a_bad_value_points_at_the_commands_help(capsys, tmp_path):
    code, _, err = run(capsys, "export", "--page-size", "0", "--out", str(tmp_path))
    assert code == 2
    assert one_line(err).endswith("(see `dims export --help`)")


def test_usage_errors_in_a_subprocess_are_one_line_and_exit_2(tmp_path):
    done = dims("export", "--otu", str(tmp_path / "o"))
    assert done.returncode == 2 and done.stdout == ""
    assert one_line(done.stderr).endswith("did you mean --out? (see `dims export --help`)")
    done = dims("exprot")
    assert done.returncode == 2 and done.stdout == ""
    assert "did you mean 'export'?" in one_line(done.stderr)
