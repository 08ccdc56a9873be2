"""Fleets off the sandbox's path (issue 35): numbers no cluster runs, and optional fields
absent across the whole fleet, through every command that prints or writes a figure.

- A resource figure no cluster runs (negative, or above 2^32) makes its deployment unpriced
  (`unreadable_quantity`), an anomaly with its reason, and no figure of `report`, `explain`,
  `metrics`, `check`, `diff` or `report --focus` negative, NaN or infinite. The totals are
  the independent sums of `fleet_math` over the raw records (which apply the rule on their
  own), so a fleet with such a deployment never costs less than the same fleet without it.
- A day written before the rule (schema 2: the figures in their columns, no
  `unreadable_values_json`) reads by the same rule.
- A fleet without one optional field anywhere (every numeric resource field in turn, the
  whole resource_spec, every deployment) reports and prints no traceback, and the unknown
  connection count is unknown (null), never 0.
"""

from __future__ import annotations

import copy
import json
import math
import re
import zlib
from pathlib import Path

import fleet_math as fm
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pv
import pyarrow.parquet as pq
import pytest
from cli_in_process import run

from dims import _reports as reports
from dims import _spec as spec
from dims._errors import UnreadableQuantityWarning
from dims.sandbox import generate_fleet

FROM, DATE = "2025-06-03", "2025-06-04"
TENANT = "7a6b5c4d-0000-4000-8000-00000000aaaa"
#: record name -> the figures it sends that no cluster runs (both spellings: redis_cpu)
HOSTILE = {
    "neg-cpu": {"cpu": -2},
    "huge-memory": {"memory_mb": 1e300, "memory_limit_mb": 2**33},
    "neg-scale": {"min_scale": -1},
    "neg-storage": {"db_storage_gi": -20, "db_cpu": 1, "db_memory_mb": 512},
    "neg-connections": {"db_max_connections": -5, "db_cpu": 1, "db_memory_mb": 512},
    "neg-cache": {"redis_cpu": -1, "redis_memory_mb": 256},
    "huge-queue-scale": {"queue_max_scale": 1e300, "queue_cpu": 1, "queue_memory_mb": 256},
}
RULES = """\
budgets:
  fleet: 1000000
  type=prod: 1000000
max_versions_behind: 50
min_share_on_newest: 0.0
no_unbounded_limits: true
no_inverted_scales: true
no_prod_at_dev_defaults: true
drift:
  max_increase_percent: 1000
"""
#: A figure printed as NaN or infinity, in any spelling a formatter or a JSON encoder uses.
_NOT_A_NUMBER = re.compile(r"(?<![A-Za-z_])(nan|NaN|inf|Inf|Infinity)(?![A-Za-z_])")


def _fleet() -> tuple[list[dict], dict[str, str]]:
    """A sandbox fleet with a listener and workspace on every record, and one record per
    entry of HOSTILE (a plain record sending those figures)."""
    fleet = generate_fleet(30, seed=13)
    records = copy.deepcopy(fleet.deployments)
    types = dict(fleet.deployment_types)
    for record in records:
        record["tenant_id"] = TENANT
        (record.setdefault("source_config", {})).setdefault(
            "listener_config", {"k8s_namespace": "a"}
        )
    for n, (name, sent) in enumerate(HOSTILE.items()):
        base = {"cpu": 1, "memory_mb": 1024, "cpu_limit": 2, "memory_limit_mb": 2048}
        record = {
            "id": f"0000000{n}-aaaa-4000-8000-000000000000",
            "name": name,
            "tenant_id": TENANT,
            "image_version": "0.4.2",
            "source_config": {
                "listener_config": {"k8s_namespace": "hostile"},
                "resource_spec": {**base, **sent},
            },
        }
        records.append(record)
        types[record["id"]] = "prod"
    return records, types


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, list[dict], list[dict]]:
    """Two days: FROM without the hostile records, DATE with them."""
    out = tmp_path_factory.mktemp("hostile")
    records, types = _fleet()
    clean = [r for r in records if r.get("name") not in HOSTILE]
    fm.export_fleet(clean, types, out, FROM)
    with pytest.warns(UnreadableQuantityWarning, match="resource_spec figure"):
        fm.export_fleet(records, types, out, DATE)
    return out, records, clean


def _plain_figures(value: object, where: str = "") -> None:
    """Every number in a JSON document finite, and never negative where it is money or a
    capacity (deltas of a comparison may be negative: they are changes, not figures)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _plain_figures(item, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            _plain_figures(item, where)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        assert math.isfinite(value), where
        if "delta" not in where and "cost_causes" not in where and "changes" not in where:
            assert value >= 0, (where, value)


def _clean_text(text: str) -> None:
    assert "Traceback" not in text, text
    assert "$-" not in text, text
    assert not _NOT_A_NUMBER.search(text), _NOT_A_NUMBER.search(text)


def test_the_totals_leave_out_what_no_cluster_runs_and_agree_with_the_raw_records(hostile):
    out, records, clean = hostile
    costs = reports.cost_by_deployment(out).set_index("name")
    for name in HOSTILE:
        assert costs.loc[name, "unpriced_reason"] == "unreadable_quantity", name
        assert costs.loc[name].filter(like="usd_month").isna().all(), name
    totals = reports.fleet_totals(out)
    assert totals["deployments_unpriced"] == sum(
        fm.status(r)["unpriced_reason"] is not None for r in records
    )
    for column in ("cost_request_max_scale_usd_month", "cost_limit_min_scale_usd_month"):
        assert totals[column] == pytest.approx(fm.fleet_cost(records, column), abs=0.01)
        # adding deployments never lowers a total: the hostile ones add nothing
        assert totals[column] == pytest.approx(fm.fleet_cost(clean, column), abs=0.01)
    for measure in ("cpu_request_cores_max_scale", "memory_limit_gib_min_scale", "db_storage_gib"):
        assert totals[measure] == pytest.approx(fm.fleet_sum(records, measure), abs=0.001)
    assert totals["replicas_min"] == sum(
        row["replicas_min"] or 0 for r in records for row in fm.components(r).values()
    )


def test_each_figure_is_an_anomaly_with_its_value_and_reason(hostile):
    out, records, _ = hostile
    found = reports.anomalies(out)
    mine = found[found["anomaly"] == "unreadable_quantity"]
    got = {
        (name, detail.split(" ")[0])
        for name, detail in zip(mine["name"], mine["detail"], strict=True)
    }
    want = {(r["name"], field) for r in records for field in fm.unreadable_figures(r)}
    assert got == want and len(mine) == len(want)
    neg = mine[mine["name"] == "neg-cpu"].iloc[0]
    assert neg["component"] == "main" and neg["detail"] == "cpu -2: negative: no cluster runs it"
    cache = mine[mine["name"] == "neg-cache"].iloc[0]
    assert cache["component"] == "cache" and cache["detail"].startswith("cache_cpu -1")
    # an unreadable figure was sent: it is no missing request, and no inverted scale
    others = found[found["name"].isin(list(HOSTILE))]["anomaly"]
    assert not set(others) & {"missing_resources", "resource_spec_absent", "scale_inverted"}


def test_no_command_prints_or_writes_a_negative_nan_or_infinite_figure(hostile, capsys, tmp_path):
    out, _, _ = hostile
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES, encoding="utf-8")
    focus = tmp_path / "bill.csv"
    runs = [
        ("report", "--out", str(out)),
        ("report", "--out", str(out), "--json"),
        ("report", "--out", str(out), "--focus", str(focus)),
        ("metrics", "--out", str(out)),
        ("check", "--out", str(out), "--rules", str(rules)),
        ("check", "--out", str(out), "--rules", str(rules), "--json"),
        ("diff", "--out", str(out)),
        ("diff", "--out", str(out), "--json"),
        *(("explain", "--out", str(out), name) for name in HOSTILE),
        *(("explain", "--out", str(out), name, "--json") for name in HOSTILE),
    ]
    for argv in runs:
        code, printed, err = run(capsys, *argv)
        assert code in (0, 1), (argv, err)  # check may fail a rule: never an error
        _clean_text(printed)
        assert "Traceback" not in err, err
        if "--json" in argv:
            _plain_figures(json.loads(printed))
        if argv[0] == "metrics":
            for line in printed.splitlines():
                if line and not line.startswith("#"):
                    value = float(line.rsplit(" ", 1)[1])
                    assert math.isfinite(value) and value >= 0, line
        if argv[0] == "explain" and "--json" not in argv:
            assert "unreadable_quantity" in printed and "null, not $0" in printed
    for path in (out / "reports" / f"snapshot_date={DATE}").glob("*.parquet"):
        _figures_in_file(pq.read_table(path), path.name)
    _clean_text(focus.read_text(encoding="utf-8"))
    _figures_in_file(pv.read_csv(focus), focus.name)


def _figures_in_file(table: pa.Table, name: str) -> None:
    """No NaN, infinite or negative number in any numeric column of a written table."""
    for column in table.column_names:
        values = table[column]
        if not pa.types.is_floating(values.type) and not pa.types.is_integer(values.type):
            continue
        if pa.types.is_floating(values.type):
            assert not pc.any(pc.is_nan(values)).as_py(), (name, column)
            assert not pc.any(pc.is_inf(values)).as_py(), (name, column)
        assert not pc.any(pc.less(values, 0)).as_py(), (name, column)


def test_a_day_of_schema_2_reads_its_figures_by_the_same_rule(hostile, tmp_path):
    """A day written before the rule holds the figures in their columns and lacks the
    column: the reports read it as an export now writes it."""
    out, _, _ = hostile
    old = tmp_path / "old"
    for table in ("deployments", "deployment_containers", "deployment_labels"):
        for path in (out / table).glob(f"snapshot_date={DATE}/*.parquet"):
            target = old / table / path.parent.name / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            written = pq.read_table(path)
            if table == "deployments":
                written = _as_schema_2(written)
            pq.write_table(written, target)
    snap = reports.load_snapshot(old)
    now = reports.cost_by_deployment(reports.load_snapshot(out, DATE))
    then = reports.cost_by_deployment(snap)
    assert then.equals(now)
    assert set(reports.anomalies(snap)["anomaly"]) >= {"unreadable_quantity"}


def _as_schema_2(deployments: pa.Table) -> pa.Table:
    """The figures put back in their columns, `unreadable_values_json` dropped."""
    texts = deployments["unreadable_values_json"].to_pylist()
    by_path = {f.dotted: f.name for f in spec.deployment_scalar_fields()}
    for column in {c for text in texts if text for c in (by_path[p] for p in json.loads(text))}:
        values = deployments[column].to_pylist()
        for n, text in enumerate(texts):
            sent = json.loads(text) if text else {}
            for path, value in sent.items():
                if by_path[path] == column:
                    values[n] = float(value)
        at = deployments.schema.get_field_index(column)
        deployments = deployments.set_column(at, column, pa.array(values, pa.float64()))
    return deployments.drop_columns(["unreadable_values_json"])


# --- optional fields absent across the whole fleet ------------------------------------------


def _plain(name: str, **resources: object) -> dict:
    return {
        "id": f"00000000-bbbb-4000-8000-{zlib.crc32(name.encode()):012d}",
        "name": name,
        "tenant_id": TENANT,
        "image_version": "1.0.0",
        "source_config": {"listener_config": {"k8s_namespace": "n"}, "resource_spec": resources},
    }


def _without(field: str) -> list[dict]:
    """The sandbox fleet with `field` taken out of every record (under both spellings)."""
    published = {v: k for k, v in spec.original_names()["ResourceSpec"].items()}
    records = copy.deepcopy(generate_fleet(8, seed=21).deployments)
    for record in records:
        record["tenant_id"] = TENANT
        resources = fm.resource_spec(record)
        resources.pop(field, None)
        resources.pop(published.get(field, field), None)
    return records


FLEETS = {
    "cpu and memory only": lambda: [
        _plain("a", cpu=1, memory_mb=1024),
        _plain("b", cpu=2, memory_mb=2048),
    ],
    "no resource_spec": lambda: [
        {k: v for k, v in _plain(n).items() if k != "source_config"} for n in "ab"
    ],
    "resource_spec null": lambda: [
        {**_plain(n), "source_config": {"resource_spec": None}} for n in "ab"
    ],
    "no deployment": lambda: [],
    **{
        f"without {field}": (lambda f=field: _without(f))
        for field in spec.resource_numeric_fields()
    },
}


def _dump(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.mark.parametrize("shape", list(FLEETS))
def test_a_fleet_without_an_optional_field_reports_without_a_traceback(shape, capsys, tmp_path):
    records = FLEETS[shape]()
    out = tmp_path / "data"
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES.split("drift:")[0], encoding="utf-8")
    dump = str(_dump(tmp_path, records))
    whole = not shape.startswith("without ") or shape == "without db_max_connections"
    for day in (FROM, DATE) if whole else (DATE,):
        code, _, err = run(capsys, "export", "--from-json", dump, "--out", str(out),
                           "--snapshot-date", day)  # fmt: skip
        assert code == 0, err
    argv = [
        ("report", "--out", str(out), "--json"),
        ("metrics", "--out", str(out)),
        *(("explain", "--out", str(out), r["id"]) for r in records[:1]),
    ]
    if whole:  # the whole round: every command, and a diff against the day before
        argv += [
            ("report", "--out", str(out), "--focus", str(tmp_path / "bill.csv")),
            ("check", "--out", str(out), "--rules", str(rules), "--json"),
            *(("explain", "--out", str(out), r["id"], "--json") for r in records[:2]),
            ("diff", "--out", str(out)),
            ("diff", "--out", str(out), "--json"),
        ]
    for args in argv:
        code, printed, err = run(capsys, *args)
        assert code in (0, 1) and "Traceback" not in err, (args, err)
        _clean_text(printed)
        if "--json" in args:
            _plain_figures(json.loads(printed))
    page = next((out / "reports").glob("*/report.html")).read_text(encoding="utf-8")
    assert not re.search(r">[^<]*(?<![A-Za-z_])(nan|inf)(?![A-Za-z_])[^<]*<", page), shape


def test_an_unknown_connection_count_is_unknown_not_zero(tmp_path):
    records = FLEETS["cpu and memory only"]()
    fm.export_fleet(records, {r["id"]: "dev" for r in records}, tmp_path, DATE)
    totals = reports.fleet_totals(tmp_path)
    assert math.isnan(totals["db_max_connections"])  # nothing known: never 0
    assert math.isnan(reports.db_capacity_total(tmp_path)["db_max_connections"])
    summary = reports.capacity_summary(tmp_path)
    assert summary["db_max_connections"].isna().all()
    known = [
        *records,
        _plain("c", cpu=1, memory_mb=1, db_cpu=1, db_memory_mb=1, db_max_connections=40),
    ]
    fm.export_fleet(known, {r["id"]: "dev" for r in known}, tmp_path / "known", DATE)
    assert reports.fleet_totals(tmp_path / "known")["db_max_connections"] == 40  # what is known
