"""`dims config`: the settings a command would use, and where each one came from.

With flags, `DIMS_*` variables, a config file and its profiles all able to set the same
thing, "which base URL will this use, and why?" needs an answer before an export runs: each
setting is shown with its origin (a flag, a variable, `profile NAME (FILE:LINE)`, or the
default), resolved by the same function `dims export` uses. The key is shown as set or not,
never its value (a profile's key command is run, to say whether it gives one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .. import _profiles as profiles
from ._options import add_connection, add_out, settings_of
from ._output import say

#: The rows shown, in order: a setting of the connection (or the dataset's `out`).
ROWS = (
    "base_url",
    "workspaces",
    "api_key",
    "code_host",
    "api_key_header",
    "tenant_header",
    "allow_insecure_http",
    "out",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_out(parser)
    add_connection(parser, limits=False)
    parser.add_argument(
        "--json", action="store_true", help="print the settings and their origins as JSON"
    )


def resolved(args: argparse.Namespace) -> dict[str, Any]:
    """The settings `args` resolve to, each {value, from}; the key only as `set`."""
    settings = settings_of(args)
    values: dict[str, Any] = {
        "base_url": settings.base_url,
        "workspaces": list(settings.tenants),
        "api_key": settings.api_key is not None,
        "code_host": settings.code_host,
        "api_key_header": settings.api_key_header,
        "tenant_header": settings.tenant_header,
        "allow_insecure_http": settings.allow_insecure_http,
        "out": str(args.out),
    }
    origins = {**settings.origins, "out": args.out_from}
    profile = args.chosen_profile
    return {
        "config_file": str(profiles.config_path()),
        "config_file_exists": Path(profiles.config_path()).is_file(),
        "profile": profile.name if profile else None,
        "profile_from": profile.chosen_by if profile else None,
        "settings": {name: {"value": values[name], "from": origins[name]} for name in ROWS},
    }


def _shown(name: str, value: Any) -> str:
    if name == "api_key":
        return "set (not shown)" if value else "not set"
    if isinstance(value, list):
        return ", ".join(value) or "(none)"
    if value is None:
        return "(not set)"
    return str(value)


def run(args: argparse.Namespace) -> int:
    found = resolved(args)
    if args.json:
        say(json.dumps(found, indent=2))
        return 0
    exists = "" if found["config_file_exists"] else " (not there)"
    profile = found["profile"]
    lines = [
        f"config file: {found['config_file']}{exists}",
        f"profile: {profile} (from {found['profile_from']})" if profile else "profile: (none)",
    ]
    shown = {name: _shown(name, row["value"]) for name, row in found["settings"].items()}
    width = max(len(text) for text in shown.values())
    for name, row in found["settings"].items():
        lines.append(f"  {name:<20} {shown[name]:<{width}}  {row['from']}")
    say("\n".join(lines))
    return 0
