"""The grammar of `dims`: its commands, its own options, one-line usage errors.

Each command lives in a module of its own that declares its options next to the code that
runs them: `add_arguments(parser)` and `run(args) -> int`. `COMMANDS` maps each command to
its module, and a module is imported only when its command is chosen (as pip's
`commands/__init__.py` does): `dims --help` imports none of them, `dims sql` only `_sql`,
since start-up time matters for a command line. `build_parser()` defines every command, for
tests and help tools.

Like git, gh and kubectl: `dims` alone prints the help (exit 0, as gh and kubectl do; git
exits 1); an unknown command or option is one line with a "did you mean" and exit 2; no
option may be abbreviated (`--ou` for `--out` would silently change meaning the day an
option `--outline` is added, and break scripts); a usage error in a command points at that
command's help.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
from collections.abc import Sequence
from typing import Any, NamedTuple, NoReturn, Protocol, cast

from .._escape import printable
from ._exits import Exit


class CommandModule(Protocol):
    """What a command's module provides (mypy checks each one against this: `_commands`)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class Command(NamedTuple):
    #: the module of dims._cli that defines and runs the command
    module: str
    #: one line: `dims --help` lists it, and `dims COMMAND --help` starts with it
    help: str


COMMANDS: dict[str, Command] = {
    "demo": Command("_demo", "sandbox → snapshot → report, no account needed"),
    "export": Command("_export", "fetch everything and write one snapshot"),
    "report": Command("_report", "capacity, cost and image-version reports"),
    "diff": Command("_diff", "what changed between two snapshots"),
    "history": Command("_history_by", "each group's changes of monthly cost across snapshots"),
    "check": Command("_check", "hold a snapshot to a rules file: exit 1 on a violation (CI)"),
    "explain": Command("_explain", "one deployment's monthly cost, line by line"),
    "metrics": Command("_metrics", "the snapshot as Prometheus metrics (text format)"),
    "sql": Command(
        "_sql", "DuckDB over the dataset: <table> is the latest snapshot, <table>_history all"
    ),
    "catalog": Command("_catalog", "a DuckDB file of views over the dataset, for BI tools"),
    "sandbox": Command("_sandbox", "serve the synthetic fleet on loopback until Ctrl-C"),
    "config": Command("_config", "the settings in effect and where each came from (profiles)"),
    "help": Command("_help", "a command's help (`dims help export` is `dims export --help`)"),
    "completion": Command("_completion", "the shell completion script for bash, zsh or fish"),
}


def command_module(name: str) -> CommandModule:
    """The module of command `name`, imported when first asked for."""
    return cast(CommandModule, importlib.import_module(f".{COMMANDS[name].module}", __package__))


def did_you_mean(word: str, candidates: Sequence[str], quote: bool = False) -> str:
    """`; did you mean X?` for a mistyped `word`, or "" when nothing is near.

    An abbreviation names every candidate it could be (dims accepts none of them); a typo,
    the closest candidate."""
    found = sorted(c for c in candidates if c.startswith(word)) if len(word.strip("-")) > 1 else []
    if not found:  # compared without the dashes, which every option shares
        names = {candidate.lstrip("-"): candidate for candidate in candidates}
        near = difflib.get_close_matches(word.lstrip("-"), list(names), n=1, cutoff=0.6)
        found = [names[name] for name in near]
    if not found:
        return ""
    shown = [repr(c) if quote else c for c in found]
    alternatives = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return f"; did you mean {alternatives}?"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other error dims reports, and no
    option may be abbreviated."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        shown = printable(f"{self.prog}: error: {message} (see `{self.prog} --help`)")
        self.exit(Exit.USAGE, f"{shown}\n")

    def refuse_unrecognized(self, extras: Sequence[str]) -> NoReturn:
        """The arguments this parser has no place for, with the option meant if one is near."""
        unknown = [arg.partition("=")[0] for arg in extras if arg.startswith("--")]
        options = [option for option in self._option_string_actions if option.startswith("--")]
        hint = did_you_mean(unknown[0], options) if unknown else ""
        self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


_DEBUG_HELP = "show tracebacks and debug logs (anywhere on the line)"
_QUIET_HELP = "no progress and no notices, errors only (anywhere on the line)"


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
        self.parser.add_argument("--quiet", action="store_true", help=_QUIET_HELP)
        self.parser.add_argument("--version", action=_VersionAction)
        # --debug is accepted after the command too; SUPPRESS keeps a subcommand from
        # resetting what was given before it
        common = _Parser(add_help=False)
        common.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP
        )
        common.add_argument(
            "--quiet", action="store_true", default=argparse.SUPPRESS, help=_QUIET_HELP
        )
        # not required: `dims` alone prints the help (see `parse`)
        commands = self.parser.add_subparsers(dest="command", metavar="COMMAND")
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

    def help_of(self, name: str | None) -> str:
        """The help `dims NAME --help` prints (`dims --help`'s for None)."""
        if name is None:
            return self.parser.format_help()
        self.define(name)
        return self._commands[name].format_help()

    def parse(self, argv: Sequence[str]) -> argparse.Namespace:
        """The arguments of `dims ARGV`, only the command named there defined.

        argparse takes the first argument that is no option as the command, since `dims`'s
        own options take no value: it is found here the same way, before argparse gets there.
        Arguments the command has no place for are refused by the command's parser, so the
        error points at its help (argparse would have the top-level parser refuse them)."""
        named = next((arg for arg in argv if not arg.startswith("-")), None)
        if named is not None and named not in self._commands:
            hint = did_you_mean(named, list(self._commands), quote=True)
            self.parser.error(f"unknown command {named!r}{hint}")
        if named is not None:
            self.define(named)
        args, extras = self.parser.parse_known_args(argv)
        if extras:
            chosen = self._commands.get(args.command) if args.command else None
            (chosen or self.parser).refuse_unrecognized(extras)
        if args.command is None:
            self.parser.print_help()
            self.parser.exit()
        return args


def build_parser() -> argparse.ArgumentParser:
    """The whole parser of `dims`, every command's options defined."""
    line = CommandLine()
    for name in COMMANDS:
        line.define(name)
    return line.parser


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked: finding the installed distribution's metadata
    (`importlib.metadata`) is slow, and every other command would pay for it at start-up."""

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
