"""`dims metrics`: the snapshot as Prometheus metrics, read back with Prometheus' own parser.

The values are checked against the report's figures (`fleet_totals`, `capacity_by_*`,
`image_version_summary`) and, for the fleet's dollars, against the independent ones of
tests/fleet_math.py; label values with quotes, backslashes and newlines parse back exactly;
a group whose figure is unknown has no sample, never a 0.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import uuid
import warnings

import fleet_math as fm
import pytest
from cli_in_process import run as _run
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from dims import GroupNameWarning, SeriesLimitWarning
from dims import _policy as policy
from dims import _reports as reports

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
    with a HELP text (no `_total`: nothing here is a counter), and that no two samples are
    one series as Prometheus reads them (a label whose value is empty is no label at all)."""
    parse = openmetrics_families if openmetrics else text_string_to_metric_families
    found: Samples = {}
    for family in parse(text):
        assert family.type == "gauge" and family.name.startswith("dims_"), family.name
        assert family.documentation and not family.name.endswith("_total")
        for sample in family.samples:
            assert "" not in sample.labels.values(), sample  # Prometheus drops it
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
        ("type", reports.capacity_by(snap, ["deployment_type"]), "deployment_type"),
        ("namespace", reports.capacity_by(snap, ["k8s_namespace"]), "k8s_namespace"),
        ("workspace", reports.capacity_by(snap, ["tenant_id"]), "tenant_id"),
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
    by_namespace = reports.capacity_by(tmp_path, ["k8s_namespace"]).set_index("k8s_namespace")
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
    for option in ("--out", "--date", "--prices", "--max-series", "--openmetrics", "--json"):
        assert option in out


# -- label values that could meet (issue 35: names that collide) ----------------------------

#: C0 and C1 controls, DEL and the bidi controls a terminal would act on (a newline is the
#: format's own escape, `\n`, and reads back as itself)
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _shaped(fleet, **columns: list) -> list[dict]:
    """Copies of the fleet's first priced records, one per value of each of `columns`
    (`namespace`, `version`, `team`: a value, or None to leave it out)."""
    count = max(len(values) for values in columns.values())
    records = [copy.deepcopy(r) for r in fleet.deployments if fm.resource_spec(r)][:count]
    for n, record in enumerate(records):
        source = record["source_config"]
        listener = source["listener_config"] = source.get("listener_config") or {}
        labels = source["resource_spec"].setdefault("labels", {})
        for column, values in columns.items():
            value = values[n] if n < len(values) else "plain"
            place, key = {
                "namespace": (listener, "k8s_namespace"),
                "version": (record, "image_version"),
                "team": (labels, "team"),
            }[column]
            if value is None:
                place.pop(key, None)
            else:
                place[key] = value
    return records


def _export(records: list[dict], out, kind: str = "prod") -> None:
    fm.export_fleet(records, {r["id"]: kind for r in records}, out, DATE)


def _metrics_of(capsys, out, *options: str) -> tuple[Samples, str, str]:
    """(samples, text, stderr) of `dims metrics` in both formats, which must agree."""
    code, text, err = _run(capsys, "metrics", "--out", str(out), *options)
    assert code == 0, err
    samples = _samples(text)
    _, openmetrics, _ = _run(capsys, "metrics", "--out", str(out), "--openmetrics", *options)
    assert _samples(openmetrics, openmetrics=True) == samples
    return samples, text, err


def _scope(samples: Samples, name: str, label: str) -> dict[str, float]:
    return {dict(labels)[label]: v for (n, labels), v in samples.items() if n == name}


def test_a_real_unallocated_and_an_empty_value_never_meet_the_missing_ones(
    capsys, tmp_path, fleet
) -> None:
    records = _shaped(
        fleet,
        namespace=["__unallocated__", None, None, "", "__empty__", "ns"],
        version=["__unallocated__", None, "", "", "1.0.0", "____unallocated____"],
    )
    _export(records, tmp_path)
    samples, _, err = _metrics_of(capsys, tmp_path)
    namespaces = _scope(samples, "dims_namespace_deployments", "k8s_namespace")
    assert namespaces == {
        "__unallocated__": 2,  # the two without a namespace
        "____unallocated____": 1,  # the one named so
        "__empty__": 1,  # the empty one: `k8s_namespace=""` would be no label at all
        "____empty____": 1,
        "ns": 1,
    }
    versions = _scope(samples, "dims_image_version_deployments", "image_version")
    assert versions == {
        "__unallocated__": 1,
        "____unallocated____": 1,
        "__empty__": 2,
        "1.0.0": 1,
        "______unallocated______": 1,
    }
    assert sum(namespaces.values()) == _get(samples, "dims_fleet_deployments") == 6
    assert err.startswith("dims: warning: k8s_namespace ") and err.count("\n") == 2, err
    assert "'__unallocated__' is shown as '____unallocated____'" in err, err


def test_control_characters_are_shown_and_values_that_read_alike_stay_apart(
    capsys, tmp_path, fleet
) -> None:
    escape = "ns\x1b]52;c;aGk=\x07\r\u202eevil"
    literal = "ns\\u001b]52;c;aGk=\\u0007\\r\\u202eevil"  # how the escape is shown
    records = _shaped(
        fleet, namespace=[escape, literal, "tab\there"], version=["1\x9b2", "1\\u009b2"]
    )
    _export(records, tmp_path)
    samples, text, err = _metrics_of(capsys, tmp_path)
    assert not CONTROLS.search(text), CONTROLS.findall(text)
    namespaces = _scope(samples, "dims_namespace_deployments", "k8s_namespace")
    assert namespaces.pop(literal) == 1 and namespaces.pop("tab\\there") == 1
    ((shown, count),) = namespaces.items()  # the escape's, made distinct from the literal
    assert count == 1 and shown.startswith(literal) and shown != literal
    versions = _scope(samples, "dims_image_version_deployments", "image_version")
    assert versions.pop("1\\u009b2") == 1 and versions.pop("plain") == 1
    ((shown, count),) = versions.items()
    assert count == 1 and shown.startswith("1\\u009b2") and shown != "1\\u009b2"
    assert "shown as" in err and "no two groups are one series" in err, err


def test_a_value_that_reads_as_another_even_with_its_hash_is_left_out_with_a_warning(
    capsys, tmp_path, fleet
) -> None:
    escape, shown = "a\x1bb", "a\\u001bb"
    hashed = f"{shown}~{hashlib.sha256(escape.encode()).hexdigest()[:8]}"  # as docs/metrics.md
    records = _shaped(fleet, namespace=[escape, shown, hashed])
    _export(records, tmp_path)
    samples, _, err = _metrics_of(capsys, tmp_path)
    namespaces = _scope(samples, "dims_namespace_deployments", "k8s_namespace")
    assert namespaces == {shown: 1, hashed: 1}  # each as written; the escape has no series
    assert "'a\\x1bb' (and 0 more) left out of the metrics" in err, err


def test_json_labels_are_the_texts_labels(capsys, tmp_path, fleet) -> None:
    records = _shaped(fleet, namespace=["__unallocated__", None, "", "a\x1bb", "a\\u001bb"])
    _export(records, tmp_path)
    samples, _, _ = _metrics_of(capsys, tmp_path)
    code, out, _ = _run(capsys, "metrics", "--out", str(tmp_path), "--json")
    assert code == 0
    from_json = {
        (family["name"], frozenset(sample["labels"].items())): sample["value"]
        for family in json.loads(out)
        for sample in family["samples"]
    }
    assert from_json == samples


def test_a_quote_in_help_is_escaped_only_in_openmetrics() -> None:
    help_ = 'The "quoted" part, a back\\slash\nand a second line'
    family = reports.MetricFamily("dims_test_gauge", help_, (reports.MetricSample((), 1),))
    text = reports.format_metrics([family])
    assert '# HELP dims_test_gauge The "quoted" part, a back\\\\slash\\nand a second line\n' in text
    openmetrics = reports.format_metrics([family], openmetrics=True)
    assert '# HELP dims_test_gauge The \\"quoted\\" part' in openmetrics
    assert openmetrics.endswith("# EOF\n")
    (parsed,) = text_string_to_metric_families(text)
    (parsed_om,) = openmetrics_families(openmetrics)
    assert parsed.documentation == parsed_om.documentation == help_


def test_allocation_tables_keep_a_real_unallocated_apart(capsys, tmp_path, fleet) -> None:
    records = _shaped(fleet, team=["__unallocated__", None, None, "", "payments"])
    _export(records, tmp_path)
    with pytest.warns(GroupNameWarning, match="label:team '__unallocated__' is shown as"):
        frame = reports.cost_by(tmp_path, "label:team")
    counts = dict(zip(frame["label:team"], frame["deployments"], strict=True))
    assert counts == {
        "__unallocated__": 2,
        "____unallocated____": 1,
        "": 1,
        "payments": 1,
    }
    with pytest.warns(GroupNameWarning):
        allocated = reports.allocated(tmp_path, "label:team").set_index("deployment_id")
    assert allocated.loc[records[0]["id"], "label:team"] == "____unallocated____"
    assert allocated.loc[records[1]["id"], "label:team"] == "__unallocated__"
    rules = {"budgets": {"label:team=__unallocated__": 0, "label:team=____unallocated____": 0}}
    with pytest.warns(GroupNameWarning):
        result = policy.check(tmp_path, policy.parse_rules(rules))
    named = {v.group: set(v.deployment_ids) for v in result.violations}
    assert named == {
        "label:team=__unallocated__": {records[1]["id"], records[2]["id"]},
        "label:team=____unallocated____": {records[0]["id"]},
    }


# -- a bound on the series (issue 39 item 2) ------------------------------------------------


def _one_namespace_each(fleet, copies: int = 1) -> list[dict]:
    """The fleet's records (`copies` times over, each copy a new deployment), each in a
    namespace and on an image version of its own; one namespace is named `__other__`."""
    records = []
    for copy_number in range(copies):
        for record in fleet.deployments:
            record = copy.deepcopy(record)
            record["id"] = str(uuid.UUID(int=len(records) + 1))
            record["image_version"] = f"0.{copy_number}.{len(records)}"
            source = record["source_config"] = record.get("source_config") or {}
            source["listener_config"] = source.get("listener_config") or {}
            source["listener_config"]["k8s_namespace"] = f"ns-{len(records):04}"
            records.append(record)
    records[-1]["source_config"]["listener_config"]["k8s_namespace"] = "__other__"
    return records


def _families(text: str) -> dict[str, int]:
    return {f.name: len(f.samples) for f in text_string_to_metric_families(text)}


def test_a_scope_past_max_series_keeps_its_most_expensive_groups_and_sums_the_rest(
    capsys, tmp_path, fleet
) -> None:
    records = _one_namespace_each(fleet)
    _export(records, tmp_path)
    samples, text, err = _metrics_of(capsys, tmp_path, "--max-series", "40")
    assert max(_families(text).values()) <= 40
    by_namespace = reports.capacity_by(tmp_path, ["k8s_namespace"])  # most expensive first
    shown = _scope(samples, "dims_namespace_deployments", "k8s_namespace")
    other = shown.pop("__other__")
    kept = list(by_namespace["k8s_namespace"][: len(shown)])
    assert set(shown) == set(kept) and len(shown) + 1 == 40 // 4  # as many as fit
    assert other == len(records) - len(kept)
    rest = by_namespace[len(kept) :]
    cost = "dims_namespace_cost_usd_per_month"
    for basis, scale in BASES:
        at = {"k8s_namespace": "__other__", "basis": basis, "scale": scale}
        want = rest[f"cost_{basis}_{scale}_scale_usd_month"].sum(min_count=1)
        assert _get(samples, cost, **at) == pytest.approx(want, abs=0.01)
    assert _get(samples, "dims_namespace_deployments_unpriced", k8s_namespace="__other__") == (
        rest["deployments_unpriced"].sum()
    )
    total = _get(samples, "dims_fleet_cost_usd_per_month", basis="request", scale="max")
    at_max = {("basis", "request"), ("scale", "max")}
    summed = sum(v for (name, labels), v in samples.items() if name == cost and at_max <= labels)
    assert summed == pytest.approx(total, abs=0.01 * len(shown) + 0.01)
    versions = _scope(samples, "dims_image_version_deployments", "image_version")
    assert len(versions) == 40 and versions["__other__"] == len(records) - 39
    behind = _scope(samples, "dims_image_version_versions_behind", "image_version")
    assert "__other__" not in behind  # how far behind a sum of versions is means nothing
    lines = err.strip().splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("dims: warning: ") and "--max-series" in lines[0]
    assert f"{len(kept)} most expensive" in err and "k8s_namespace" in err
    assert f"{len(records) - len(kept):,} others" in err and "image_version" in err


def test_the_default_bound_cuts_a_large_scope_and_max_series_raises_it(
    capsys, tmp_path, fleet
) -> None:
    records = _one_namespace_each(fleet, copies=2)  # 600 namespaces
    _export(records, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        families = reports.metric_families(tmp_path)
    assert {type(w.message) for w in caught} == {SeriesLimitWarning, GroupNameWarning}
    assert any("k8s_namespace" in str(w.message) for w in caught)
    widest = max(len(f.samples) for f in families)
    assert widest <= reports.MAX_SERIES < len(records) * 4
    samples, _, err = _metrics_of(capsys, tmp_path, "--max-series", str(len(records) * 4))
    (line,) = err.splitlines()  # no cut; only the real `__other__` shown apart
    assert line.startswith("dims: warning: k8s_namespace '__other__' is shown as '____other____'")
    shown = _scope(samples, "dims_namespace_deployments", "k8s_namespace")
    assert len(shown) == len(records) and "__other__" not in shown
    assert shown["____other____"] == 1  # the real one, apart from any remainder


@pytest.mark.parametrize("given", ["3", "0", "-5", "many"])
def test_max_series_too_small_is_one_line(capsys, dataset, given) -> None:
    code, out, err = _run(capsys, "metrics", "--out", str(dataset), "--max-series", given)
    assert (code, out) == (2, "") and "--max-series" in err and "Traceback" not in err
