"""The exit codes of `dims`: one table every command follows (docs/cli.md prints it; a test
holds the page to this one and walks it over every command).

The line between 1 and 2 is who must change: 2, the command line itself (an unknown option,
a value of the wrong form, `dims help nosuch`); 1, the world the command met (a dataset, a
date, a deployment or a file that is not there, a service that failed). So an unknown
deployment and an unknown date both exit 1: each is well-formed, and each names something
the data lacks today and may hold tomorrow.
"""

from __future__ import annotations

import enum
import signal


class Exit(enum.IntEnum):
    """Each code `dims` exits with, and what it means (the docstring table below)."""

    DONE = 0
    FAILED = 1
    USAGE = 2
    PARTIAL = 3
    HANGUP = 128 + signal.SIGHUP
    INTERRUPTED = 128 + signal.SIGINT
    BROKEN_PIPE = 128 + signal.SIGPIPE
    TERMINATED = 128 + signal.SIGTERM


#: What each code means, as docs/cli.md's table says it (tests/cli/test_cli_exit_codes.py).
MEANINGS: dict[Exit, str] = {
    Exit.DONE: "done",
    Exit.FAILED: "the command could not do its job, or what it names is not there (a dataset, "
    "a snapshot date, a deployment, a file): one line on stderr says what, where and what to "
    "do; `dims check`: a rule failed",
    Exit.USAGE: "the command line itself is wrong (an unknown command or option, a bad value, "
    "`dims help nosuch`); `dims check`: the rules file cannot be used",
    Exit.PARTIAL: "`dims export --allow-partial`: published, but some workspaces failed; the "
    "summary's first line and the manifest name them",
    Exit.HANGUP: "stopped by SIGHUP (a closed terminal): cleaned up, nothing partial left",
    Exit.INTERRUPTED: "stopped by Ctrl-C: cleaned up, nothing partial left",
    Exit.BROKEN_PIPE: "the reader of the output went away (`dims … | head`): stopped quietly",
    Exit.TERMINATED: "stopped by SIGTERM (Kubernetes stopping a pod): cleaned up, nothing "
    "partial left",
}


def markdown_table() -> str:
    """The table docs/cli.md holds, made from MEANINGS (a `|` in a cell escaped)."""
    cells = {int(code): text.replace("|", "\\|") for code, text in MEANINGS.items()}
    rows = [f"| {code} | {text} |" for code, text in cells.items()]
    return "\n".join(["| exit | meaning |", "|---|---|", *rows])
