"""Each command's module, as mypy sees it, is a `CommandModule` (`_parser`'s protocol).

Nothing imports this module: mypy reads it (`make lint`), so a command whose `add_arguments`
or `run` drifts from the protocol fails the type check. It stands apart from `_parser`, which
imports no command at all (each is loaded when chosen), and so `help` and `completion`,
which ask the parser, import it without a cycle.
"""

from __future__ import annotations

from . import (
    _catalog,
    _check,
    _completion,
    _config,
    _demo,
    _diff,
    _explain,
    _export,
    _help,
    _history_by,
    _metrics,
    _report,
    _sandbox,
    _sql,
)
from ._parser import CommandModule

_CHECKED: tuple[CommandModule, ...] = (
    _demo,
    _export,
    _report,
    _diff,
    _history_by,
    _check,
    _explain,
    _metrics,
    _sql,
    _catalog,
    _sandbox,
    _help,
    _completion,
    _config,
)
