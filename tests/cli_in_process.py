"""Running `dims` in-process from a test: exit code, stdout and stderr."""

from __future__ import annotations

from typing import Any

from analysis.cli import main


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """`dims ARGV` in-process: (exit code, stdout, stderr); argparse's exits included."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err
