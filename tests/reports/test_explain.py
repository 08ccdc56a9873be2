"""`dims explain` and `reports.explain`: one deployment's cost line by line, equal to the report.

Every total an explanation prints is checked against `cost_by_deployment` and against the
independent dollars of tests/fleet_math.py (from the raw records, never from dims._reports),
to the cent, for every deployment of the test fleet and of a fleet of odd shapes (a request
missing, a quantity Kubernetes refuses, native sidecars, a scale written inverted or empty,
two deployments of one name).
"""

from __future__ import annotations

import copy
import json
import re

import fleet_math as fm
import pandas as pd
import pytest
from cli_in_process import run as _run

from dims import DeploymentLookupError, UnreadableQuantityWarning
from dims import _reports as reports
from dims._reports import Explanation

DATE = "2025-06-04"
COSTS = [
    f"cost_{basis}_{scale}_scale_usd_month"
    for basis in ("request", "limit")
    for scale in ("min", "max")
]
TWIN_NAME = 'twin "agent"\\one'


def _cents(value: object) -> float | None:
    return None if value is None or pd.isna(value) else round(float(value), 2)  # type: ignore[arg-type]


def _check_against_report(e: Explanation, report_row: pd.Series, record: dict, rates=None) -> None:
    """The explanation's costs equal the report's row and fleet_math's, to the cent; its
    lines (CPU and memory of each component, storage) add up to each total; its flags are
    the record's."""
    want = fm.monthly_costs(record, rates or fm.OPENCOST_RATES)
    for column in [*COSTS, "storage_cost_usd_month"]:
        mine = _cents(e.costs[column])
        assert mine == _cents(report_row[column]) == _cents(want[column]), (record["id"], column)
    for column in COSTS:
        if e.costs[column] is None:
            continue
        parts = [
            c.costs[f"{resource}_{column}"] for c in e.components for resource in ("cpu", "memory")
        ]
        summed = sum(parts) + e.costs["storage_cost_usd_month"]  # type: ignore[arg-type]
        assert summed == pytest.approx(e.costs[column], rel=1e-12), (record["id"], column)
    state = fm.status(record)
    assert e.unpriced_reason == state["unpriced_reason"]
    assert e.limits_unbounded == state["limits_unbounded"]
    assert e.scale_inverted == state["scale_inverted"]
    named = {flag.name for flag in e.flags}
    assert ("scale_inverted" in named) == state["scale_inverted"]
    assert ("limits_unbounded" in named) == state["limits_unbounded"]
    assert (state["unpriced_reason"] in named) == (state["unpriced_reason"] is not None)


def test_every_deployment_explained_equals_the_report_to_the_cent(fleet, snap) -> None:
    report = reports.cost_by_deployment(snap).set_index("deployment_id")
    for record in fleet.deployments:
        e = reports.explain(snap, record["id"])
        assert e.deployment_id == record["id"] and e.name == record["name"]
        _check_against_report(e, report.loc[record["id"]], record)


def _printed_totals(text: str) -> dict[str, float | None]:
    """The totals `dims explain` printed, by column (None where it printed null)."""
    found: dict[str, float | None] = {}
    for match in re.finditer(r"total +\$([\d,]+\.\d\d) +\((cost_\w+)\)", text):
        found[match[2]] = float(match[1].replace(",", ""))
    for match in re.finditer(r"^(requests|limits) at (min|max) scale: null, not \$0", text, re.M):
        found[f"cost_{match[1].rstrip('s')}_{match[2]}_scale_usd_month"] = None
    return found


def _flagged_sample(fleet) -> list[dict]:
    """One deployment of each shape the fleet has: unpriced, unbounded, inverted, with
    sidecars, with init containers, plain."""
    shapes: dict[tuple, dict] = {}
    for record in fleet.deployments:
        state, spec = fm.status(record), fm.resource_spec(record)
        shape = (
            state["unpriced_reason"],
            state["limits_unbounded"],
            state["scale_inverted"],
            bool(spec.get("sidecars")),
            bool(spec.get("init_containers")),
        )
        shapes.setdefault(shape, record)
    return list(shapes.values())


def test_printed_totals_are_the_reports_to_the_cent(capsys, fleet, dataset) -> None:
    report = reports.cost_by_deployment(dataset).set_index("deployment_id")
    sample = _flagged_sample(fleet)
    assert len(sample) >= 8  # unpriced, unbounded, inverted, sidecars, init containers
    for record in sample:
        code, out, err = _run(capsys, "explain", record["id"], "--out", str(dataset))
        assert code == 0, err
        printed = _printed_totals(out)
        assert set(printed) == set(COSTS), (record["id"], out)
        for column in COSTS:
            want = fm.monthly_costs(record)[column]
            assert printed[column] == _cents(report.loc[record["id"], column]) == _cents(want)
        by_name = _run(capsys, "explain", record["name"], "--out", str(dataset))
        assert by_name == (0, out, "")  # the exact name finds the same deployment


def test_the_pod_rule_is_shown_with_its_numbers(capsys, fleet, dataset) -> None:
    """A deployment with a sidecar and an init container: each container with its figures,
    then max(main + sidecars, init peak) = pod, as pod_requests has it."""
    record = next(
        r
        for r in fleet.deployments
        if fm.resource_spec(r).get("sidecars") and fm.resource_spec(r).get("init_containers")
    )
    e = reports.explain(dataset, record["id"])
    pod = reports.pod_requests(dataset).set_index("deployment_id").loc[record["id"]]
    rule = {r.measure: r for r in e.pod}["cpu_request_cores"]
    assert rule.main == pod["main_cpu_request_cores"]
    assert rule.sidecars == pytest.approx(pod["sidecars_cpu_request_cores"])
    assert rule.init_peak == pytest.approx(pod["largest_init_cpu_request_cores"])
    assert rule.pod == pytest.approx(max(rule.main + rule.sidecars, rule.init_peak))  # type: ignore[operator]
    spec = fm.resource_spec(record)
    assert [c.name for c in e.containers] == [
        *(c["name"] for c in spec["sidecars"]),
        *(c["name"] for c in spec["init_containers"]),
    ]
    code, out, _ = _run(capsys, "explain", record["id"], "--out", str(dataset))
    shown = f"max({rule.main:g} + {rule.sidecars:g}, {rule.init_peak:g}) = {rule.pod:g}"
    assert code == 0 and shown in out


def _odd_fleet(fleet) -> tuple[list[dict], dict[str, dict]]:
    """Records of the shapes the sandbox fleet lacks, by what each is."""
    base = [copy.deepcopy(r) for r in fleet.deployments if fm.resource_spec(r).get("queue_cpu")]
    odd = dict(
        zip(
            ["missing", "unreadable", "native", "empty_max", "twin_a", "twin_b"], base, strict=False
        )
    )
    spec = {name: fm.resource_spec(record) for name, record in odd.items()}
    del spec["missing"]["queue_memory_mb"]
    spec["unreadable"]["sidecars"] = [
        {
            "name": "odd",
            "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "12XB"}},
        }
    ]
    spec["native"]["sidecars"] = []
    bounded = {"requests": {"cpu": "1"}, "limits": {"cpu": "1", "memory": "1Gi"}}  # 1 core
    spec["native"]["init_containers"] = [
        {"name": "proxy", "restartPolicy": "Always", "resources": bounded},
        {
            "name": "migrate",
            "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "3", "memory": "1Gi"}},
        },
    ]
    spec["empty_max"].update(min_scale=3, max_scale=None)
    odd["twin_a"]["name"] = odd["twin_b"]["name"] = TWIN_NAME
    return base, odd


@pytest.fixture(scope="module")
def odd(tmp_path_factory, fleet):
    out = tmp_path_factory.mktemp("odd")
    records, odd = _odd_fleet(fleet)
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    with pytest.warns(UnreadableQuantityWarning):
        fm.export_fleet(records, types, out, DATE)
    return out, records, odd


def test_odd_shapes_explained_equal_the_report_to_the_cent(odd) -> None:
    out, records, _ = odd
    snap = reports.load_snapshot(out)
    report = reports.cost_by_deployment(snap).set_index("deployment_id")
    for record in records:
        _check_against_report(reports.explain(snap, record["id"]), report.loc[record["id"]], record)


def test_each_flag_says_what_it_found_and_what_it_did(odd) -> None:
    out, _, shapes = odd
    snap = reports.load_snapshot(out)

    def flags(name: str) -> dict[str, tuple[str, str]]:
        e = reports.explain(snap, shapes[name]["id"])
        return {f.name: (f.finding, f.effect) for f in e.flags}

    finding, effect = flags("missing")["missing_resources"]
    assert "queue: queue_memory_mb not set" in finding and "null, not $0" in effect
    finding, _ = flags("unreadable")["unreadable_quantity"]
    assert 'sidecar "odd"' in finding and '"12XB"' in finding
    finding, effect = flags("empty_max")["scale_inverted"]
    assert "main: max_scale not set (1 replica) below min_scale 3" in finding
    # main and its pod asked 2 more replicas than written: their per-replica requests, twice
    e = reports.explain(snap, shapes["empty_max"]["id"])
    main = next(c for c in e.components if c.component == "main")
    per_replica = main.costs["cpu_cost_request_max_scale_usd_month"] / main.replicas_max  # type: ignore[operator]
    per_replica += main.costs["memory_cost_request_max_scale_usd_month"] / main.replicas_max  # type: ignore[operator]
    assert main.replicas_max == 3 and f"+${2 * per_replica:,.2f} a month" in effect


def test_native_sidecars_are_named_and_counted_in_the_init_peak(odd) -> None:
    out, _, shapes = odd
    e = reports.explain(out, shapes["native"]["id"])
    assert [(c.kind, c.name) for c in e.containers] == [
        ("native sidecar", "proxy"),
        ("init", "migrate"),
    ]
    rule = {r.measure: r for r in e.pod}["cpu_request_cores"]
    # the proxy (1) runs beside main and beside migrate (3): peak 4
    assert (rule.sidecars, rule.init_peak) == (1.0, 4.0)


def test_a_shared_name_is_refused_with_the_ids(capsys, odd) -> None:
    out, _, shapes = odd
    ids = sorted([shapes["twin_a"]["id"], shapes["twin_b"]["id"]])
    with pytest.raises(DeploymentLookupError) as caught:
        reports.explain(out, TWIN_NAME)
    assert sorted(caught.value.ids) == ids
    code, stdout, err = _run(capsys, "explain", TWIN_NAME, "--out", str(out))
    assert code == 1 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("dims explain: error: 2 deployments are named")
    assert json.dumps(TWIN_NAME) in err and all(i in err for i in ids)
    # its id still explains it
    assert _run(capsys, "explain", ids[0], "--out", str(out))[0] == 0


def test_an_unknown_deployment_is_one_line_with_a_guess(capsys, fleet, dataset) -> None:
    record = next(r for r in fleet.deployments if "\n" in r["name"])
    typo = record["name"][:-1] + "x"
    code, stdout, err = _run(capsys, "explain", typo, "--out", str(dataset))
    assert code == 1 and stdout == ""
    assert err.count("\n") == 1  # the name's newline is shown as \n
    assert err.startswith(
        f"dims explain: error: no deployment has the id or name {json.dumps(typo)}"
    )
    assert "did you mean" in err
    code, _, err = _run(capsys, "explain", "nothing-like-it-at-all-42", "--out", str(dataset))
    assert code == 1 and "did you mean" not in err and err.count("\n") == 1


def test_json_carries_the_figures_and_nulls(capsys, fleet, dataset) -> None:
    report = reports.cost_by_deployment(dataset).set_index("deployment_id")
    for record in _flagged_sample(fleet):
        code, out, _ = _run(capsys, "explain", record["id"], "--out", str(dataset), "--json")
        data = json.loads(out)
        assert code == 0 and data["deployment_id"] == record["id"]
        for column in [*COSTS, "storage_cost_usd_month"]:
            assert _cents(data["costs"][column]) == _cents(report.loc[record["id"], column])
        assert data["unpriced_reason"] == fm.status(record)["unpriced_reason"]
        assert "NaN" not in out


def test_a_price_sheet_with_type_overrides_is_shown_and_applied(
    capsys, tmp_path, fleet, dataset
) -> None:
    sheet = tmp_path / "prices.yaml"
    sheet.write_text(
        "types:\n  prod: {cpu_core_hour: 0.05, storage_gib_month: 0.1}\n", encoding="utf-8"
    )
    prices = reports.load_prices(sheet)
    report = reports.cost_by_deployment(dataset, prices).set_index("deployment_id")
    prod = {**fm.OPENCOST_RATES, "cpu_core_hour": 0.05, "storage_gib_month": 0.1}
    record = next(
        r for r in fleet.deployments
        if fleet.deployment_types[r["id"]] == "prod" and fm.status(r)["unpriced_reason"] is None
    )  # fmt: skip
    e = reports.explain(dataset, record["id"], prices)
    assert e.rates == {"cpu_core_hour": 0.05, "memory_gib_hour": 0.004237, "storage_gib_month": 0.1}
    assert e.overridden == ("cpu_core_hour", "storage_gib_month")
    _check_against_report(e, report.loc[record["id"]], record, prod)
    code, out, _ = _run(
        capsys, "explain", record["id"], "--out", str(dataset), "--prices", str(sheet)
    )
    assert code == 0 and "$0.05 per core-hour" in out and "from the sheet's rates for prod" in out
    assert _printed_totals(out)[COSTS[0]] == _cents(report.loc[record["id"], COSTS[0]])


def test_help_describes_every_option(capsys) -> None:
    code, out, _ = _run(capsys, "explain", "--help")
    assert code == 0
    for option in ("DEPLOYMENT", "--out", "--date", "--prices", "--json"):
        assert option in out


_PART = re.compile(r"(?:CPU|memory) ([\d,.]+) × (\d+) × \$([\d.]+) × ([\d.]+) = \$([\d,]+\.\d\d)")
_STORAGE = re.compile(r"storage +([\d,.]+) GiB × \$([\d.]+) = \$([\d,]+\.\d\d)")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_each_printed_line_is_arithmetic_that_checks_out(capsys, fleet, dataset) -> None:
    """A person multiplying what a line shows gets the dollars it shows (to the cent), and
    the lines of a block add up to its total within a cent per line (each is rounded)."""
    for record in _flagged_sample(fleet):
        _, out, _ = _run(capsys, "explain", record["id"], "--out", str(dataset))
        checked = 0
        for block in re.split(r"^(?=(?:requests|limits) at )", out, flags=re.M)[1:]:
            total = re.search(r"total +\$([\d,]+\.\d\d)", block)
            if total is None:
                continue
            shown = []
            for per, count, rate, hours, dollars in _PART.findall(block):
                product = _number(per) * int(count) * float(rate) * float(hours)
                assert product == pytest.approx(_number(dollars), abs=0.0051), (record["id"], block)
                shown.append(_number(dollars))
            gib, rate, dollars = _STORAGE.search(block).groups()  # type: ignore[union-attr]
            assert _number(gib) * float(rate) == pytest.approx(_number(dollars), abs=0.0051)
            shown.append(_number(dollars))
            assert sum(shown) == pytest.approx(_number(total[1]), abs=0.005 * len(shown))
            checked += 1
        assert checked == sum(v is not None for v in _printed_totals(out).values())


def test_a_fractional_max_scale_is_not_called_inverted(capsys, tmp_path, fleet) -> None:
    """A max_scale of 2.5 runs 3 pods (whole pods, rounded up): with min_scale 3, or 2, it is
    not below min_scale, and `dims explain`'s scale note says so; 1.5 (2 pods) below 3 is."""
    base = next(
        r for r in fleet.deployments if fm.resource_spec(r) and not fm.status(r)["scale_inverted"]
    )
    shapes = {"even-3": (3, 2.5), "above-2": (2, 2.5), "below-3": (3, 1.5)}
    records, types = [], {}
    for n, (name, (low, high)) in enumerate(shapes.items()):
        record = copy.deepcopy(base)
        record["id"], record["name"] = f"{base['id'][:-2]}{n:02d}", name
        record["source_config"]["resource_spec"].update(min_scale=low, max_scale=high)
        records.append(record)
        types[record["id"]] = "prod"
    fm.export_fleet(records, types, tmp_path, DATE)
    for record in records:
        low, high = shapes[record["name"]]
        inverted = record["name"] == "below-3"
        assert fm.status(record)["scale_inverted"] is inverted  # the independent rule
        e = reports.explain(tmp_path, record["id"])
        assert e.scale_inverted is inverted
        assert ("scale_inverted" in {f.name for f in e.flags}) is inverted
        code, out, _ = _run(capsys, "explain", record["id"], "--out", str(tmp_path))
        assert code == 0
        rows = [line.strip() for line in out.splitlines() if "(min_scale" in line]
        (note,) = [row for row in rows if row.startswith("main ")]  # its per-replica row
        written = f"(min_scale {low}, max_scale {high}"
        assert written in note, note
        assert (": inverted" in note) is inverted, note
        if inverted:
            assert note.endswith(f"{written}: inverted, max priced at {low})"), note


def _reference(out, key: str) -> tuple[str, str]:
    """The full-fleet path's answer (the whole snapshot loaded and priced): lines and JSON."""
    e = reports.explain(reports.load_snapshot(out), key)
    return "\n".join(reports.explain_lines(e)), json.dumps(e.as_dict(), indent=2)


def test_one_deployments_rows_explain_it_as_the_whole_fleet_does(capsys, fleet, dataset, odd):
    """`load_deployment` reads only the rows of the deployment asked for; what `dims explain`
    prints from them is, byte for byte, what the whole fleet's snapshot gives: for one
    deployment of each shape of the test fleet, every one with a hostile name (a newline,
    quotes, controls), every odd shape, by id and by a name no other deployment has."""
    odd_out, odd_records, _ = odd
    hostile_names = [
        r
        for r in fleet.deployments
        if r["name"] != r["name"].encode("ascii", "ignore").decode()
        or not r["name"].isprintable()
        or '"' in r["name"]
    ]
    sample = [*_flagged_sample(fleet), *hostile_names]
    for out, records in ((dataset, sample), (odd_out, odd_records)):
        full = reports.load_snapshot(out)
        names = full.deployments["name"].value_counts()
        for record in records:
            keys = [record["id"]] + ([record["name"]] if names.get(record["name"]) == 1 else [])
            for key in keys:
                mine = reports.load_deployment(out, key)
                assert len(mine.deployments) == 1, key
                e = reports.explain(mine, key)
                want = reports.explain(full, key)
                assert reports.explain_lines(e) == reports.explain_lines(want), key
                assert e.as_dict() == want.as_dict(), key
    hostile = next(r for r in fleet.deployments if "\n" in r["name"])
    lines, as_json = _reference(dataset, hostile["id"])
    code, stdout, _ = _run(capsys, "explain", hostile["id"], "--out", str(dataset))
    assert code == 0 and stdout == lines + "\n"
    code, stdout, _ = _run(capsys, "explain", hostile["id"], "--out", str(dataset), "--json")
    assert code == 0 and json.loads(stdout) == json.loads(as_json)


def test_an_id_wins_over_a_name_when_only_their_rows_are_read(tmp_path, fleet) -> None:
    """A key that is one deployment's id and other deployments' name explains the id's, as
    the whole fleet's lookup does (both rows are read: the id is chosen among them)."""
    records = [copy.deepcopy(r) for r in fleet.deployments[:3]]
    records[1]["name"] = records[2]["name"] = records[0]["id"]
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    fm.export_fleet(records, types, tmp_path, DATE)
    mine = reports.load_deployment(tmp_path, records[0]["id"])
    assert len(mine.deployments) == 3
    assert reports.explain(mine, records[0]["id"]).deployment_id == records[0]["id"]
