"""`dims`: the command line. Every command calls the same public functions as notebooks.

Inside: `_main` runs `dims` (errors as one line, signals, exit codes); `_parser` holds the
table of commands and builds the parser; each command is a module (`_export`, `_report`,
...: its options, `add_arguments`, and what it runs, `run`), imported only when chosen;
`_options` holds the options several commands share, `_output` what they print.
"""

from __future__ import annotations

from ._main import main
from ._parser import build_parser

__all__ = ["build_parser", "main"]
