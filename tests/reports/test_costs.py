"""Monthly costs equal an independent computation; price files and options fail in one line.

The expected dollars come from the raw fleet dicts and the rates written out in
tests/fleet_math.py (never from analysis.reports); the dataset is written by the real export,
the report files are read back with pyarrow and DuckDB, and `dims report` runs in-process.
"""

from __future__ import annotations

import os

import duckdb
import fleet_math as fm
import pyarrow.parquet as pq
import pytest
from cli_in_process import run as _run

from analysis import reports

DATE = "2025-06-03"  # of the snapshots the tests below export themselves
PROD_RATES = {"cpu_core_hour": 0.05, "memory_gib_hour": 0.01, "storage_gib_month": 0.1}


# `fleet` and `dataset` (tests/reports/conftest.py): one fleet, exported once.


def _rates_of(fleet, prod: dict[str, float] | None = None):
    def rates(record: dict) -> dict[str, float]:
        if prod is not None and fleet.deployment_types[record["id"]] == "prod":
            return {**fm.OPENCOST_RATES, **prod}
        return fm.OPENCOST_RATES

    return rates


def test_cost_by_deployment_equals_independent_dollars(fleet, dataset) -> None:
    costs = reports.cost_by_deployment(dataset).set_index("deployment_id")
    assert len(costs) == len(fleet.deployments)
    for record in fleet.deployments:
        want = fm.monthly_costs(record)
        for column, value in want.items():
            assert costs.loc[record["id"], column] == pytest.approx(value, rel=1e-9, abs=1e-9)
    ordered = costs["cost_request_max_scale_usd_month"].tolist()
    assert ordered == sorted(ordered, reverse=True)  # most expensive first


def test_per_type_overrides_from_yaml_and_toml_agree(tmp_path, fleet, dataset) -> None:
    yaml_file = tmp_path / "prices.yaml"
    yaml_file.write_text(
        "hours_per_month: 730\ntypes:\n  prod:\n"
        + "".join(f"    {k}: {v}\n" for k, v in PROD_RATES.items()),
        encoding="utf-8",
    )
    toml_file = tmp_path / "prices.toml"
    toml_file.write_text(
        "[types.prod]\n" + "".join(f"{k} = {v}\n" for k, v in PROD_RATES.items()),
        encoding="utf-8",
    )
    rates = _rates_of(fleet, PROD_RATES)
    for path in (yaml_file, toml_file):
        prices = reports.load_prices(path)
        by_type = reports.capacity_by_type(dataset, prices).set_index("deployment_type")
        for kind in ("dev", "dev_free", "prod"):
            mine = [r for r in fleet.deployments if fleet.deployment_types[r["id"]] == kind]
            for column in ("cost_request_min_scale_usd_month", "cost_limit_max_scale_usd_month"):
                want = sum(fm.monthly_costs(r, rates(r))[column] for r in mine)
                assert by_type.loc[kind, column] == pytest.approx(want), (path.name, kind)
        totals = reports.fleet_totals(dataset, prices)
        want = sum(
            fm.monthly_costs(r, rates(r))["cost_request_max_scale_usd_month"]
            for r in fleet.deployments
        )
        assert totals["cost_request_max_scale_usd_month"] == round(want, 2)


def test_costs_per_component_and_namespace_add_up(fleet, dataset) -> None:
    want = sum(fm.monthly_costs(r)["cost_limit_min_scale_usd_month"] for r in fleet.deployments)
    for frame in (
        reports.capacity_by_component(dataset),
        reports.capacity_by_namespace(dataset),
        reports.capacity_summary(dataset),
    ):
        assert frame["cost_limit_min_scale_usd_month"].sum() == pytest.approx(want)


def test_hours_per_month_and_base_rates_scale_costs(tmp_path, fleet, dataset) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("hours_per_month: 720\nstorage_gib_month: 0\n", encoding="utf-8")
    prices = reports.load_prices(path).with_rates(cpu_core_hour=0.02)
    rates = {**fm.OPENCOST_RATES, "cpu_core_hour": 0.02, "storage_gib_month": 0.0}
    costs = reports.cost_by_deployment(dataset, prices).set_index("deployment_id")
    for record in fleet.deployments[:10]:
        want = fm.monthly_costs(record, rates, hours=720)["cost_request_max_scale_usd_month"]
        assert costs.loc[record["id"], "cost_request_max_scale_usd_month"] == pytest.approx(want)


def test_rightsizing_says_what_each_suggestion_saves(tmp_path, fleet) -> None:
    records = [dict(r) for r in fleet.deployments[:40]]
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    dev = next(r for r in records if types[r["id"]] == "dev" and fm.resource_spec(r))
    source = dict(dev["source_config"])
    spec = {**source["resource_spec"], "cpu": 4, "memory_mb": 8192, "max_scale": 3}
    source["resource_spec"] = spec
    dev["source_config"] = source
    fm.export_fleet(records, types, tmp_path, DATE)
    signals = reports.rightsizing(tmp_path).set_index("deployment_id")
    r = fm.OPENCOST_RATES
    now = 3 * (4 * r["cpu_core_hour"] + 8 * r["memory_gib_hour"]) * fm.HOURS_PER_MONTH
    after = 1 * (1 * r["cpu_core_hour"] + 1 * r["memory_gib_hour"]) * fm.HOURS_PER_MONTH
    assert signals.loc[dev["id"], "signal"] == "dev_above_dev_defaults"
    assert signals.loc[dev["id"], "savings_usd_month"] == pytest.approx(now - after)
    assert "development defaults" in signals.loc[dev["id"], "suggestion"]
    prod = signals[signals["signal"] == "prod_at_dev_defaults"]
    assert (prod["savings_usd_month"] == 0).all()  # a review saves nothing


BAD_FILES = [
    ("unknown.yaml", "cpu_core_hour: 0.03\ngpu_hour: 1\n", "gpu_hour"),
    ("negative.yaml", "memory_gib_hour: -0.1\n", "memory_gib_hour"),
    ("text.yaml", "storage_gib_month: cheap\n", "storage_gib_month"),
    ("type.yaml", "types:\n  prod:\n    cpu_core_hour: x\n", "types.prod.cpu_core_hour"),
    ("typekey.yaml", "types:\n  prod:\n    cpu: 1\n", "types.prod.cpu"),
    ("broken.yaml", "cpu_core_hour: [1,\n", "line"),
    ("list.yaml", "- 1\n- 2\n", "mapping"),
    ("broken.toml", "cpu_core_hour = \n", "TOML"),
    ("bool.toml", "hours_per_month = true\n", "hours_per_month"),
]


@pytest.mark.parametrize(("name", "content", "key"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_price_files_name_file_and_key(tmp_path, name, content, key) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(reports.PriceSheetError) as caught:
        reports.load_prices(path)
    message = str(caught.value)
    assert len(message.splitlines()) == 1, message
    assert name in message and key in message, message


def test_cli_bad_price_file_is_one_line_and_writes_nothing(capsys, tmp_path, dataset) -> None:
    bad = tmp_path / "prices.yaml"
    bad.write_text("cpu_core_hour: 0.03\nram_hour: 1\n", encoding="utf-8")
    out = tmp_path / "data"
    fm.export_fleet([], {}, out, DATE)
    code, _, err = _run(capsys, "report", "--out", str(out), "--prices", str(bad))
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "prices.yaml" in err and "ram_hour" in err, err
    assert not (out / "reports").exists()
    code, _, err = _run(capsys, "report", "--out", str(out), "--cpu-hour", "-1")
    assert code == 1 and "cpu_core_hour" in err and len(err.strip().splitlines()) == 1, err
    code, _, err = _run(capsys, "report", "--out", str(out), "--prices", str(tmp_path / "no"))
    assert code == 1 and "no" in err and "cannot read" in err, err


def test_cli_prices_reach_the_report_files(capsys, tmp_path, fleet) -> None:
    out = tmp_path / "data"
    fm.export_fleet(fleet.deployments, fleet.deployment_types, out, DATE)
    sheet = tmp_path / "prices.toml"
    sheet.write_text("[types.prod]\nmemory_gib_hour = 0.01\n", encoding="utf-8")
    argv = ["report", "--out", str(out), "--prices", str(sheet), "--cpu-hour", "0.05"]
    code, _, err = _run(capsys, *argv, "--storage-gib-month", "0.2")
    assert code == 0, err
    folder = out / "reports" / f"snapshot_date={DATE}"
    table = pq.read_table(folder / "cost_by_deployment.parquet")
    assert table.schema.metadata[b"dims_report"] == b"cost_by_deployment"
    got = dict(
        zip(
            *table.select(["deployment_id", "cost_request_max_scale_usd_month"])
            .to_pydict()
            .values(),
            strict=True,
        )
    )
    for record in fleet.deployments:
        rates = {**fm.OPENCOST_RATES, "cpu_core_hour": 0.05, "storage_gib_month": 0.2}
        if fleet.deployment_types[record["id"]] == "prod":
            rates["memory_gib_hour"] = 0.01
        want = fm.monthly_costs(record, rates)["cost_request_max_scale_usd_month"]
        assert got[record["id"]] == pytest.approx(want)
    fleet_cost = duckdb.sql(
        f"select sum(cost_limit_max_scale_usd_month) from "
        f"read_parquet('{folder / 'capacity_summary.parquet'}')"
    ).fetchall()[0][0]
    assert fleet_cost == pytest.approx(sum(table["cost_limit_max_scale_usd_month"].to_pylist()))
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "$0.05 per core-hour" in page and "price file prices.toml" in page


def test_report_files_get_the_dataset_permissions(tmp_path, fleet) -> None:
    out = tmp_path / "data"
    fm.export_fleet(fleet.deployments[:5], fleet.deployment_types, out, DATE)
    previous = os.umask(0o022)
    try:
        folder = reports.write_report(out).parent
        assert {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir()} == {
            name: 0o644
            for name in (
                "report.html",
                "capacity_summary.parquet",
                "cost_by_deployment.parquet",
                "image_version_summary.parquet",
            )
        }
        os.umask(0o027)
        reports.write_report(out)
        assert (folder / "report.html").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(previous)
    dataset_file = next((out / "deployments").rglob("*.parquet"))
    assert dataset_file.stat().st_mode & 0o777 == 0o644


def test_price_option_help_names_the_defaults(capsys) -> None:
    """The help repeats the defaults as text; this keeps it equal to DEFAULT_PRICES."""
    code, text, _ = _run(capsys, "report", "--help")
    assert code == 0
    text = " ".join(text.split())  # argparse wraps lines
    defaults = reports.DEFAULT_PRICES
    for value in (defaults.cpu_core_hour, defaults.memory_gib_hour, defaults.storage_gib_month):
        assert f"default {value:g})" in text, value
    assert f"{reports.HOURS_PER_MONTH:g} hours a month" in text
