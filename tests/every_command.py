"""Every command run over a fleet's dataset, each run and file held to tests/fleet_invariants.py.

The whole-CLI property tests (tests/cli/test_cli_properties.py) and the sandbox's spec-records
mode (tests/sandbox/test_sandbox_spec_records.py) share these steps: export (from a dump or
over HTTP) -> config (the dataset and a drawn workspace named) -> report (a FOCUS bill as
Parquet or CSV, `--by label:<a drawn key>`, `--by namespace`) -> metrics (text, OpenMetrics,
JSON) -> check (a budget, max_versions_behind) -> explain (a drawn deployment, by id) ->
catalog -> sql, and diff of two days. Each runs `dims`
in-process (tests/cli_in_process.py) and checks what it printed and wrote.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
from cli_in_process import Ran, run_captured
from fleet_invariants import (
    OTHER_SOURCES,
    assert_each_listed_once,
    assert_each_record_once,
    assert_sound_capacity,
    assert_sound_comment,
    assert_sound_figures,
    assert_sound_metrics,
    assert_sound_parquet,
    assert_sound_table,
    held,
    numeric_columns,
    read_day,
    strict_json,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from spec_records import HOSTILE

from dims import _reports as reports
from dims.sandbox import Fleet

DAY, LATER = date(2025, 6, 1), date(2025, 6, 2)
#: Exports fsync every file; on tmpfs that is free.
SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def a_fraction_of_the_profile(share: int) -> settings:
    """The profile's examples divided by `share` (at least 3): an example here is a CLI run
    per command, where the profile's count is set for one export."""
    return settings(
        max_examples=max(3, settings.default.max_examples // share),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


@contextlib.contextmanager
def scratch_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dims-cli-prop-", dir=SCRATCH) as folder:
        yield Path(folder)


def dims(*argv: str | Path) -> Ran:
    """`dims ARGV` in-process, held to the invariants every command keeps."""
    return held(run_captured(*map(str, argv)))


def dump(records: list[Any], path: Path, ascii_only: bool) -> Path:
    """The records as a JSON array (json, not orjson: integers past 64 bits are valid JSON),
    its text escaped to ASCII or raw UTF-8."""
    path.write_text(json.dumps(records, ensure_ascii=ascii_only), encoding="utf-8")
    return path


def export(records: list[Any], out: Path, day: date, ascii_only: bool = True) -> set[str]:
    """Export `records` on `day`; every record once or rejected. The ids exported.

    `--allow-empty`: a later day whose every record is rejected is published too (without
    it, dims refuses to put an empty snapshot over a dataset's latest: a documented exit 1).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    source = dump(records, out.parent / f"dump-{day}.json", ascii_only)
    ran = dims(
        "export", "--from-json", source, "--out", out, "--snapshot-date", day, "--allow-empty",
        "--json",
    )  # fmt: skip
    manifest = strict_json(ran.out)
    assert_sound_figures(manifest, "export --json")
    assert_sound_capacity(out, day)
    return assert_each_record_once(records, out, day, manifest)


# --- what a command line can name -----------------------------------------------------------


def addressable(key: str) -> bool:
    """A label key `--by label:KEY` can name: argv holds no NUL, commas separate keys, and
    a key is taken stripped."""
    return "\x00" not in key and "," not in key and key.strip() == key and bool(key)


def label_keys(out: Path) -> list[str]:
    labels = read_day(out, "deployment_labels", DAY).to_pylist()
    return sorted({r["key"] for r in labels if r["kind"] == "label" and addressable(r["key"])})


def by_label(keys: list[str], data: st.DataObject) -> list[str]:
    """One or two `--by label:KEY` of the fleet's keys, or of drawn ones."""
    drawn = HOSTILE.text.filter(addressable)
    pool = st.sampled_from(keys) | drawn if keys else drawn
    chosen = data.draw(st.lists(pool, min_size=1, max_size=2, unique=True), label="label keys")
    return [arg for key in chosen for arg in ("--by", f"label:{key}")]


# --- the commands ---------------------------------------------------------------------------


def check_report(out: Path, exported: set[str], data: st.DataObject) -> dict[str, Any]:
    """`dims report` with a FOCUS bill (Parquet or CSV) and allocations: every file it wrote
    sound, every allocation counting each deployment once, one table each."""
    by = [*by_label(label_keys(out), data), "--by", "namespace"]
    bill = out.parent / data.draw(st.sampled_from(["bill.parquet", "bill.csv"]), label="FOCUS")
    version = data.draw(st.sampled_from(reports.FOCUS_VERSIONS), label="FOCUS version")
    focus = ("--focus", bill, "--focus-version", version)
    summary = strict_json(dims("report", "--out", out, "--json", *focus, *by).out)
    assert summary["focus"]["focus_version"] == version
    assert_sound_figures(summary, "report --json")
    folder = Path(summary["folder"])
    for written in folder.glob("*.parquet"):
        assert_sound_parquet(written)
    if bill.suffix == ".csv":
        assert_sound_table(focus_csv(bill, version), bill.name)
    else:
        assert_sound_parquet(bill)
    for key, groups in summary["by"].items():
        assert sum(g["deployments"] for g in groups) == len(exported), key
    tables = sorted(p.name for p in folder.glob("cost_by_*.parquet"))
    tables.remove("cost_by_deployment.parquet")  # the report's own, not an allocation
    assert len(tables) == len(summary["by"]) == len(by) // 2, (tables, list(summary["by"]), by)
    return summary


def focus_csv(path: Path, version: str = reports.FOCUS_VERSION) -> pa.Table:
    """A FOCUS CSV read back with the bill's own types (its numbers as numbers, its text as
    text whatever it looks like: a name `-1` is no figure)."""
    schema = reports.FOCUS_SCHEMAS[version]
    types = {f.name: f.type if f.name in numeric_columns(schema) else pa.string() for f in schema}
    options = pacsv.ConvertOptions(column_types=types, strings_can_be_null=True)
    return pacsv.read_csv(path, convert_options=options)


def check_metrics(out: Path) -> None:
    assert_sound_metrics(dims("metrics", "--out", out).out, openmetrics=False)
    assert_sound_metrics(dims("metrics", "--out", out, "--openmetrics").out, openmetrics=True)
    assert_sound_figures(strict_json(dims("metrics", "--out", out, "--json").out), "metrics")


def check_check(out: Path, data: st.DataObject) -> None:
    """`dims check` with a budget and max_versions_behind: the same verdict as text, as JSON
    and as a pull-request comment; each violation one line, and a comment whose service text
    neither breaks its tables nor forges a line."""
    budget = data.draw(st.sampled_from([0, 100, 10**9]), label="budget")
    rules = out.parent / "rules.yaml"
    rules.write_text(f"budgets:\n  fleet: {budget}\nmax_versions_behind: 1\n", encoding="utf-8")
    as_text = dims("check", "--rules", rules, "--out", out)
    as_json = dims("check", "--rules", rules, "--out", out, "--json")
    verdict = strict_json(as_json.out)
    assert as_text.code == as_json.code == (0 if verdict["passed"] else 1)
    counts = verdict["counts"]
    lines = as_text.out.splitlines()
    assert len(lines) == counts["violations"] + counts["notices"] + 1, lines
    assert sum(line.startswith("FAIL ") for line in lines) == counts["violations"], lines
    for rule in verdict["rules"]:
        for violation in rule["violations"]:
            assert_sound_figures(violation, "check --json", signed=lambda path: False)
    host = data.draw(st.sampled_from(["markdown", "github", "gitlab"]), label="comment for")
    body = dims("check", "--rules", rules, "--out", out, "--format", host)
    assert body.code == as_json.code
    assert_sound_comment(body.out.removesuffix("\n"), host)
    table = [line for line in body.out.splitlines() if line.startswith("| ")]
    assert len(table) >= counts["violations"] + 2 * bool(counts["violations"]), table


def check_explain(out: Path, exported: set[str], data: st.DataObject) -> None:
    if not exported:
        return
    deployment = data.draw(st.sampled_from(sorted(exported)), label="explained")
    explained = strict_json(dims("explain", deployment, "--out", out, "--json").out)
    assert explained["deployment_id"] == deployment
    assert_sound_figures(explained, "explain --json")
    dims("explain", deployment, "--out", out)


def check_catalog_and_sql(out: Path, exported: set[str]) -> None:
    """The catalog's views open and count what was exported; `dims sql` prints service text
    as data, as a table and as JSON."""
    catalog = out.parent / "catalog.duckdb"
    views = strict_json(dims("catalog", catalog, "--out", out, "--json").out)["views"]
    with contextlib.closing(duckdb.connect(str(catalog), read_only=True)) as db:
        for view in views:
            db.execute(f'select count(*) from "{view.replace(chr(34), chr(34) * 2)}"')
        assert db.execute("select count(*) from deployments").fetchone() == (len(exported),)
    query = "select id, name, k8s_namespace, image_version, unknown_fields_json from deployments"
    dims("sql", "--out", out, query)
    rows = strict_json(dims("sql", "--out", out, "--json", query).out)
    assert sorted(row["id"] for row in rows) == sorted(exported)


def check_diff(out: Path, first: set[str], second: set[str]) -> None:
    """`dims diff` of the two days: added and removed are the ids each day exported."""
    changes = out.parent / "changes.parquet"
    result = strict_json(dims("diff", "--out", out, "--json", "--changes-out", changes).out)
    assert_sound_figures(result, "diff --json")
    assert result["counts"]["added"] == len(second - first), result["counts"]
    assert result["counts"]["removed"] == len(first - second), result["counts"]
    if changes.exists():
        assert_sound_parquet(changes, signed=lambda name: "delta" in name)
    dims("diff", "--out", out)


def check_history_by(out: Path) -> None:
    """`dims history --by` over the two days: each change is after - before, and none of its
    figures is invented (an unpriced side is null, never $0)."""
    result = strict_json(dims("history", "--out", out, "--by", "label:team", "--json").out)
    assert_sound_figures(result, "history --json", signed=lambda path: "change" in path)
    for change in result["changes"]:
        if change["before"] is None or change["after"] is None:
            assert change["change"] is None, change
        else:
            assert abs(change["after"] - change["before"] - change["change"]) < 1e-6, change
    dims("history", "--out", out, "--by", "type", "--by", "namespace,workspace")


#: A key given to `dims config`: no output may hold it.
CONFIG_KEY = "sk-config-canary-5f0c2e"


def check_config(out: Path, data: st.DataObject) -> None:
    """`dims config` naming this dataset and a drawn workspace id: the id shown as given, or
    refused in one line (one no header can carry); the key shown only as set, in both forms."""
    drawn = HOSTILE.text.filter(lambda t: "\x00" not in t and "," not in t and t.strip() == t)
    tenant = data.draw(st.sampled_from(["ws-eu", "tenant_1"]) | drawn.filter(bool), label="ws")
    argv = ("config", "--out", out, "--tenant-id", tenant, "--api-key", CONFIG_KEY)
    ran = dims(*argv, "--json")
    assert CONFIG_KEY not in ran.out + ran.err
    if ran.code == 0:
        shown = strict_json(ran.out)["settings"]
        assert shown["out"] == {"value": str(out), "from": "flag --out"}
        assert shown["workspaces"]["value"] == [tenant]
        assert shown["api_key"] == {"value": True, "from": "flag --api-key"}
    else:
        assert ran.out == "" and ran.err.count("\n") == 1, ran.err
    text = dims(*argv)
    assert CONFIG_KEY not in text.out + text.err and text.code == ran.code


def check_help_and_completion(out: Path, data: st.DataObject) -> None:
    """`dims help` of a drawn command is its `--help`; a completion script names every
    command; `--quiet` keeps a result and prints nothing else."""
    from dims._cli._parser import COMMANDS

    name = data.draw(st.sampled_from(sorted(COMMANDS)), label="help of")
    assert dims("help", name).out == dims(name, "--help").out
    shell = data.draw(st.sampled_from(["bash", "zsh", "fish"]), label="completion")
    script = dims("completion", shell).out
    assert all(command in script for command in COMMANDS)
    quiet = dims("--quiet", "sql", "--out", out, "--format", "json", "select 1 as one")
    assert quiet.err == "" and strict_json(quiet.out) == [{"one": 1}]


def every_command(out: Path, exported: set[str], data: st.DataObject) -> None:
    """Every command that reads one day of the dataset (and `dims config` naming it), held
    to the invariants."""
    check_config(out, data)
    check_report(out, exported, data)
    check_metrics(out)
    check_check(out, data)
    check_explain(out, exported, data)
    check_catalog_and_sql(out, exported)
    check_help_and_completion(out, data)


def export_from_service(fleet: Fleet, base_url: str, out: Path, day: date) -> set[str]:
    """`dims export` of the sandbox serving `fleet`, over HTTP on `day`: every deployment,
    provider and repository once or rejected. The ids exported."""
    ran = dims("export", "--base-url", base_url, "--out", out, "--snapshot-date", day, "--json")
    manifest = strict_json(ran.out)
    assert_sound_figures(manifest, "export --json")
    assert_sound_capacity(out, day)
    rejected = read_day(out, "rejected_records", day)
    providers = read_day(out, "oauth_providers", day)
    assert_each_listed_once(len(fleet.providers), providers, rejected, OTHER_SOURCES[0])
    repositories = sum(len(repos) for repos in fleet.repositories.values())
    listed = read_day(out, "repositories", day)
    assert_each_listed_once(repositories, listed, rejected, OTHER_SOURCES[1])
    return assert_each_record_once(fleet.deployments, out, day, manifest)
