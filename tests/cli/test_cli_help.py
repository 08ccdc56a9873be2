"""The command line explains itself: every option has help and says its default."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from dims._cli import build_parser, main


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_option_has_help_and_names_its_default(name):
    for action in subcommands()[name]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        flag = action.option_strings[0] if action.option_strings else action.dest
        assert action.help, f"dims {name} {flag} has no help"
        shows_default = action.default not in (None, False, argparse.SUPPRESS)
        if shows_default and action.option_strings:
            assert "default" in action.help.lower(), f"dims {name} {flag}: say the default"


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"dims {version('dims')}"


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_works_before_or_after_the_command(tmp_path, where):
    args = ["report", "--out", str(tmp_path / "nothing-here")]
    argv = ["--debug", *args] if where == "before" else [*args, "--debug"]
    done = subprocess.run(
        [sys.executable, "-m", "dims._cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "Traceback (most recent call last)" in done.stderr  # --debug: the traceback


def test_without_debug_the_same_error_is_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "dims._cli", "report", "--out", str(tmp_path / "nothing")],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_busy_port_is_one_line_that_says_what_to_do():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "dims._cli", "sandbox", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"dims sandbox: error: port {port} on 127.0.0.1 is already in use (another dims "
        "sandbox?): choose another with --port, or --port 0 for any free one"
    ]
