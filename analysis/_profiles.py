"""Named profiles in a config file: one place for each environment's settings.

A team with a US and an EU workspace, or a self-hosted install, would otherwise keep a
wrapper script per environment setting `DIMS_*`. A profile names them once:

    [profiles.eu]
    base_url = "https://eu.api.host.langchain.com"
    workspaces = ["…"]
    api_key_env = "DIMS_EU_API_KEY"

The file is `$DIMS_CONFIG`, else `$XDG_CONFIG_HOME/dims/config.toml`, else
`~/.config/dims/config.toml`, read by the guarded settings-file reader (`_smallfile`: a key
given twice, a FIFO, a huge file are each one line naming the file). The profile is the one
`--profile` names, else `DIMS_PROFILE`, else the one called `default` when the file has one.

The key is never in the file (it is checked in, copied and backed up): a profile names the
variable that holds it (`api_key_env`) or a command that prints it (`api_key_command`, run
without a shell, its output stripped, as the AWS CLI's `credential_process`). A command that
fails is one line that shows none of its output, which could hold the key.

Nothing heavy is imported: every command that reads the dataset asks for the profile's `out`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import _codehost as codehost
from ._errors import ConfigurationError
from ._secrets import add_secret

__all__ = [
    "DEFAULT_OUT",
    "DEFAULT_PROFILE",
    "ENV_CONFIG",
    "ENV_OUT",
    "ENV_PROFILE",
    "KEY_COMMAND_TIMEOUT_S",
    "Profile",
    "config_path",
    "dataset_location",
    "load_profile",
]

ENV_CONFIG = "DIMS_CONFIG"
ENV_PROFILE = "DIMS_PROFILE"
ENV_OUT = "DIMS_OUT"
#: The profile used when none is named, if the file has one of this name (as the AWS CLI's).
DEFAULT_PROFILE = "default"
#: The dataset every command reads and writes unless told otherwise (`dims demo` has its own).
DEFAULT_OUT = "dims-data"
#: A key command that prints nothing by then is stopped (a prompt nobody answers).
KEY_COMMAND_TIMEOUT_S = 60.0

#: What a profile may set, each with the type its value must have.
_TEXT_KEYS = ("base_url", "code_host", "api_key_header", "tenant_header", "out", "api_key_env")
_KEYS = (*_TEXT_KEYS, "workspaces", "api_key_command")
#: A variable name as a POSIX shell takes it.
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Profile:
    """One profile of the config file, checked: every value has its type, no key is stored.

    `chosen_by` says what named it (`--profile`, `DIMS_PROFILE`, or that it is the file's
    `default`); `lines` where each of its keys is, for messages that point into the file.
    """

    name: str
    file: Path
    chosen_by: str
    base_url: str | None = None
    workspaces: tuple[str, ...] = ()
    code_host: str | None = None
    api_key_header: str | None = None
    tenant_header: str | None = None
    out: str | None = None
    api_key_env: str | None = None
    #: Not in the repr: a command's arguments may name where the key is kept.
    api_key_command: tuple[str, ...] | None = field(default=None, repr=False)
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def label(self) -> str:
        """How an origin names this profile: `profile us`."""
        return f"profile {self.name}"

    def where(self, key: str | None = None) -> str:
        """`FILE:LINE` of `key` in this profile (of the profile's table without one): an
        origin as `dims config` shows it."""
        line = self._line(key)
        return f"{self.file}:{line}" if line else str(self.file)

    def at(self, key: str | None = None) -> str:
        """`FILE: line LINE` of `key`: how a message about it starts, as every settings
        file's messages do."""
        line = self._line(key)
        return f"{self.file}: line {line}" if line else str(self.file)

    def _line(self, key: str | None) -> int | None:
        dotted = f"profiles.{self.name}" + (f".{key}" if key else "")
        return self.lines.get(dotted) or self.lines.get(f"profiles.{self.name}")

    def api_key(self) -> tuple[str | None, str]:
        """The key this profile points to, and where it came from (never the key itself):
        its variable's value (None when that is unset or empty) or its command's output."""
        if self.api_key_command is not None:
            return _run_key_command(self), f"{self.label}: api_key_command"
        if self.api_key_env is not None:
            return os.environ.get(self.api_key_env) or None, (
                f"{self.label}: api_key_env {self.api_key_env}"
            )
        return None, "unset"


def config_path() -> Path:
    """Where the config file is: `DIMS_CONFIG`, else under `XDG_CONFIG_HOME` (when set to an
    absolute path, as the XDG spec asks), else `~/.config/dims/config.toml`."""
    given = os.environ.get(ENV_CONFIG)
    if given:
        return Path(given).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "dims" / "config.toml"


def load_profile(name: str | None = None) -> Profile | None:
    """The chosen profile, checked: `name` (`--profile`), else `DIMS_PROFILE`, else the
    file's `default` profile; None when none is named and the file has no `default` (or
    there is no file). A profile named that does not exist is one line naming it and the
    file, and the profiles the file has."""
    chosen_by = "--profile" if name else ENV_PROFILE
    name = name or os.environ.get(ENV_PROFILE) or None
    path = config_path()
    if not path.exists():
        if os.environ.get(ENV_CONFIG):
            raise ConfigurationError(f"{ENV_CONFIG} names {path}, which does not exist")
        if name is not None:
            raise ConfigurationError(
                f"profile {name!r} (from {chosen_by}) is named, but there is no config file "
                f"at {path}: create it (see docs/profiles.md) or set {ENV_CONFIG}"
            )
        return None
    from ._smallfile import read_small_file, toml_key_lines  # YAML's parser: only when needed

    profiles = _profiles_of(read_small_file(path, "config", ConfigurationError), path)
    if name is None:
        if DEFAULT_PROFILE not in profiles:
            return None
        name, chosen_by = DEFAULT_PROFILE, f"the file's {DEFAULT_PROFILE!r} profile"
    if name not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise ConfigurationError(
            f"{path}: no profile {name!r} (from {chosen_by}); its profiles: {known}"
        )
    lines = toml_key_lines(path, "config", ConfigurationError)
    return _profile(name, profiles[name], Profile(name, path, chosen_by, lines=lines))


def _profiles_of(data: object, path: Path) -> dict[str, object]:
    """The file's `[profiles.NAME]` tables; anything else at the top is a mistake."""
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path}: a config file is TOML tables ([profiles.NAME])")
    unknown = sorted(set(data) - {"profiles"})
    if unknown:
        raise ConfigurationError(
            f"{path}: unknown top-level key {unknown[0]!r}; a config file holds "
            "[profiles.NAME] tables only"
        )
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise ConfigurationError(f"{path}: `profiles` must be tables: [profiles.NAME]")
    return profiles


def _profile(name: str, table: object, empty: Profile) -> Profile:
    """`table` checked into a Profile (`empty` carries its name, file and lines)."""
    if not isinstance(table, dict):
        raise ConfigurationError(f"{empty.at()}: profile {name!r} must be a table")
    if "api_key" in table:  # never echo it: the value is the secret
        raise ConfigurationError(
            f"{empty.at('api_key')}: profile {name!r} stores an API key, which a config "
            "file never holds (the value is not shown); name the variable that holds it "
            '(api_key_env = "NAME") or a command that prints it (api_key_command = [...])'
        )
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigurationError(
            f"{empty.at(unknown[0])}: unknown key {unknown[0]!r} in profile {name!r}; "
            f"known: {', '.join(_KEYS)}"
        )
    values: dict[str, object] = {key: _text(empty, key, table.get(key)) for key in _TEXT_KEYS}
    values["workspaces"] = _workspaces(empty, table.get("workspaces"))
    values["api_key_command"] = _command(empty, table.get("api_key_command"))
    profile = Profile(name, empty.file, empty.chosen_by, lines=empty.lines, **values)  # type: ignore[arg-type]
    _check(profile)
    return profile


def _text(profile: Profile, key: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(
            f"{profile.at(key)}: {key} in profile {profile.name!r} must be non-empty text"
        )
    return value


def _workspaces(profile: Profile, value: object) -> tuple[str, ...]:
    """`workspaces = ["A", "B"]` (or one id as text): order kept, repeats dropped."""
    items = [value] if isinstance(value, str) else value
    if items is None:
        return ()
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise ConfigurationError(
            f"{profile.at('workspaces')}: workspaces in profile {profile.name!r} must be a "
            'list of workspace ids (workspaces = ["A", "B"])'
        )
    return tuple(dict.fromkeys(item.strip() for item in items))


def _command(profile: Profile, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        raise ConfigurationError(
            f"{profile.at('api_key_command')}: api_key_command in profile "
            f"{profile.name!r} must be a non-empty list of arguments, run without a shell "
            '(api_key_command = ["pass", "show", "dims"])'
        )
    return tuple(value)


def _check(profile: Profile) -> None:
    """What no profile may say: both key sources, a variable name no shell can set, a code
    host that is no path segment."""
    if profile.api_key_env is not None and profile.api_key_command is not None:
        raise ConfigurationError(
            f"{profile.at('api_key_command')}: profile {profile.name!r} gives both "
            "api_key_env and api_key_command; give one"
        )
    if profile.api_key_env is not None and not _VARIABLE.fullmatch(profile.api_key_env):
        raise ConfigurationError(
            f"{profile.at('api_key_env')}: api_key_env in profile {profile.name!r} must be "
            f"a variable name (letters, digits, _), got {profile.api_key_env[:40]!r}"
        )
    if profile.code_host is not None:
        codehost.check(profile.code_host, f"{profile.at('code_host')}: code_host")


def _run_key_command(profile: Profile) -> str:
    """The output of the profile's key command, stripped; a failure is one line that shows
    none of what it printed (its output, even on failure, may hold the key)."""
    command = profile.api_key_command or ()
    what = f"{profile.at('api_key_command')}: the API key command of profile {profile.name!r}"
    try:
        done = subprocess.run(  # argv from the user's own file, run without a shell
            command,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=KEY_COMMAND_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise ConfigurationError(f"{what}: {command[0]!r} was not found") from None
    except PermissionError:
        raise ConfigurationError(f"{what}: {command[0]!r} cannot be run (permission)") from None
    except subprocess.TimeoutExpired:
        raise ConfigurationError(
            f"{what} did not finish in {KEY_COMMAND_TIMEOUT_S:g} s; it was stopped"
        ) from None
    if done.returncode != 0:
        raise ConfigurationError(f"{what} exited {done.returncode} (its output is not shown)")
    try:
        key = done.stdout.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigurationError(f"{what} printed what is not UTF-8 text (not shown)") from None
    if not key:
        raise ConfigurationError(f"{what} printed nothing; it should print the key")
    add_secret(key)  # scrubbed from anything the service sends back
    return key


def dataset_location(given: str | Path | None, profile: Profile | None) -> tuple[str | Path, str]:
    """The dataset a command reads or writes, and where that came from: `--out`, else
    `DIMS_OUT`, else the profile's `out`, else `./dims-data`."""
    if given is not None:
        return given, "flag --out"
    if os.environ.get(ENV_OUT):
        return os.environ[ENV_OUT], f"env {ENV_OUT}"
    if profile is not None and profile.out is not None:
        return profile.out, f"{profile.label} ({profile.where('out')})"
    return DEFAULT_OUT, "default"
