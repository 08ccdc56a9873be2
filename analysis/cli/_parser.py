"""The grammar of `dims`: its commands, its own options, one-line usage errors.

Each command lives in a module of its own that declares its options next to the code that
runs them: `add_arguments(parser)` and `run(args) -> int`. `COMMANDS` maps each command to
its module, and a module is imported only when its command is chosen (as pip's
`commands/__init__.py` does): `dims --help` imports none of them, `dims sql` only `_sql`,
since start-up time matters for a command line. `build_parser()` defines every command, for
tests and help tools.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Protocol, cast

EXIT_USAGE = 2


class CommandModule(Protocol):
    """What a command's module provides (mypy checks each one against this, below)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class Command(NamedTuple):
    #: the module of analysis.cli that defines and runs the command
    module: str
    #: one line: `dims --help` lists it, and `dims COMMAND --help` starts with it
    help: str


COMMANDS: dict[str, Command] = {
    "demo": Command("_demo", "sandbox → snapshot → report, no account needed"),
    "export": Command("_export", "fetch everything and write one snapshot"),
    "report": Command("_report", "capacity, cost and image-version reports"),
    "diff": Command("_diff", "what changed between two snapshots"),
    "sql": Command(
        "_sql", "DuckDB over the dataset: <table> is the latest snapshot, <table>_history all"
    ),
    "sandbox": Command("_sandbox", "serve the synthetic fleet on loopback until Ctrl-C"),
}

if TYPE_CHECKING:  # each command module, as mypy sees it, is a CommandModule
    from . import _demo, _diff, _export, _report, _sandbox, _sql

    _CHECKED: tuple[CommandModule, ...] = (_demo, _export, _report, _diff, _sql, _sandbox)


def command_module(name: str) -> CommandModule:
    """The module of command `name`, imported when first asked for."""
    return cast(CommandModule, importlib.import_module(f".{COMMANDS[name].module}", __package__))


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other error dims reports."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


_DEBUG_HELP = "show tracebacks and debug logs (anywhere on the line)"


class CommandLine:
    """The parser of `dims` with every command named; a command's options are defined (its
    module imported) only when it is about to parse, or when asked for."""

    def __init__(self) -> None:
        self.parser = _Parser(
            prog="dims",
            description="Fetch, export and report on deployments of the Deployment and "
            "Integration Management Service.",
        )
        # `dims`'s own options take no value (see `parse`)
        self.parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
        self.parser.add_argument("--version", action=_VersionAction)
        # --debug is accepted after the command too; SUPPRESS keeps a subcommand from
        # resetting what was given before it
        common = _Parser(add_help=False)
        common.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP
        )
        commands = self.parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
        self._commands = {
            name: commands.add_parser(
                name, help=command.help, description=command.help, parents=[common]
            )
            for name, command in COMMANDS.items()
        }
        self._defined: set[str] = set()

    def define(self, name: str) -> None:
        """Give command `name` its options (once); a name that is no command is left to
        argparse to refuse."""
        if name in self._commands and name not in self._defined:
            command_module(name).add_arguments(self._commands[name])
            self._defined.add(name)

    def parse(self, argv: Sequence[str]) -> argparse.Namespace:
        """The arguments of `dims ARGV`, only the command named there defined.

        argparse takes the first argument that is no option as the command, since `dims`'s
        own options take no value: it is found here the same way, before argparse gets there."""
        named = next((arg for arg in argv if not arg.startswith("-")), None)
        if named is not None:
            self.define(named)
        return self.parser.parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    """The whole parser of `dims`, every command's options defined."""
    line = CommandLine()
    for name in COMMANDS:
        line.define(name)
    return line.parser


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked: finding the installed distribution's metadata
    costs about 60 ms, which every other command would pay at start-up."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        print(f"dims {_version()}")  # on stdout, as argparse's own version action does
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dims")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown (not installed)"
