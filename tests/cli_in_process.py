"""Running `dims` in-process from a test: exit code, stdout and stderr."""

from __future__ import annotations

import contextlib
import io
import logging
import traceback
import warnings
from dataclasses import dataclass
from typing import Any

from dims._cli import main


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """`dims ARGV` in-process: (exit code, stdout, stderr); argparse's exits included."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@dataclass(frozen=True)
class Ran:
    """One in-process run of `dims`: what a shell would see, and any exception that escaped
    (a traceback the user would have seen, formatted)."""

    argv: tuple[str, ...]
    code: int | str | None
    out: str
    err: str
    escaped: str | None = None


def run_captured(*argv: str) -> Ran:
    """`dims ARGV` in-process without pytest's fixtures (a Hypothesis example runs many):
    stdout and stderr captured, the log records a real run writes to stderr included, each
    warning a real run shows shown every time (not once per process), and an exception that
    escapes `main` kept as the traceback the user would have seen."""
    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    escaped = None
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            warnings.simplefilter("always")  # but what Python's own filters hide:
            for hidden in (DeprecationWarning, PendingDeprecationWarning, ImportWarning):
                warnings.simplefilter("ignore", hidden)
            warnings.simplefilter("ignore", ResourceWarning)  # the collector's, any time
            try:
                code: int | str | None = main(list(argv))
            except SystemExit as exc:
                code = exc.code
            except Exception:  # what a user would see as a traceback
                code, escaped = None, traceback.format_exc()
    finally:
        root.removeHandler(handler)
    return Ran(tuple(argv), code, out.getvalue(), err.getvalue(), escaped)
