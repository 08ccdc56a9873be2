"""What `dims` prints: results on stdout, errors and warnings on stderr, one line each.

Results are flushed line by line, so a pipe's reader sees each as it comes (and a reader
that went away is noticed at once, as EPIPE). Errors are scrubbed of secrets on the way out.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

from ..errors import scrub


def say(text: str) -> None:
    print(text, flush=True)


def say_error(text: str) -> None:
    """One line on stderr; a closed stderr (a dead terminal after SIGHUP) is no reason to fail."""
    with contextlib.suppress(OSError, ValueError):
        print(scrub(text), file=sys.stderr, flush=True)


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
    """`warnings.showwarning` for the command line: the message alone, not the source line."""
    print(f"dims: warning: {message}", file=sys.stderr)
