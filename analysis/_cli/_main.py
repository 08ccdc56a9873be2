"""`dims` itself: errors as one line, signals, exit codes, and the chosen command run.

Errors print as one line (what failed, where, what to do) with a non-zero exit; `--debug`
shows the traceback instead. SIGTERM (Kubernetes stopping a pod, also as PID 1) and SIGHUP
(a closed terminal) stop a command the way Ctrl-C does: one line, nothing partial left,
exit 128 + the signal's number. A closed output pipe (`dims report | head -1`) ends the
command quietly with exit 141, as a Unix tool killed by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence

from .._errors import DatasetError, DimsError, MissingExtraError
from .._secrets import ScrubFilter
from ._exits import Exit
from ._options import missing_dataset, resolve_profile_and_out
from ._output import quiet_if, say_error, silence_stdout, warning_line
from ._parser import CommandLine, command_module

__all__ = ["main"]

#: Signals that stop a command like Ctrl-C (SIGINT already raises KeyboardInterrupt).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _run(args: argparse.Namespace) -> int:
    resolve_profile_and_out(args)  # once, for every command that takes --profile
    try:
        return command_module(args.command).run(args)
    except DatasetError as exc:  # after the command checked its own inputs (a rules file)
        raise missing_dataset(args) or exc from None


class _Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled everywhere exactly as Ctrl-C is (clean-up included)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def _stop_signals_interrupt() -> Iterator[None]:
    """Turn STOP_SIGNALS into `_Stopped` while a command runs (main thread only).

    The first one wins; later ones are ignored so that clean-up can finish (Kubernetes
    sends SIGKILL after its grace period anyway). Without a handler, PID 1 in a container
    would ignore SIGTERM, and anyone else would die without cleaning up.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        raise _Stopped(signum)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _configure_logging(debug: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, ScrubFilter) for f in handler.filters):
            handler.addFilter(ScrubFilter())


#: numpy's OpenBLAS starts a thread per core that spins while idle: dims does no linear
#: algebra, and on few cores the spinning takes CPU from the export's worker and Parquet
#: threads (docs/benchmarks.md). Set before numpy loads; a user's value wins.
_QUIET_BLAS = {"OPENBLAS_NUM_THREADS": "1"}


def _error_line(command: str, exc: DimsError) -> str:
    if isinstance(exc, MissingExtraError):  # `dims demo needs the sandbox extra: pip install …`
        return exc.needed_by(f"dims {command}")
    return f"dims {command}: error: {exc}"


def main(argv: Sequence[str] | None = None) -> int:
    for name, value in _QUIET_BLAS.items():
        os.environ.setdefault(name, value)
    args = CommandLine().parse(sys.argv[1:] if argv is None else argv)
    _configure_logging(args.debug)
    warnings.showwarning = warning_line
    try:
        with _stop_signals_interrupt(), quiet_if(args.quiet):
            return _run(args)
    except _Stopped as stop:
        say_error(f"dims: stopped by {stop}; nothing partial was left behind")
        return 128 + stop.signum
    except KeyboardInterrupt:
        say_error("dims: interrupted; nothing partial was left behind")
        return Exit.INTERRUPTED
    except BrokenPipeError:  # whoever read the output has gone: stop quietly
        silence_stdout()
        return Exit.BROKEN_PIPE
    except DimsError as exc:
        if args.debug:
            raise
        say_error(_error_line(args.command, exc))
        return Exit.FAILED
    except OSError as exc:  # files and folders: say which
        if args.debug:
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        say_error(f"dims {args.command}: error: {exc.strerror or exc}{where}")
        return Exit.FAILED
