"""Monthly costs equal an independent computation; price files and options fail in one line.

The expected dollars come from the raw fleet dicts and the rates written out in
tests/fleet_math.py (never from dims._reports); the dataset is written by the real export,
the report files are read back with pyarrow and DuckDB, and `dims report` runs in-process.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import tracemalloc

import duckdb
import fleet_math as fm
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from cli_in_process import run as _run

from dims import _reports as reports
from dims._errors import UnreadableQuantityWarning

DATE = "2025-06-03"  # of the snapshots the tests below export themselves
PROD_RATES = {"cpu_core_hour": 0.05, "memory_gib_hour": 0.01, "storage_gib_month": 0.1}


# `fleet` and `dataset` (tests/reports/conftest.py): one fleet, exported once.


def _rates_of(fleet, prod: dict[str, float] | None = None):
    def rates(record: dict) -> dict[str, float]:
        if prod is not None and fleet.deployment_types[record["id"]] == "prod":
            return {**fm.OPENCOST_RATES, **prod}
        return fm.OPENCOST_RATES

    return rates


def same(got: object, want: float | None) -> bool:
    """A report's figure equals the independent one: null where that one is None."""
    if want is None:
        return bool(pd.isna(got))
    return got == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_cost_by_deployment_equals_independent_dollars(fleet, dataset) -> None:
    costs = reports.cost_by_deployment(dataset).set_index("deployment_id")
    assert len(costs) == len(fleet.deployments)
    for record in fleet.deployments:
        want = fm.monthly_costs(record)
        for column, value in want.items():
            assert same(costs.loc[record["id"], column], value), (record["id"], column)
        state = fm.status(record)
        row = costs.loc[record["id"]]
        assert bool(row["limits_unbounded"]) == state["limits_unbounded"]
        assert bool(row["scale_inverted"]) == state["scale_inverted"]
        assert (
            same(row["unpriced_reason"], None)
            if state["unpriced_reason"] is None
            else (row["unpriced_reason"] == state["unpriced_reason"])
        )
    ordered = costs["cost_request_max_scale_usd_month"].tolist()
    priced = [c for c in ordered if not pd.isna(c)]
    assert ordered[: len(priced)] == sorted(priced, reverse=True)  # most expensive first
    assert all(pd.isna(c) for c in ordered[len(priced) :])  # unpriced last, never $0


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
        by_type = reports.capacity_by(dataset, ["deployment_type"], prices).set_index(
            "deployment_type"
        )
        for kind in ("dev", "dev_free", "prod"):
            mine = [r for r in fleet.deployments if fleet.deployment_types[r["id"]] == kind]
            for column in ("cost_request_min_scale_usd_month", "cost_limit_max_scale_usd_month"):
                want = fm.fleet_cost(mine, column, rates)
                assert by_type.loc[kind, column] == pytest.approx(want), (path.name, kind)
        totals = reports.fleet_totals(dataset, prices)
        want = fm.fleet_cost(fleet.deployments, "cost_request_max_scale_usd_month", rates)
        assert totals["cost_request_max_scale_usd_month"] == round(want, 2)


def test_costs_per_component_and_namespace_add_up(fleet, dataset) -> None:
    want = fm.fleet_cost(fleet.deployments, "cost_limit_min_scale_usd_month")
    for frame in (
        reports.capacity_by(dataset, ["component"]),
        reports.capacity_by(dataset, ["k8s_namespace"]),
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
        assert same(costs.loc[record["id"], "cost_request_max_scale_usd_month"], want)


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
    # issue 27: hostile sheets, each one short line naming the file and the key
    ("digits.yaml", "cpu_core_hour: " + "9" * 400 + "\n", "cpu_core_hour"),
    ("digits.toml", "[types.prod]\nstorage_gib_month = " + "9" * 400 + "\n", "storage_gib_month"),
    ("toolong.yaml", "memory_gib_hour: " + "9" * 5000 + "\n", "cannot read a value"),
    ("maxfloat.yaml", "cpu_core_hour: 1.0e+308\n", "cpu_core_hour"),
    ("inf.toml", "memory_gib_hour = inf\n", "memory_gib_hour"),
    ("nan.toml", "memory_gib_hour = nan\n", "memory_gib_hour"),
    ("month.yaml", "hours_per_month: 745\n", "hours_per_month"),
    ("listed.yaml", "cpu_core_hour: [" + "1, " * 20000 + "1]\n", "cpu_core_hour"),
    ("longtext.yaml", "storage_gib_month: " + "x" * 50000 + "\n", "storage_gib_month"),
    ("longkey.yaml", "k" * 1000 + ": 1\n", "k" * 40),
    ("longtype.yaml", "types:\n  " + "t" * 1000 + ": {cpu_core_hour: x}\n", "types." + "t" * 40),
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
    assert len(message) < 300, message  # what it quotes of the file, shortened


#: YAML anchors and aliases: a few lines that stand for a value larger than memory (six levels
#: of nine aliases: 531,441 numbers, a 1.6 MB error message before issue 27, 9 GB at ten).
ALIAS_BOMB = "cpu_core_hour:\n  - &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
    f"  - &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcde", "bcdef", strict=True)
)
REFUSED_YAML = [
    ("bomb.yaml", ALIAS_BOMB, "line 2"),
    ("anchor.yaml", "cpu_core_hour: &rate 0.03\n", "line 1"),
    ("merge.yaml", "types:\n  dev: &d {cpu_core_hour: 1}\n  prod: {<<: *d}\n", "line 2"),
]


@pytest.mark.parametrize(
    ("name", "content", "line"), REFUSED_YAML, ids=[r[0] for r in REFUSED_YAML]
)
def test_yaml_anchors_and_aliases_are_refused(tmp_path, name, content, line) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(reports.PriceSheetError) as caught:
            reports.load_prices(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert (
        message
        == f"{path}: {line}: YAML anchors and aliases (& and *) are not allowed in a price file"
    )
    assert peak < 2**20, peak  # nothing the aliases stand for was built


def test_oversized_and_deeply_nested_price_files_are_one_line(tmp_path) -> None:
    cases = {
        "large.yaml": ("cpu_core_hour: " + "[" * 100_000 + "]" * 100_000, "larger than 64 KiB"),
        "deep.yaml": ("cpu_core_hour: " + "[" * 30_000 + "]" * 30_000, "nested too deeply"),
        "deep.toml": ("cpu_core_hour = " + "[" * 30_000 + "]" * 30_000, "nested too deeply"),
        "tables.toml": ("a = " + "{b = " * 10_000 + "1" + "}" * 10_000, "nested too deeply"),
    }
    for name, (content, problem) in cases.items():
        path = tmp_path / name
        path.write_text(content + "\n", encoding="utf-8")
        with pytest.raises(reports.PriceSheetError) as caught:
            reports.load_prices(path)
        assert str(caught.value).startswith(f"{path}: ") and problem in str(caught.value), name


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
    # a scenario of its own, beside (never over) the default report
    folder = out / "reports" / "prices=prices-cpu0.05-storage0.2" / f"snapshot_date={DATE}"
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
        assert same(got[record["id"]], want)
    fleet_cost = duckdb.sql(
        f"select sum(cost_limit_max_scale_usd_month) from "
        f"read_parquet('{folder / 'capacity_summary.parquet'}')"
    ).fetchall()[0][0]
    per_deployment = table["cost_limit_max_scale_usd_month"].to_pylist()
    assert None in per_deployment  # unbounded and unpriced deployments: null, never $0
    assert fleet_cost == pytest.approx(sum(c for c in per_deployment if c is not None))
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
                "capacity_by_workspace.parquet",
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


def test_a_rate_that_overflows_the_fleets_cost_is_refused(tmp_path, dataset) -> None:
    """Finite rates whose monthly cost is not (1e305 $/core-hour × 730 h × the fleet's cores):
    refused where the fleet is known, naming the rate, never a report of `$inf`."""
    sheets = {
        "base.yaml": ("cpu_core_hour: 1.0e+305\n", "cpu_core_hour: $1e+305 per core-hour"),
        "prod.toml": (
            "[types.prod]\nmemory_gib_hour = 1e303\n",
            "types.prod.memory_gib_hour: $1e+303 per GiB-hour",
        ),
        "disk.yaml": ("storage_gib_month: 1.0e+305\n", "storage_gib_month: $1e+305 per GiB-month"),
    }
    for name, (content, said) in sheets.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        prices = reports.load_prices(path)  # each rate alone is a number a month can price
        by_type = functools.partial(reports.capacity_by, by=["deployment_type"])
        for costs in (by_type, reports.cost_by_deployment, reports.fleet_totals):
            with pytest.raises(reports.PriceSheetError) as caught:
                costs(dataset, prices=prices)
            message = str(caught.value)
            assert message.startswith(f"price file {name}: {said}"), message
            assert "more than $1e+300" in message and len(message.splitlines()) == 1, message


def test_an_absurd_quantity_is_not_blamed_on_a_rate(tmp_path, fleet) -> None:
    """1e300 cores pass the ceiling at any rate: the record's problem, not the price sheet's.
    Beyond 2^32 it is a figure no cluster runs: the deployment is unpriced, no figure infinite."""
    records = copy.deepcopy(fleet.deployments[:10])
    record = next(r for r in records if fm.resource_spec(r))
    fm.resource_spec(record)["cpu"] = 1e300
    with pytest.warns(UnreadableQuantityWarning, match="1 resource_spec figure"):
        fm.export_fleet(records, fleet.deployment_types, tmp_path, DATE)
    by_type = reports.capacity_by(
        tmp_path, ["deployment_type"]
    )  # no PriceSheetError: the rate is fine
    figures = by_type.select_dtypes("number").to_numpy("float64")
    assert np.isfinite(figures[~np.isnan(figures)]).all()
    assert by_type["deployments_unpriced"].sum() == 1
    costs = reports.cost_by_deployment(tmp_path).set_index("deployment_id")
    assert costs.loc[record["id"], "unpriced_reason"] == "unreadable_quantity"


def test_cli_hostile_price_sheets_exit_1_and_write_nothing(capsys, tmp_path, fleet) -> None:
    out = tmp_path / "data"
    fm.export_fleet(fleet.deployments[:20], fleet.deployment_types, out, DATE)
    sheet = tmp_path / "prices.yaml"
    for content, key in (
        ("cpu_core_hour: 1.0e+308\n", "cpu_core_hour"),  # a month of it is not a number
        ("memory_gib_hour: 1.0e+305\n", "memory_gib_hour"),  # the fleet's month is not
        ("storage_gib_month: " + "9" * 400 + "\n", "storage_gib_month"),
        (ALIAS_BOMB, "aliases"),
        ("cpu_core_hour: " + "[" * 30_000 + "]" * 30_000 + "\n", "nested too deeply"),
    ):
        sheet.write_text(content, encoding="utf-8")
        code, _, err = _run(capsys, "report", "--out", str(out), "--prices", str(sheet))
        assert code == 1, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert "prices.yaml" in err and key in err, err
        assert not (out / "reports").exists()
    code, _, err = _run(capsys, "report", "--out", str(out), "--gib-hour", "1e306")
    assert code == 1 and "gib_hour" in err and len(err.strip().splitlines()) == 1, err


def test_override_for_a_type_nobody_has_is_a_warning(capsys, tmp_path, fleet) -> None:
    """`prdo` (a typo) is named with the known types, the dataset's and the spec's; an
    override for a spec type the fleet lacks, or for the fleet's own new type, is not."""
    records = fleet.deployments[:20]
    types = {r["id"]: "dev_zero" if n % 2 else "prod" for n, r in enumerate(records)}
    out = tmp_path / "data"
    fm.export_fleet(records, types, out, DATE)
    sheet = tmp_path / "prices.yaml"
    sheet.write_text(
        "types:\n  prdo: {cpu_core_hour: 1}\n  dev_free: {cpu_core_hour: 2}\n"
        "  dev_zero: {cpu_core_hour: 3}\n",
        encoding="utf-8",
    )
    code, _, err = _run(capsys, "report", "--out", str(out), "--prices", str(sheet))
    assert code == 0, err
    assert err.strip().splitlines() == [
        "dims: warning: price file prices.yaml: types.prdo: no deployment has this type, so its "
        "prices apply to none (known types: dev, dev_free, dev_zero, prod)"
    ]
    assert (out / "reports" / "prices=prices" / f"snapshot_date={DATE}" / "report.html").is_file()
    with pytest.warns(reports.UnknownPriceTypeWarning, match=r"types\.prdo"):
        reports.write_report(out, prices=reports.load_prices(sheet))


def test_allocation_by_team_equals_independent_sums(capsys, tmp_path, fleet) -> None:
    """`dims report --by label:team`: each team's month (requests at max scale) is the sum of
    its deployments' independent figures, the unpriced counted and left out (never $0),
    deployments without the label in `__unallocated__`; the terminal shows the same rows."""
    out = tmp_path / "data"
    fm.export_fleet(fleet.deployments, fleet.deployment_types, out, DATE)
    want: dict[str, float] = {}
    unpriced: dict[str, int] = {}
    for record in fleet.deployments:
        spec = (record.get("source_config") or {}).get("resource_spec") or {}
        team = (spec.get("labels") or {}).get("team", reports.UNALLOCATED)
        cost = fm.monthly_costs(record)["cost_request_max_scale_usd_month"]
        want[team] = want.get(team, 0.0) + (cost or 0.0)
        unpriced[team] = unpriced.get(team, 0) + (cost is None)
    assert reports.UNALLOCATED in want and any(unpriced.values())

    code, printed, err = _run(capsys, "report", "--out", str(out), "--by", "label:team", "--json")
    assert code == 0, err
    rows = {row["value"]: row for row in json.loads(printed)["by"]["label:team"]}
    assert set(rows) == set(want)
    for team, row in rows.items():
        assert row["usd_month"] == pytest.approx(want[team], abs=0.01), team
        assert row["deployments_unpriced"] == unpriced[team], team
    costs = [row["usd_month"] for row in rows.values()]
    assert list(rows.values()) == sorted(rows.values(), key=lambda r: -r["usd_month"])
    assert sum(row["share"] for row in rows.values()) == pytest.approx(1.0)
    assert sum(costs) == pytest.approx(sum(want.values()), abs=0.05)

    code, printed, err = _run(capsys, "report", "--out", str(out), "--by", "label:team")
    assert code == 0, err
    shown = printed.split("by label:team", 1)[1].splitlines()[1 : len(rows) + 1]
    assert [line.split()[0] for line in shown] == list(rows)
    assert all(f"${rows[line.split()[0]]['usd_month']:,.2f}" in line for line in shown)


def _bounded(fleet) -> dict:
    """A deployment of `fleet` priced on both bases: every component's limits set, and
    those of its sidecars and init containers."""
    for record in fleet.deployments:
        state = fm.status(record)
        rs = fm.resource_spec(record)
        if (
            state["unpriced_reason"] is None
            and not state["limits_unbounded"]
            and all(rs.get(f) is not None for f in ("queue_cpu", "db_cpu", "db_memory_mb"))
        ):
            return record
    raise AssertionError("the fleet has no bounded deployment with a queue and a DB")


def test_one_limit_missing_of_two_makes_the_limits_basis_unbounded(tmp_path, fleet) -> None:
    """A component with a CPU limit but no memory limit (or the other way round) may use
    the node's memory (or CPU): its limits basis is unbounded, null and counted, never
    priced on the one limit it has; its requests are priced as usual."""
    base = _bounded(fleet)
    variants = {  # each leaves one limit of one component out
        "main-cpu-limit-only": "memory_limit_mb",
        "main-memory-limit-only": "cpu_limit",
        "queue-cpu-limit-only": "queue_memory_limit_mb",
        "db-memory-limit-only": "db_cpu_limit",
    }
    records, types = [copy.deepcopy(base)], {base["id"]: "prod"}
    for n, (name, field) in enumerate(variants.items(), start=1):
        record = copy.deepcopy(base)
        record["id"], record["name"] = f"{base['id'][:-2]}{n:02d}", name
        record["source_config"]["resource_spec"][field] = None
        assert fm.status(record)["limits_unbounded"], name  # the independent rule agrees
        records.append(record)
        types[record["id"]] = "prod"
    fm.export_fleet(records, types, tmp_path, DATE)
    costs = reports.cost_by_deployment(tmp_path).set_index("name")
    limits = [c for c in costs.columns if c.startswith("cost_limit_")]
    requests = [c for c in costs.columns if c.startswith("cost_request_")]
    assert limits and requests
    for name in variants:
        row = costs.loc[name]
        assert bool(row["limits_unbounded"]) and pd.isna(row["unpriced_reason"]), name
        assert all(pd.isna(row[c]) for c in limits), name  # null, never $0 or half a price
        assert all(row[c] > 0 for c in requests), name
    assert not bool(costs.loc[base["name"], "limits_unbounded"])
    assert all(costs.loc[base["name"], c] > 0 for c in limits)
    totals = reports.fleet_totals(tmp_path)
    assert totals["deployments_unbounded"] == len(variants)
    assert totals["cost_limit_max_scale_usd_month"] == round(
        fm.monthly_costs(base)["cost_limit_max_scale_usd_month"], 2
    )
