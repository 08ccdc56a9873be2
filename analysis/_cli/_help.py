"""`dims help [COMMAND]`: the help of `dims COMMAND --help` (of `dims --help` alone), as git
and gh users type it. A name that is no command is a usage error (exit 2) with a guess."""

from __future__ import annotations

import argparse
import sys

from ._parser import COMMANDS, CommandLine, did_you_mean


def command_name(text: str) -> str:
    if text not in COMMANDS:
        hint = did_you_mean(text, list(COMMANDS), quote=True)
        raise argparse.ArgumentTypeError(f"unknown command {text!r}{hint}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "topic",
        nargs="?",
        type=command_name,
        metavar="COMMAND",
        help=f"the command to explain, one of {', '.join(COMMANDS)} (default: dims itself)",
    )


def run(args: argparse.Namespace) -> int:
    # argparse's own help goes to stdout unescaped: it is dims's text, not the service's
    sys.stdout.write(CommandLine().help_of(args.topic))
    sys.stdout.flush()
    return 0
