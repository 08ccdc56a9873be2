"""`dims completion bash|zsh|fish`: the shell's completion script, made by shtab from the
parser itself (`build_parser`, every command's options defined), so it cannot fall behind a
new command or option: nothing in it is written by hand.

Load it once per shell (bash: `source <(dims completion bash)`; zsh: the script into a folder
of `$fpath` as `_dims`; fish: `dims completion fish > ~/.config/fish/completions/dims.fish`).
"""

from __future__ import annotations

import argparse
import sys

#: The shells dims writes a script for (shtab's names).
SHELLS = ("bash", "zsh", "fish")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to write the script for")


def script(shell: str) -> str:
    """The completion script of `dims` for `shell`."""
    import shtab

    from ._parser import build_parser

    return str(shtab.complete(build_parser(), shell=shell))


def run(args: argparse.Namespace) -> int:
    # the script is dims's own text (the parser's names and help), printed as shtab made it
    sys.stdout.write(script(args.shell))
    sys.stdout.flush()
    return 0
