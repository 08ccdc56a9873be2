"""`dims metrics`: the snapshot as Prometheus metrics, read back with Prometheus' own parser.

The values are checked against the report's figures (`fleet_totals`, `capacity_by_*`,
`image_version_summary`) and, for the fleet's dollars, against the independent ones of
tests/fleet_math.py; label values with quotes, backslashes and newlines parse back exactly;
a group whose figure is unknown has no sample, never a 0.
"""

from __future__ import annotations

import copy
import json
import math

import fleet_math as fm
import pytest
from cli_in_process import run as _run
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from analysis import reports

DATE = "2025-06-05"
GIB = 1024**3
BASES = [("request", "min"), ("request", "max"), ("limit", "min"), ("limit", "max")]
#: label values a parser could misread: quotes, backslashes, a newline, a brace, non-ASCII
WEIRD_NAMESPACE = 'ns "quoted" \\back\\slash\nsecond line {x="y"} Zürich'
WEIRD_TYPE = 'type "q"\\\n'
UNBOUNDED_NAMESPACE = "all-unbounded"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _samples(text: str, openmetrics: bool = False) -> Samples:
    """Every sample by (name, labels), after checking each family is a gauge named dims_…
    with a HELP text (no `_total`: nothing here is a counter)."""
    parse = openmetrics_families if openmetrics else text_string_to_metric_families
    found: Samples = {}
    for family in parse(text):
        assert family.type == "gauge" and family.name.startswith("dims_"), family.name
        assert family.documentation and not family.name.endswith("_total")
        for sample in family.samples:
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in found, key  # one sample per label set
            found[key] = sample.value
    return found


def _get(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def _check_scope(samples: Samples, scope: str, figures: dict, **labels: str) -> None:
    """A scope's metrics equal the report's figures for one group (or the fleet)."""
    for count in ("deployments", "deployments_unpriced", "deployments_unbounded"):
        assert _get(samples, f"dims_{scope}_{count}", **labels) == figures[count]
    for basis, scale in BASES:
        at = {**labels, "basis": basis, "scale": scale}
        cost = figures[f"cost_{basis}_{scale}_scale_usd_month"]
        got = _get(samples, f"dims_{scope}_cost_usd_per_month", **at)
        assert got is None if math.isnan(cost) else got == round(cost, 2), (scope, labels, at)
        cores = figures[f"cpu_{basis}_cores_{scale}_scale"]
        got = _get(samples, f"dims_{scope}_cpu_cores", **at)
        assert got is None if math.isnan(cores) else got == round(cores, 3)
        gib = figures[f"memory_{basis}_gib_{scale}_scale"]
        got = _get(samples, f"dims_{scope}_memory_bytes", **at)
        assert got is None if math.isnan(gib) else got == round(gib * GIB)
    storage = figures["db_storage_gib"]
    got = _get(samples, f"dims_{scope}_db_storage_bytes", **labels)
    assert got is None if math.isnan(storage) else got == round(storage * GIB)


def test_metrics_equal_the_reports_figures(capsys, fleet, snap, dataset) -> None:
    code, out, err = _run(capsys, "metrics", "--out", str(dataset))
    assert code == 0 and err == ""
    samples = _samples(out)
    totals = reports.fleet_totals(snap)
    _check_scope(samples, "fleet", totals)
    assert _get(samples, "dims_fleet_deployments_scale_inverted") == 3
    # the fleet's dollars, computed apart from the reports
    want = fm.fleet_cost(fleet.deployments, "cost_request_max_scale_usd_month")
    assert _get(samples, "dims_fleet_cost_usd_per_month", basis="request", scale="max") == round(
        want, 2
    )
    for scope, frame, key in (
        ("type", reports.capacity_by_type(snap), "deployment_type"),
        ("namespace", reports.capacity_by_namespace(snap), "k8s_namespace"),
        ("workspace", reports.capacity_by_workspace(snap), "tenant_id"),
    ):
        for row in frame.to_dict(orient="records"):
            value = row[key] if isinstance(row[key], str) else reports.UNALLOCATED
            _check_scope(samples, scope, row, **{key: value})
    assert snap.snapshot_at is not None
    assert _get(samples, "dims_snapshot_timestamp_seconds") == snap.snapshot_at.timestamp()


def test_image_versions_and_versions_behind(capsys, snap, dataset) -> None:
    samples = _samples(_run(capsys, "metrics", "--out", str(dataset))[1])
    summary = reports.image_version_summary(snap)
    assert len(summary) > 3
    for row in summary.to_dict(orient="records"):
        version = (
            row["image_version"] if isinstance(row["image_version"], str) else "__unallocated__"
        )
        assert (
            _get(samples, "dims_image_version_deployments", image_version=version)
            == row["deployments"]
        )
        behind = _get(samples, "dims_image_version_versions_behind", image_version=version)
        assert behind == (None if row["versions_behind"] is None else row["versions_behind"])
    share = reports.newest_share_total(snap)["share_on_newest"]
    assert _get(samples, "dims_fleet_newest_version_ratio") == pytest.approx(share)


def test_openmetrics_reads_the_same(capsys, dataset) -> None:
    prometheus = _samples(_run(capsys, "metrics", "--out", str(dataset))[1])
    code, out, _ = _run(capsys, "metrics", "--out", str(dataset), "--openmetrics")
    assert code == 0 and out.endswith("# EOF\n")
    assert _samples(out, openmetrics=True) == prometheus


def _odd_records(fleet) -> tuple[list[dict], dict[str, str]]:
    """A namespace of unpriced deployments only (and its name full of characters to escape),
    one whose only deployment has unbounded limits, and a type whose name needs escaping."""
    records = [copy.deepcopy(r) for r in fleet.deployments if fm.resource_spec(r)][:6]
    for n, record in enumerate(records):
        source = record["source_config"]
        listener = source.setdefault("listener_config", {}) or {}
        source["listener_config"] = listener
        if n < 2:
            source["resource_spec"] = {}  # resource_spec_absent: unpriced
            listener["k8s_namespace"] = WEIRD_NAMESPACE
        elif n == 2:
            source["resource_spec"].pop("cpu_limit", None)  # main has no CPU limit
            listener["k8s_namespace"] = UNBOUNDED_NAMESPACE
    types = {r["id"]: WEIRD_TYPE if n >= 3 else "prod" for n, r in enumerate(records)}
    return records, types


def test_unknown_is_no_sample_and_labels_parse_back_exactly(capsys, tmp_path, fleet) -> None:
    records, types = _odd_records(fleet)
    fm.export_fleet(records, types, tmp_path, DATE)
    by_namespace = reports.capacity_by_namespace(tmp_path).set_index("k8s_namespace")
    assert by_namespace.loc[WEIRD_NAMESPACE, "deployments_unpriced"] == 2  # the data is as meant
    for openmetrics in (False, True):
        argv = ["metrics", "--out", str(tmp_path)] + ["--openmetrics"] * openmetrics
        samples = _samples(_run(capsys, *argv)[1], openmetrics)
        weird = {"k8s_namespace": WEIRD_NAMESPACE}
        assert _get(samples, "dims_namespace_deployments", **weird) == 2
        assert _get(samples, "dims_namespace_deployments_unpriced", **weird) == 2
        for basis, scale in BASES:  # unpriced: no sample, not $0
            at = {**weird, "basis": basis, "scale": scale}
            assert _get(samples, "dims_namespace_cost_usd_per_month", **at) is None
            assert _get(samples, "dims_namespace_cpu_cores", **at) is None
        unbounded = {"k8s_namespace": UNBOUNDED_NAMESPACE}
        assert _get(samples, "dims_namespace_deployments_unbounded", **unbounded) == 1
        cost = "dims_namespace_cost_usd_per_month"
        assert _get(samples, cost, **unbounded, basis="request", scale="max") is not None
        assert _get(samples, cost, **unbounded, basis="limit", scale="max") is None
        assert _get(samples, "dims_type_deployments", deployment_type=WEIRD_TYPE) == 3


def test_json_carries_the_same_samples(capsys, dataset) -> None:
    prometheus = _samples(_run(capsys, "metrics", "--out", str(dataset))[1])
    code, out, _ = _run(capsys, "metrics", "--out", str(dataset), "--json")
    assert code == 0
    from_json = {
        (family["name"], frozenset(sample["labels"].items())): sample["value"]
        for family in json.loads(out)
        for sample in family["samples"]
    }
    assert from_json == prometheus


def test_a_price_sheet_prices_the_cost_metrics(capsys, tmp_path, snap, dataset) -> None:
    sheet = tmp_path / "prices.yaml"
    sheet.write_text("cpu_core_hour: 0.05\n", encoding="utf-8")
    code, out, _ = _run(capsys, "metrics", "--out", str(dataset), "--prices", str(sheet))
    want = reports.fleet_totals(snap, reports.load_prices(sheet))[
        "cost_request_max_scale_usd_month"
    ]
    assert code == 0
    assert (
        _get(_samples(out), "dims_fleet_cost_usd_per_month", basis="request", scale="max") == want
    )


def test_help_describes_every_option(capsys) -> None:
    code, out, _ = _run(capsys, "metrics", "--help")
    assert code == 0
    for option in ("--out", "--date", "--prices", "--openmetrics", "--json"):
        assert option in out
