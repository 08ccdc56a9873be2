"""What `dims` prints: results on stdout, errors and warnings on stderr, one line each.

Results are flushed line by line, so a pipe's reader sees each as it comes (and a reader
that went away is noticed at once, as EPIPE). Errors are scrubbed of secrets on the way out.

Service text is escaped twice over (dims._escape). Each command escapes every field it
formats into a line (`printable`): that is what keeps one record on one line, since only
the command knows where a field ends. Here, the last line of defence: whatever reaches the
terminal has every control, format and separator character escaped but the newlines
between the lines (`printable_lines`), so a field a command forgot can still not drive
the terminal; an error or a warning is one line, its newlines escaped too. JSON stays
JSON: the escapes are JSON's own, so a document reads back to the exact text.

`--quiet` (`be_quiet`) silences what only tells how things go: the progress bar or lines, and
warnings and notices. Errors still print, results still go to stdout, and exit codes are
the same: a script that asks for quiet loses no fact it could act on.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from .._errors import ConfigurationError
from .._escape import printable, printable_lines
from .._progress import LINE_EVERY_S, Progress
from .._secrets import scrub

#: Seconds between progress lines on a stream that is no terminal; a test or a CI log that
#: wants them sooner or later sets this variable.
LINE_EVERY_VARIABLE = "DIMS_PROGRESS_EVERY_S"


class _Voice:
    """Whether `--quiet` was given (one per process, as the command line is)."""

    quiet = False


@contextlib.contextmanager
def quiet_if(quiet: bool) -> Iterator[None]:
    """`--quiet` while a command runs: no progress, no warnings or notices, logs below ERROR
    dropped; as before afterwards (a test runs many commands in one process)."""
    root = logging.getLogger()
    level, before = root.level, _Voice.quiet
    _Voice.quiet = quiet
    if quiet:
        root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        _Voice.quiet = before
        root.setLevel(level)


def progress() -> Progress:
    """The progress of a fetch as this command line shows it: a bar on a terminal, a line
    every few seconds elsewhere (`DIMS_PROGRESS_EVERY_S`, default 5), nothing with --quiet."""
    if _Voice.quiet:
        return Progress(enabled=False)
    return Progress(line_every_s=_line_every_s())


def _line_every_s() -> float:
    text = os.environ.get(LINE_EVERY_VARIABLE, "")
    if not text:
        return LINE_EVERY_S
    try:
        every = float(text)
    except ValueError:
        every = math.nan
    if not (math.isfinite(every) and every > 0):
        raise ConfigurationError(f"{LINE_EVERY_VARIABLE}={text!r}: expected seconds above 0")
    return every


def say(text: str) -> None:
    print(printable_lines(text), flush=True)


def say_document(text: str) -> None:
    """A document in a format that has its own escapes (the Prometheus text format, whose
    label values may hold any character but `\\`, `"` and newline, escaped its way): printed
    as its writer made it, since an escape of another format would make it unreadable."""
    print(text, flush=True)


def say_error(text: str) -> None:
    """One line on stderr; a closed stderr (a dead terminal after SIGHUP) is no reason to fail."""
    with contextlib.suppress(OSError, ValueError):
        print(printable(scrub(text)), file=sys.stderr, flush=True)


def say_if_slow() -> None:
    """Where a C module was not built (no compiler at install), say so once a process, with
    what it costs: the build's own warning shows only under `pip install -v`."""
    from .._compiled import tell_once

    line = tell_once()
    if line is not None:
        say_error(line)


def silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so Python's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def warning_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """`warnings.showwarning` for the command line: the message alone, not the source line,
    on one line; nothing with --quiet."""
    if _Voice.quiet:
        return
    print(f"dims: warning: {printable(str(message))}", file=sys.stderr)
