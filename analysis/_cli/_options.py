"""The options several commands share, and the argument types that parse them.

A bad value is caught here, by argparse, so it is a usage error (exit 2) that names the
option, before a command starts any work. Only light modules are imported: a command's
parser is built before it runs, and `dims --help` must start quickly.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _codehost as codehost
from .. import _defaults as defaults
from .. import _profiles as profiles
from .. import _spec as spec
from .._errors import ConfigurationError
from .._options import filter_choices
from .._storage.paths import is_remote, location

if TYPE_CHECKING:
    from .._connection import Settings
    from .._reports import PriceSheet

#: The demo's synthetic fleet never goes where real exports go.
DEMO_OUT = Path("dims-demo")


def date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def bounded(low: int, high: int | None = None) -> Callable[[str], int]:
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


def seconds(text: str) -> float:
    """A duration: a finite number of seconds above zero (not -1, 0, nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected seconds above 0, got {text!r}")
    return value


def named_path(text: str) -> Path:
    """A path that names something: an empty one would silently mean the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"empty path {text!r} (it would mean the current folder); give a path"
        )
    return Path(text)


def dataset(text: str) -> Path | str:
    """`--out`: a folder, or object storage named by URI (`s3://bucket/prefix`, gs://, abfs://),
    kept as text (a Path would fold the `//`)."""
    return location(named_path(text) if not is_remote(text) else text)


def boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def code_host(text: str) -> str:
    """`--code-host`: one path segment (checked here, so a bad value is a usage error)."""
    try:
        return codehost.check(text, "the code host")
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be within 0..1, got {text!r}")
    return value


def milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def add_out(parser: argparse.ArgumentParser, default: Path | None = None) -> None:
    """`--out`, and `--profile` whose `out` may name the dataset. A command with its own
    `default` (`dims demo`) keeps it: flags alone change it, never DIMS_OUT or a profile."""
    if default is not None:
        parser.add_argument(
            "--out",
            type=dataset,
            default=default,
            help=f"dataset folder, or s3://bucket/prefix (default ./{default})",
        )
        return
    parser.add_argument(
        "--out",
        type=dataset,
        help=f"dataset folder, or s3://bucket/prefix (default: {profiles.ENV_OUT}, else the "
        f"profile's out, else ./{profiles.DEFAULT_OUT})",
    )
    add_profile(parser)


def add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help=f"the config file's profile to use ({profiles.ENV_PROFILE}; default: the "
        f"profile named {profiles.DEFAULT_PROFILE!r}, if any; see `dims config`)",
    )


def resolve_profile_and_out(args: argparse.Namespace) -> None:
    """The profile a command names (read once, kept as `args.chosen_profile`) and its
    dataset: `args.out` resolved (flag > DIMS_OUT > the profile's out > ./dims-data), its
    origin as `args.out_from`."""
    if not hasattr(args, "profile"):
        return
    args.chosen_profile = profiles.load_profile(args.profile)
    if not hasattr(args, "out"):
        return
    value, args.out_from = profiles.dataset_location(args.out, args.chosen_profile)
    if args.out is None:
        try:
            args.out = dataset(str(value) if is_remote(str(value)) else os.path.expanduser(value))
        except argparse.ArgumentTypeError as exc:
            raise ConfigurationError(f"the dataset ({args.out_from}): {exc}") from None


def missing_dataset(args: argparse.Namespace) -> ConfigurationError | None:
    """The one line for a command that found no dataset because the folder it chose (no
    `--out` given) is not there: the folder, where that came from, and how to name another.
    None when the folder exists or `--out` named it (the reader's own message then says
    what is missing, and where)."""
    out = getattr(args, "out", None)
    if args.command in WRITES_DATASET or not isinstance(out, Path) or out.exists():
        return None
    if args.out_from == "flag --out":  # named on the line: the reader's message names it
        return None
    return ConfigurationError(
        f"no dataset at {out.absolute()} ({args.out_from}): run `dims export` (or "
        f"`dims demo`) first, or name the dataset with --out DIR, {profiles.ENV_OUT}=DIR or a "
        "profile's out (`make demo` writes ./dims-demo)"
    )


#: Commands that make the dataset where `--out` says rather than read one already there.
WRITES_DATASET = frozenset({"export", "config"})


_TENANT_HELP = (
    "workspace to export (X-Tenant-Id); repeat it, or give A,B, for several in one snapshot "
    "(DIMS_TENANT_ID: one id or a comma-separated list)"
)


def add_prices(parser: argparse.ArgumentParser, used_for: str) -> None:
    """`--prices FILE`: the price sheet a command's money figures use (`used_for`)."""
    parser.add_argument(
        "--prices",
        type=named_path,
        metavar="FILE",
        help=f"YAML or TOML price sheet {used_for}, as `dims report --prices` (default: "
        "OpenCost's custom-pricing defaults, 730 hours a month)",
    )


def prices_of(args: argparse.Namespace) -> PriceSheet:
    """The price sheet `--prices` names, or the defaults (reports imported only now)."""
    from .._reports import DEFAULT_PRICES, load_prices

    return DEFAULT_PRICES if args.prices is None else load_prices(args.prices)


def add_connection(parser: argparse.ArgumentParser, limits: bool = True) -> None:
    """The connection's options (and, with `limits`, what one request may cost)."""
    group = parser.add_argument_group(
        "connection (a flag wins over DIMS_*, which win over the profile; see `dims config`)"
    )
    group.add_argument(
        "--base-url", help="service base URL (DIMS_BASE_URL, or the profile's base_url)"
    )
    group.add_argument(
        "--api-key",
        help="API key (DIMS_API_KEY; prefer the variable: arguments show in process lists)",
    )
    group.add_argument("--tenant-id", action="append", metavar="TENANT", help=_TENANT_HELP)
    group.add_argument(
        "--code-host",
        type=code_host,
        metavar="NAME",
        help=f"the code host's segment in the repositories path (DIMS_CODE_HOST, or the "
        f"profile's code_host; default {codehost.PUBLISHED} for the published service's base "
        f"URLs, else {codehost.DEFAULT}, as the interface spec writes it)",
    )
    group.add_argument(
        "--api-key-header",
        help=f"header carrying the key (default: the profile's, else {defaults.API_KEY_HEADER})",
    )
    group.add_argument(
        "--tenant-header",
        help=f"header carrying the tenant (default: the profile's, else {defaults.TENANT_HEADER})",
    )
    group.add_argument(
        "--allow-insecure-http",
        action="store_true",
        help="allow sending the key over plain http to a non-loopback host",
    )
    if limits:
        add_limits(parser)


def settings_of(args: argparse.Namespace) -> Settings:
    """The connection settings of the command line: its flags, then `DIMS_*`, then the
    profile (read once, before the command ran), then the defaults; no sandbox address
    unless one is set (`dims sandbox` and `dims demo` start their own)."""
    from .._connection import Given, resolve_settings

    given = Given(
        base_url=args.base_url,
        api_key=args.api_key,
        tenants=tuple(args.tenant_id or ()),
        code_host=args.code_host,
        api_key_header=args.api_key_header,
        tenant_header=args.tenant_header,
        allow_insecure_http=args.allow_insecure_http,
        flag=True,
    )
    return resolve_settings(given, args.chosen_profile, default_base_url=None)


def add_limits(parser: argparse.ArgumentParser) -> None:
    """What one request may cost: time, attempts and size."""
    group = parser.add_argument_group("limits per request")
    group.add_argument(
        "--timeout",
        type=seconds,
        default=defaults.TIMEOUT_S,
        help=f"seconds per connect or read (default {defaults.TIMEOUT_S:g})",
    )
    group.add_argument(
        "--retries",
        type=bounded(0, 20),
        default=defaults.RETRIES,
        help=f"attempts per request after the first, 0: one attempt, as curl's and pip's "
        f"--retries (default {defaults.RETRIES}; from Python: RetryPolicy(retries=N))",
    )
    group.add_argument(
        "--deadline",
        type=seconds,
        default=defaults.DEADLINE_S,
        help=f"seconds one request may take, retries included (default {defaults.DEADLINE_S:g})",
    )
    group.add_argument(
        "--max-body-mib",
        type=bounded(1),
        default=defaults.MAX_BODY_MIB,
        metavar="MIB",
        help=f"largest response body (default {defaults.MAX_BODY_MIB})",
    )
    group.add_argument(
        "--max-decoded-mib",
        type=bounded(1),
        default=defaults.MAX_DECODED_MIB,
        metavar="MIB",
        help=f"largest body once decompressed (default {defaults.MAX_DECODED_MIB})",
    )


#: Where a filter option stores its value: `filter_<the spec's parameter name>`.
_FILTER_PREFIX = "filter_"


def add_filters(parser: argparse.ArgumentParser) -> None:
    """One option per filter of the spec's list-deployments operation."""
    group = parser.add_argument_group("deployment filters (as the interface spec names them)")
    params = spec.document()["paths"]["/v2/deployments"]["get"]["parameters"]
    for param in params:
        name = param["name"]
        if name in ("limit", "offset"):
            continue
        kind, _ = spec.kind_of(param["schema"])
        options: dict[str, Any] = {
            "dest": f"{_FILTER_PREFIX}{name}",
            "help": param.get("description"),
            "metavar": "VALUE",
        }
        choices = filter_choices(name)
        if kind == "boolean":
            options["type"] = boolean
            options["metavar"] = "{true,false}"
        elif choices is not None:  # an enum, e.g. DeploymentType
            options["choices"] = choices
            options["metavar"] = "{" + ",".join(choices) + "}"
        parser_flag = "--" + name.replace("_", "-")
        group.add_argument(parser_flag, **options)


def filters_of(args: argparse.Namespace) -> dict[str, Any]:
    """The filters given (those of `add_filters`), by the spec's parameter names."""
    return {
        key.removeprefix(_FILTER_PREFIX): value
        for key, value in vars(args).items()
        if key.startswith(_FILTER_PREFIX) and value is not None
    }


def add_fleet(parser: argparse.ArgumentParser) -> None:
    """The synthetic fleet's size and seed (`demo`, `sandbox`)."""
    parser.add_argument(
        "--deployments",
        type=bounded(1),
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


def add_rollout(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--roll-out", metavar="VERSION", help=what)
    parser.add_argument(
        "--share",
        type=fraction,
        default=0.3,
        metavar="F",
        help="the share of the fleet the roll-out reaches, 0..1 (default 0.3)",
    )
