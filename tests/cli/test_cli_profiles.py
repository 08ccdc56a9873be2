"""Profiles in a config file, and settings resolved once (issue 37 item 3; issue 36 item 5).

Against real sandbox servers on 127.0.0.1: a US-like and an EU-like one (different seeds,
workspaces and keys), each named by a profile, exported into one dataset by name. The order
flag > DIMS_* > profile > default is checked setting by setting through `dims config --json`,
which resolves with the function `dims export` uses. The key, given by a variable's name or by
a command, never appears in any output, repr or error.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_in_process import run

from dims import _profiles as profiles
from dims._connection import Given, resolve_settings
from dims._storage import read_table
from dims.sandbox import SandboxHandle, generate_fleet, run_sandbox

US_KEY = "sk-us-4f1e9a7c2b"
EU_KEY = "sk-eu-8d3c6b0a51"
DAY = "2026-05-07"


def quoted(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is JSON's


def print_command(text: str) -> str:
    """A TOML array: this Python printing `text` (a key command run without a shell)."""
    return json.dumps([sys.executable, "-c", f"print({text!r})"])


def write_config(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def regions() -> Iterator[tuple[SandboxHandle, SandboxHandle]]:
    us_fleet = generate_fleet(40, seed=11, tenants=1)
    eu_fleet = generate_fleet(30, seed=22, tenants=1)
    with (
        run_sandbox(fleet=us_fleet, api_key=US_KEY) as us,
        run_sandbox(fleet=eu_fleet, api_key=EU_KEY) as eu,
    ):
        yield us, eu


def two_profiles(path: Path, us: SandboxHandle, eu: SandboxHandle, out: Path) -> Path:
    """The US profile's key by a variable's name, the EU one's by a command."""
    (us_tenant,) = us.fleet.tenant_ids()
    (eu_tenant,) = eu.fleet.tenant_ids()
    return write_config(
        path,
        f"""
[profiles.us]
base_url = {quoted(us.base_url)}
workspaces = [{quoted(us_tenant)}]
api_key_env = "DIMS_TEST_US_KEY"
out = {quoted(str(out))}

[profiles.eu]
base_url = {quoted(eu.base_url)}
workspaces = [{quoted(eu_tenant)}]
api_key_command = {print_command(EU_KEY)}
out = {quoted(str(out))}
""",
    )


def test_two_profiles_export_into_one_dataset(capsys, monkeypatch, tmp_path, regions):
    us, eu = regions
    out = tmp_path / "fleet"
    monkeypatch.setenv("DIMS_CONFIG", str(two_profiles(tmp_path / "c.toml", us, eu, out)))
    monkeypatch.setenv("DIMS_TEST_US_KEY", US_KEY)
    for name in ("us", "eu"):
        code, stdout, err = run(capsys, "export", "--profile", name, "--snapshot-date", DAY)
        assert code == 0, err
        assert US_KEY not in stdout + err and EU_KEY not in stdout + err
    ids = set(read_table(out, "deployments", columns=["id"])["id"])
    expected = {r["id"] for r in us.fleet.deployments} | {r["id"] for r in eu.fleet.deployments}
    assert ids == expected
    tenants = set(read_table(out, "deployments", columns=["tenant_id"])["tenant_id"])
    assert tenants == {*us.fleet.tenant_ids(), *eu.fleet.tenant_ids()}
    # the profile's out serves the reading commands too: no --out anywhere
    monkeypatch.setenv("DIMS_PROFILE", "eu")
    code, stdout, err = run(capsys, "sql", "select count(*) as n from deployments")
    assert code == 0, err
    assert str(len(expected)) in stdout


def test_a_wrong_key_source_is_refused_by_the_service(capsys, monkeypatch, tmp_path, regions):
    """The key really comes from the profile: without the variable the US region says 401."""
    us, eu = regions
    out = tmp_path / "fleet"
    monkeypatch.setenv("DIMS_CONFIG", str(two_profiles(tmp_path / "c.toml", us, eu, out)))
    monkeypatch.delenv("DIMS_TEST_US_KEY", raising=False)
    code, _, err = run(capsys, "export", "--profile", "us", "--retries", "0")
    assert code == 1 and "401" in err, err
    assert not (out / "deployments").exists()  # nothing published


# --- the order: flag > env > profile > default ------------------------------------------------

#: (setting, flag, variable, profile key, the values at each level, the default)
LEVELS = [
    ("base_url", "--base-url", "DIMS_BASE_URL", "base_url",
     ("http://127.0.0.1:1001", "http://127.0.0.1:1002", "http://127.0.0.1:1003"), None),
    ("code_host", "--code-host", "DIMS_CODE_HOST", "code_host",
     ("flaghost", "envhost", "profilehost"), "codehost"),
    ("workspaces", "--tenant-id", "DIMS_TENANT_ID", "workspaces",
     ("ws-flag", "ws-env", "ws-profile"), []),
    ("out", "--out", "DIMS_OUT", "out", ("from-flag", "from-env", "from-profile"), "dims-data"),
]  # fmt: skip


def _toml_value(key: str, value: str) -> str:
    return json.dumps([value]) if key == "workspaces" else quoted(value)


@pytest.mark.parametrize(("setting", "flag", "variable", "key", "values", "default"), LEVELS)
@pytest.mark.parametrize("present", list(itertools.product([True, False], repeat=3)))
def test_precedence(capsys, monkeypatch, tmp_path, setting, flag, variable, key, values, default,
                    present):  # fmt: skip
    flag_value, env_value, profile_value = values
    has_flag, has_env, has_profile = present
    body = "[profiles.p]\n" + (
        f"{key} = {_toml_value(key, profile_value)}\n" if has_profile else ""
    )
    monkeypatch.setenv("DIMS_CONFIG", str(write_config(tmp_path / "c.toml", body)))
    for name in ("DIMS_BASE_URL", "DIMS_CODE_HOST", "DIMS_TENANT_ID", "DIMS_OUT"):
        monkeypatch.delenv(name, raising=False)
    if has_env:
        monkeypatch.setenv(variable, env_value)
    argv = ["config", "--json", "--profile", "p", *([flag, flag_value] if has_flag else [])]
    code, stdout, err = run(capsys, *argv)
    assert code == 0, err
    shown = json.loads(stdout)["settings"][setting]
    winner = next(
        (level for level, given in zip(("flag", "env", "profile"), present, strict=True) if given),
        None,
    )
    expected = dict(zip(("flag", "env", "profile"), values, strict=True)).get(winner, default)
    if setting == "workspaces" and winner is not None:
        expected = [expected]
    assert shown["value"] == expected
    origin = shown["from"]
    if winner == "flag":
        assert origin == f"flag {flag}"
    elif winner == "env":
        assert origin == f"env {variable}"
    elif winner == "profile":
        assert origin.startswith("profile p (") and f"{tmp_path / 'c.toml'}:" in origin
    else:
        assert origin.startswith(("default", "unset"))


def test_the_published_service_defaults_its_code_host(capsys):
    """Against the published service (either region, or a self-hosted path) the code host is
    github unless set: the spec's literal would list 0 repositories with exit 0."""
    for url in (
        "https://api.host.langchain.com",
        "https://eu.api.host.langchain.com",
        "https://dims.example.com/api-host",
    ):
        code, stdout, err = run(capsys, "config", "--json", "--base-url", url)
        assert code == 0, err
        row = json.loads(stdout)["settings"]["code_host"]
        assert row["value"] == "github" and "published service" in row["from"]
    code, stdout, _ = run(capsys, "config", "--json", "--base-url", "https://dims.example.com")
    assert json.loads(stdout)["settings"]["code_host"]["value"] == "codehost"


# --- the key: by name or command, never shown ----------------------------------------------


def test_the_key_by_variable_name_and_by_command_is_never_shown(capsys, monkeypatch, tmp_path):
    path = write_config(
        tmp_path / "c.toml",
        f'[profiles.byname]\napi_key_env = "MY_KEY"\n\n'
        f"[profiles.bycommand]\napi_key_command = {print_command(EU_KEY)}\n",
    )
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    monkeypatch.setenv("MY_KEY", US_KEY)
    for name, key, origin in (
        ("byname", US_KEY, "profile byname: api_key_env MY_KEY"),
        ("bycommand", EU_KEY, "profile bycommand: api_key_command"),
    ):
        for json_flag in ([], ["--json"]):
            code, stdout, err = run(capsys, "config", "--profile", name, *json_flag)
            assert code == 0, err
            assert key not in stdout + err
            assert origin in stdout
        row = json.loads(run(capsys, "config", "--json", "--profile", name)[1])
        assert row["settings"]["api_key"] == {"value": True, "from": origin}
        settings = resolve_settings(Given(), profiles.load_profile(name))
        assert settings.api_key == key  # it is the key, yet no repr shows it
        assert key not in repr(settings) and key not in repr(settings.profile)


def test_an_unset_key_variable_is_shown_as_such(capsys, monkeypatch, tmp_path):
    path = write_config(tmp_path / "c.toml", '[profiles.p]\napi_key_env = "NOT_SET_HERE"\n')
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    code, stdout, _ = run(capsys, "config", "--json", "--profile", "p")
    row = json.loads(stdout)["settings"]["api_key"]
    assert code == 0 and row["value"] is False and "NOT_SET_HERE" in row["from"]


def test_a_failing_key_command_is_one_line_without_its_output(capsys, monkeypatch, tmp_path):
    script = f"import sys; print({US_KEY!r}); print({EU_KEY!r}, file=sys.stderr); sys.exit(3)"
    command = json.dumps([sys.executable, "-c", script])
    path = write_config(tmp_path / "c.toml", f"[profiles.p]\napi_key_command = {command}\n")
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    code, stdout, err = run(capsys, "export", "--profile", "p", "--base-url", "http://127.0.0.1:9")
    assert code == 1 and stdout == ""
    assert err.count("\n") == 1 and "exited 3" in err and f"{path}: line 2" in err
    assert US_KEY not in err and EU_KEY not in err


def test_a_key_command_that_is_not_there(capsys, monkeypatch, tmp_path):
    path = write_config(tmp_path / "c.toml", '[profiles.p]\napi_key_command = ["no-such-tool-x"]\n')
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    code, _, err = run(capsys, "config", "--profile", "p")
    assert code == 1 and err.count("\n") == 1 and "'no-such-tool-x' was not found" in err


def test_a_key_stored_in_the_file_is_refused_without_showing_it(capsys, monkeypatch, tmp_path):
    path = write_config(
        tmp_path / "c.toml", f"[profiles.p]\nbase_url = 'https://x'\napi_key = {quoted(US_KEY)}\n"
    )
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    code, stdout, err = run(capsys, "config", "--profile", "p")
    assert code == 1 and err.count("\n") == 1
    assert f"{path}: line 3" in err and "api_key_env" in err and US_KEY not in stdout + err


# --- the file: one line naming what and where ------------------------------------------------


def test_an_unknown_profile_names_it_and_the_file(capsys, monkeypatch, tmp_path):
    path = write_config(tmp_path / "c.toml", "[profiles.us]\n[profiles.eu]\n")
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    for argv, env in ((["--profile", "apac"], None), ([], "apac")):
        if env:
            monkeypatch.setenv("DIMS_PROFILE", env)
        code, _, err = run(capsys, "config", *argv)
        assert code == 1 and err.count("\n") == 1, err
        assert "'apac'" in err and str(path) in err and "eu, us" in err
        assert ("--profile" if argv else "DIMS_PROFILE") in err


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        ('[profiles.us]\nbase_url = "https://x"\nout = \n', 3, ["not valid TOML"]),
        ('[profiles.us]\nout = "a"\nout = "b"\n', 3, ["out given twice", "first on line 2"]),
        ('[profiles.us]\nbase_url = "https://x"\nbase_ulr = "y"\n', 3, ["unknown key 'base_ulr'"]),
        ('[profiles.us]\nworkspaces = "a"\ncode_host = "a/b"\n', 3, ["code_host", "one path"]),
        ("[profiles.us]\nworkspaces = [1, 2]\n", 2, ["workspaces", "list of workspace ids"]),
        ('[profiles.us]\napi_key_env = "A"\napi_key_command = ["x"]\n', 3, ["give one"]),
    ],
)
def test_a_malformed_file_is_one_line_with_file_and_line(capsys, monkeypatch, tmp_path, body, line,
                                                         words):  # fmt: skip
    path = write_config(tmp_path / "c.toml", body)
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    code, stdout, err = run(capsys, "export", "--profile", "us", "--out", str(tmp_path / "o"))
    assert code == 1 and stdout == "" and err.count("\n") == 1, err
    assert f"{path}: line {line}: " in err, err  # as every settings file's messages start
    for word in words:
        assert word in err, err
    assert not (tmp_path / "o").exists()


def test_a_config_file_named_but_missing(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DIMS_CONFIG", str(tmp_path / "nowhere.toml"))
    code, _, err = run(capsys, "config")
    assert code == 1 and "DIMS_CONFIG" in err and "nowhere.toml" in err


def test_xdg_config_home_is_honoured(monkeypatch, tmp_path):
    monkeypatch.delenv("DIMS_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert profiles.config_path() == tmp_path / "dims" / "config.toml"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")  # the XDG spec: absolute only
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert profiles.config_path() == tmp_path / "home" / ".config" / "dims" / "config.toml"


def test_the_default_profile_is_used_when_none_is_named(capsys, monkeypatch, tmp_path):
    path = write_config(tmp_path / "c.toml", '[profiles.default]\nbase_url = "https://x.example"\n')
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    found = json.loads(run(capsys, "config", "--json")[1])
    assert found["profile"] == "default"
    assert found["settings"]["base_url"]["value"] == "https://x.example"


# --- nothing set: one line, not the sandbox's address ------------------------------------------


def test_export_without_a_base_url_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("DIMS_BASE_URL", raising=False)
    code, stdout, err = run(capsys, "export", "--out", str(tmp_path / "o"))
    assert code == 1 and stdout == "" and err.count("\n") == 1
    assert "no base URL is set" in err and "--base-url" in err and "DIMS_BASE_URL" in err
    assert not (tmp_path / "o").exists()


def test_a_reading_command_names_the_folder_it_tried(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "report")
    assert code == 1 and err.count("\n") == 1
    assert str(tmp_path / "dims-data") in err and "DIMS_OUT" in err and "dims-demo" in err
    monkeypatch.setenv("DIMS_OUT", str(tmp_path / "elsewhere"))
    code, _, err = run(capsys, "report")
    assert code == 1 and str(tmp_path / "elsewhere") in err and "env DIMS_OUT" in err


def test_dims_out_serves_report_after_an_export(capsys, monkeypatch, tmp_path, sandbox):
    """`make demo` then plain `dims report` with DIMS_OUT naming the demo's folder."""
    out = tmp_path / "dims-demo"
    code, _, err = run(capsys, "export", "--base-url", sandbox.base_url, "--out", str(out))
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DIMS_OUT", str(out))
    code, stdout, err = run(capsys, "report", "--json")
    assert code == 0, err
    assert Path(json.loads(stdout)["folder"]).is_relative_to(out)


# --- the SDK reads the same profiles, resolved once -------------------------------------------


def test_the_sdk_takes_a_profile(monkeypatch, tmp_path, regions):
    """`Client(profile=…)` and `connect(profile=…)` resolve the file's profile like the CLI:
    the EU region's deployments, its key from the profile's command, its workspace."""
    import dims
    from dims._connection import connect

    us, eu = regions
    path = two_profiles(tmp_path / "c.toml", us, eu, tmp_path / "fleet")
    monkeypatch.setenv("DIMS_CONFIG", str(path))
    with dims.Client(profile="eu") as client:
        assert client.options.tenants == tuple(eu.fleet.tenant_ids())
        assert EU_KEY not in repr(client) and EU_KEY not in repr(client.options)
        ids = {str(m.id) for m in client.deployments.list(page_size=100)}
    assert ids == {r["id"] for r in eu.fleet.deployments}
    monkeypatch.setenv("DIMS_PROFILE", "eu")
    with connect() as plain:  # DIMS_PROFILE, read by connect() as by the CLI
        assert plain.get_httpx_client().base_url == eu.base_url
