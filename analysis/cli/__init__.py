"""`dims`: the command line. Every command calls the same public functions as notebooks.

Errors print as one line (what failed, where, what to do) with a non-zero exit; `--debug`
shows the traceback instead. SIGTERM (Kubernetes stopping a pod, also as PID 1) and SIGHUP
(a closed terminal) stop a command the way Ctrl-C does: one line, nothing partial left,
exit 128 + the signal's number. A closed output pipe (`dims report | head -1`) ends the
command quietly with exit 141, as a Unix tool killed by SIGPIPE does.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import logging
import math
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from .. import codehost, defaults, spec
from ..errors import ConfigurationError, DimsError, ScrubFilter, scrub
from ..storage.paths import is_remote, location

__all__ = ["build_parser", "main"]

DEFAULT_OUT = Path("dims-data")
#: The demo's synthetic fleet never goes where real exports go.
DEMO_OUT = Path("dims-demo")
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
#: Signals that stop a command like Ctrl-C (SIGINT already raises KeyboardInterrupt).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other error dims reports."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def _bounded(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f">= {low}"
            raise argparse.ArgumentTypeError(f"{value} is outside {span}")
        return value

    return parse


def _seconds(text: str) -> float:
    """A duration: a finite number of seconds above zero (not -1, 0, nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


def _named_path(text: str) -> Path:
    """A path that names something: an empty one would silently mean the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"empty path {text!r} (it would mean the current folder); give a path"
        )
    return Path(text)


def _dataset(text: str) -> Path | str:
    """`--out`: a folder, or object storage named by URI (`s3://bucket/prefix`, gs://, abfs://),
    kept as text (a Path would fold the `//`)."""
    return location(_named_path(text) if not is_remote(text) else text)


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _code_host(text: str) -> str:
    """`--code-host`: one path segment (checked here, so a bad value is a usage error)."""
    try:
        return codehost.check(text, "the code host")
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_out(parser: argparse.ArgumentParser, default: Path = DEFAULT_OUT) -> None:
    parser.add_argument(
        "--out",
        type=_dataset,
        default=default,
        help=f"dataset folder, or s3://bucket/prefix (default ./{default})",
    )


_TENANT_HELP = (
    "workspace to export (X-Tenant-Id); repeat it, or give A,B, for several in one snapshot "
    "(DIMS_TENANT_ID: one id or a comma-separated list)"
)


def _add_connection(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("connection (default: DIMS_* environment, then sandbox)")
    group.add_argument("--base-url", help="service base URL (DIMS_BASE_URL)")
    group.add_argument(
        "--api-key",
        help="API key (DIMS_API_KEY; prefer the variable: arguments show in process lists)",
    )
    group.add_argument("--tenant-id", action="append", metavar="TENANT", help=_TENANT_HELP)
    group.add_argument(
        "--code-host",
        type=_code_host,
        metavar="NAME",
        help=f"the code host's segment in the repositories path (DIMS_CODE_HOST; default "
        f"{codehost.DEFAULT}, as the interface spec writes it; the published service: "
        f"{codehost.PUBLISHED})",
    )
    group.add_argument(
        "--api-key-header",
        default=defaults.API_KEY_HEADER,
        help=f"header carrying the key (default {defaults.API_KEY_HEADER})",
    )
    group.add_argument(
        "--tenant-header",
        default=defaults.TENANT_HEADER,
        help=f"header carrying the tenant (default {defaults.TENANT_HEADER})",
    )
    group.add_argument(
        "--allow-insecure-http",
        action="store_true",
        help="allow sending the key over plain http to a non-loopback host",
    )
    _add_limits(parser)


def _add_limits(parser: argparse.ArgumentParser) -> None:
    """What one request may cost: time, attempts and size."""
    group = parser.add_argument_group("limits per request")
    group.add_argument(
        "--timeout",
        type=_seconds,
        default=defaults.TIMEOUT_S,
        help=f"seconds per connect or read (default {defaults.TIMEOUT_S:g})",
    )
    group.add_argument(
        "--retries",
        type=_bounded(0, 20),
        default=defaults.RETRIES,
        help=f"retries per request (default {defaults.RETRIES})",
    )
    group.add_argument(
        "--deadline",
        type=_seconds,
        default=defaults.DEADLINE_S,
        help=f"seconds one request may take, retries included (default {defaults.DEADLINE_S:g})",
    )
    group.add_argument(
        "--max-body-mib",
        type=_bounded(1),
        default=defaults.MAX_BODY_MIB,
        metavar="MIB",
        help=f"largest response body (default {defaults.MAX_BODY_MIB})",
    )
    group.add_argument(
        "--max-decoded-mib",
        type=_bounded(1),
        default=defaults.MAX_DECODED_MIB,
        metavar="MIB",
        help=f"largest body once decompressed (default {defaults.MAX_DECODED_MIB})",
    )


def _add_filters(parser: argparse.ArgumentParser) -> None:
    """One option per filter of the spec's list-deployments operation."""
    group = parser.add_argument_group("deployment filters (as the interface spec names them)")
    params = spec.document()["paths"]["/v2/deployments"]["get"]["parameters"]
    for param in params:
        name = param["name"]
        if name in ("limit", "offset"):
            continue
        kind, ref = spec.kind_of(param["schema"])
        options: dict[str, Any] = {
            "dest": f"filter_{name}",
            "help": param.get("description"),
            "metavar": "VALUE",
        }
        if kind == "boolean":
            options["type"] = _bool
            options["metavar"] = "{true,false}"
        elif ref is not None:  # an enum, e.g. DeploymentType
            options["choices"] = spec.document()["components"]["schemas"][ref]["enum"]
            options["metavar"] = "{" + ",".join(options["choices"]) + "}"
        parser_flag = "--" + name.replace("_", "-")
        group.add_argument(parser_flag, **options)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dims",
        description="Fetch, export and report on deployments of the Deployment and "
        "Integration Management Service.",
    )
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    parser.add_argument("--version", action=_VersionAction)
    # --debug is accepted after the command too; SUPPRESS keeps a subcommand from resetting
    # what was given before it
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(
            name, help=help, description=help, parents=[common]
        )
        return sub

    for define in (
        _demo_command,
        _export_command,
        _report_command,
        _diff_command,
        _sql_command,
        _sandbox_command,
    ):
        define(command)
    return parser


#: Adds a subcommand to `dims` (name, one-line help) and gives back its parser.
_Command = Callable[[str, str], argparse.ArgumentParser]


def _demo_command(command: _Command) -> None:
    demo = command("demo", "sandbox → snapshot → report, no account needed")
    _add_out(demo, DEMO_OUT)
    _add_fleet(demo)
    _add_rollout(demo, "take yesterday's snapshot, roll VERSION out, then today's (a real diff)")


def _export_command(command: _Command) -> None:
    export = command("export", "fetch everything and write one snapshot")
    _add_out(export)
    _add_connection(export)
    _add_filters(export)
    export.add_argument(
        "--concurrency",
        type=_bounded(1, 64),
        default=defaults.CONCURRENCY,
        metavar="N",
        help=f"requests in flight in all, listings and repositories together "
        f"(default {defaults.CONCURRENCY})",
    )
    low, high = spec.page_size_range()
    export.add_argument(
        "--page-size",
        type=_bounded(low, high),
        default=defaults.PAGE_SIZE,
        metavar="N",
        help=f"records asked for per page, the spec's `limit` ({low}..{high}; "
        f"default {defaults.PAGE_SIZE})",
    )
    export.add_argument(
        "--from-json", type=_named_path, metavar="FILE", help="read a saved dump (or /dev/stdin)"
    )
    export.add_argument(
        "--include-env-values",
        action="store_true",
        help="store containers' env values (they may hold secrets; off by default)",
    )
    export.add_argument("--strict", action="store_true", help="fail on the first bad record")
    export.add_argument(
        "--workers",
        type=_bounded(0, 64),
        default=None,
        metavar="N",
        help="processes reading records beside this one (default: one per other core, "
        "at most 3; 0: read everything in this process)",
    )
    export.add_argument("--snapshot-date", type=_date, help="default: today (UTC)")
    export.add_argument(
        "--allow-empty",
        action="store_true",
        help="publish a snapshot with 0 deployments even when the latest one had some",
    )
    export.add_argument(
        "--allow-partial",
        action="store_true",
        help="with several workspaces: when some fail, publish the others (exit 3, the failed "
        "ones named) instead of nothing",
    )
    export.add_argument("--json", action="store_true", help="print the snapshot's manifest as JSON")


def _report_command(command: _Command) -> None:
    report = command("report", "capacity, cost and image-version reports")
    _add_out(report)
    report.add_argument("--date", type=_date, help="snapshot date (default: the latest)")
    report.add_argument("--json", action="store_true", help="print where the report went, as JSON")
    prices = report.add_argument_group(
        "prices (US dollars; default: OpenCost's custom-pricing defaults, 730 hours a month)"
    )
    prices.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="YAML or TOML price sheet: cpu_core_hour, memory_gib_hour, storage_gib_month, "
        "hours_per_month, and per-type overrides under `types`",
    )
    prices.add_argument(
        "--cpu-hour", type=float, metavar="USD", help="$ per core-hour (default 0.031611)"
    )
    prices.add_argument(
        "--gib-hour", type=float, metavar="USD", help="$ per GiB-hour of memory (default 0.004237)"
    )
    prices.add_argument(
        "--storage-gib-month",
        type=float,
        metavar="USD",
        help="$ per GiB-month of DB storage (default 0.04)",
    )


def _diff_command(command: _Command) -> None:
    diff = command("diff", "what changed between two snapshots")
    _add_out(diff)
    diff.add_argument("--from", dest="from_date", type=_date, help="default: second latest")
    diff.add_argument("--to", dest="to_date", type=_date, help="default: the latest")
    diff.add_argument(
        "--tenant-id",
        dest="tenant_ids",
        action="append",
        metavar="TENANT",
        help="only this workspace (repeat it, or A,B; default: the whole organisation)",
    )
    diff.add_argument(
        "--changes-out",
        type=_named_path,
        metavar="FILE",
        help="also write the changed deployments as Parquet (one row each, what changed)",
    )
    diff.add_argument(
        "--json", action="store_true", help="print counts, totals and every change as JSON"
    )


def _sql_command(command: _Command) -> None:
    sql = command(
        "sql", "DuckDB over the dataset: <table> is the latest snapshot, <table>_history all"
    )
    _add_out(sql)
    sql.add_argument("--json", action="store_true", help="print the rows as JSON objects")
    sql.add_argument("query", help='e.g. "select count(*) from deployments"')


def _sandbox_command(command: _Command) -> None:
    sandbox = command("sandbox", "serve the synthetic fleet on loopback until Ctrl-C")
    sandbox.add_argument(
        "--port",
        type=_bounded(0, 65535),
        default=8765,
        help="port on 127.0.0.1 (0: any free port; default 8765)",
    )
    _add_fleet(sandbox)
    sandbox.add_argument(
        "--latency-ms",
        type=_milliseconds,
        default=0.0,
        metavar="MS",
        help="delay every answer by MS milliseconds (default 0)",
    )
    sandbox.add_argument("--api-key", help=f"require this key in {defaults.API_KEY_HEADER}")
    sandbox.add_argument(
        "--code-host",
        type=_code_host,
        metavar="NAME",
        help=f"serve the repositories under this path segment only (default {codehost.DEFAULT}, "
        f"as the interface spec writes it; {codehost.PUBLISHED} with --original-names, as the "
        "published service)",
    )
    _add_rollout(sandbox, "serve the fleet with VERSION rolled out (same seed: the fleet after)")
    _add_faults(sandbox)
    _add_service_shapes(sandbox)


def _add_faults(sandbox: argparse.ArgumentParser) -> None:
    """The faults the sandbox can inject, each on every Nth request."""
    faults = sandbox.add_argument_group("faults (N = on every Nth API request; 0 = never)")
    faults.add_argument(
        "--rate-limit-every", type=_bounded(0), default=0, metavar="N", help="429 Too Many Requests"
    )
    faults.add_argument(
        "--retry-after",
        type=_bounded(0),
        default=1,
        metavar="S",
        help="the Retry-After the 429 sends (default 1)",
    )
    faults.add_argument("--error-every", type=_bounded(0), default=0, metavar="N", help="a 5xx")
    faults.add_argument(
        "--error-status",
        type=_bounded(500, 599),
        default=503,
        metavar="CODE",
        help="which 5xx (default 503)",
    )
    faults.add_argument(
        "--truncate-every",
        type=_bounded(0),
        default=0,
        metavar="N",
        help="a 200 whose body is cut short (counts successful answers)",
    )
    faults.add_argument(
        "--reset-every", type=_bounded(0), default=0, metavar="N", help="drop the connection"
    )
    faults.add_argument(
        "--stuck-offset",
        action="store_true",
        help="every page answers the request's own offset (dims counts on by itself)",
    )
    faults.add_argument(
        "--insert-while-paging",
        type=_bounded(0),
        default=0,
        metavar="N",
        help="insert a deployment in front after N listing requests (the listing shifts)",
    )
    faults.add_argument(
        "--fail-tenant",
        metavar="TENANT",
        help="every request for this workspace (X-Tenant-Id) fails (see --fail-tenant-status)",
    )
    faults.add_argument(
        "--fail-tenant-status",
        type=_bounded(400, 599),
        default=500,
        metavar="CODE",
        help="the status --fail-tenant answers (default 500; 403: no access)",
    )


def _add_service_shapes(sandbox: argparse.ArgumentParser) -> None:
    """Shapes of the real service's listing and records that the spec does not promise."""
    sandbox.add_argument(
        "--tenants",
        type=_bounded(0, 50),
        default=0,
        metavar="N",
        help="spread the fleet over N workspaces (default 0: 1 to 3, by the seed); "
        "listings are scoped by X-Tenant-Id",
    )
    shapes = sandbox.add_argument_group("real-service shapes (listing and records)")
    shapes.add_argument(
        "--page-cap",
        type=_bounded(0),
        default=0,
        metavar="N",
        help="serve at most N records a page, whatever `limit` asks (0: no cap)",
    )
    shapes.add_argument(
        "--final-offset",
        metavar="HOW",
        help="the last page answers an offset that does not advance: echo (the request's), "
        "zero, or back (one less)",
    )
    shapes.add_argument(
        "--ignore-offset",
        action="store_true",
        help="serve the first page for every offset (the response offset still advances)",
    )
    shapes.add_argument(
        "--untyped-every",
        type=_bounded(0),
        default=0,
        metavar="N",
        help="every Nth deployment is in no typed listing and does not name its type",
    )
    shapes.add_argument(
        "--real-shaped",
        action="store_true",
        help="records carry status, source and (some) source_config.deployment_type, "
        "some of a type newer than the spec",
    )
    shapes.add_argument(
        "--original-names",
        action="store_const",
        const="original",
        default="spec",
        dest="names",
        help="speak as the published service does: redis_* and langgraph_config_path for "
        "the spec's cache_* and graph_config_path, integers where its schema has them, "
        "and the repositories path's `github` segment (default: the spec's names)",
    )


_DEBUG_HELP = "show tracebacks and debug logs (anywhere on the line)"


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


def _add_fleet(parser: argparse.ArgumentParser) -> None:
    """The synthetic fleet's size and seed (`demo`, `sandbox`)."""
    parser.add_argument(
        "--deployments",
        type=_bounded(1),
        default=500,
        metavar="N",
        help="deployments in the synthetic fleet (default 500)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the fleet: the same seed, the same fleet (default 0)",
    )


def _add_rollout(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--roll-out", metavar="VERSION", help=what)
    parser.add_argument(
        "--share",
        type=_fraction,
        default=0.3,
        metavar="F",
        help="the share of the fleet the roll-out reaches, 0..1 (default 0.3)",
    )


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be within 0..1, got {text!r}")
    return value


def _milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    return {
        key.removeprefix("filter_"): value
        for key, value in vars(args).items()
        if key.startswith("filter_") and value is not None
    }


def _run(args: argparse.Namespace) -> int:
    from . import commands

    command: Callable[[argparse.Namespace, dict[str, Any]], int] = getattr(commands, args.command)
    return command(args, _filters(args))


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


def _say_error(text: str) -> None:
    """One line on stderr; a closed stderr (a dead terminal after SIGHUP) is no reason to fail."""
    with contextlib.suppress(OSError, ValueError):
        print(scrub(text), file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so Python's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


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
#: threads (2-4% of an export's time, 2 cores). Set before numpy loads; a user's value wins.
_QUIET_BLAS = {"OPENBLAS_NUM_THREADS": "1"}


def main(argv: Sequence[str] | None = None) -> int:
    for name, value in _QUIET_BLAS.items():
        os.environ.setdefault(name, value)
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.debug)
    warnings.showwarning = _warning_line
    try:
        with _stop_signals_interrupt():
            return _run(args)
    except _Stopped as stop:
        _say_error(f"dims: stopped by {stop}; nothing partial was left behind")
        return 128 + stop.signum
    except KeyboardInterrupt:
        _say_error("dims: interrupted; nothing partial was left behind")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # whoever read the output has gone: stop quietly
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except DimsError as exc:
        if args.debug:
            raise
        _say_error(f"dims {args.command}: error: {exc}")
        return EXIT_ERROR
    except OSError as exc:  # files and folders: say which
        if args.debug:
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        _say_error(f"dims {args.command}: error: {exc.strerror or exc}{where}")
        return EXIT_ERROR


def _warning_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"dims: warning: {message}", file=sys.stderr)
