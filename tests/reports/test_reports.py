"""Report figures equal an independent computation over the same raw fleet.

The dataset is written by the real export path; the expected figures come from the raw
fleet dicts in plain Python (tests/fleet_math.py), never from dims._tables or the reports.
"""

from __future__ import annotations

import copy
import html
import re
from pathlib import Path

import fleet_math as fm
import pandas as pd
import pyarrow.parquet as pq
import pytest
from cli_in_process import run

from dims import _reports as reports
from dims import _snapshot as snapshot
from dims._pages import Page
from dims._tables import UnreadableQuantityWarning

DATE = "2025-06-02"  # of the snapshots the tests below export themselves
VERSION_ORDER = [
    "0.4.12",
    "0.9.3",
    "0.9.10",
    "0.10.0",
    "0.10.1-rc1",
    "0.10.1",
    "0.10.2",
    "0.11.0",
    "latest",
]


# `fleet`, `dataset`, `snap`, `canaries` (tests/reports/conftest.py): one fleet, exported once.


@pytest.fixture(scope="module")
def report_path(dataset) -> Path:
    return reports.write_report(dataset)


def _by_type(fleet):
    return lambda record, component: (component, fleet.deployment_types[record["id"]])


def same(got: object, want: float | None) -> bool:
    """A report's figure equals the independent one: null where that one is None."""
    if want is None:
        return bool(pd.isna(got))
    return got == pytest.approx(want, abs=1e-9)


def check_groups(frame: pd.DataFrame, expected: dict, keys: tuple[str, ...]) -> None:
    """Every group of `frame` equals the independent figures: counts and known sums."""
    got = {
        tuple("(none)" if pd.isna(r[k]) else r[k] for k in keys): r
        for r in frame.to_dict(orient="records")
    }
    assert set(got) == {k if isinstance(k, tuple) else (k,) for k in expected}
    for key, want in expected.items():
        row = got[key if isinstance(key, tuple) else (key,)]
        assert row["deployments"] == len(want["ids"]), key
        assert row["deployments_unpriced"] == len(want["unpriced"]), key
        assert row["deployments_unbounded"] == len(want["unbounded"]), key
        for column, value in want.items():
            if column.endswith("_scale"):
                assert same(row[column], value), (key, column)


def test_capacity_summary_equals_independent_totals(fleet, snap) -> None:
    expected = fm.grouped_totals(fleet.deployments, _by_type(fleet))
    summary = reports.capacity_summary(snap)
    check_groups(summary, expected, ("component", "deployment_type"))
    assert "sidecars_init" in summary["component"].tolist()
    costs = summary["cost_request_max_scale_usd_month"]
    assert costs.dropna().is_monotonic_decreasing  # most expensive first
    assert summary["cost_share"].sum() == pytest.approx(1.0)


def test_capacity_by_namespace_and_fleet_totals(fleet, snap) -> None:
    expected = fm.grouped_totals(fleet.deployments, lambda r, c: fm.namespace(r) or "(none)")
    check_groups(reports.capacity_by(snap, ["k8s_namespace"]), expected, ("k8s_namespace",))
    totals = reports.fleet_totals(snap)
    for column in (
        "cpu_request_cores_max_scale",
        "memory_request_gib_min_scale",
        "memory_limit_gib_max_scale",
        "db_storage_gib",
    ):
        assert totals[column] == pytest.approx(fm.fleet_sum(fleet.deployments, column))
    states = [fm.status(r) for r in fleet.deployments]
    unpriced = sum(s["unpriced_reason"] is not None for s in states)
    unbounded = sum(s["unpriced_reason"] is None and s["limits_unbounded"] for s in states)
    assert (totals["deployments_unpriced"], totals["deployments_unbounded"]) == (
        unpriced,
        unbounded,
    )
    assert unpriced and unbounded  # the fleet has both: absent specs, sidecars with no limit
    assert totals["deployments_scale_inverted"] == sum(s["scale_inverted"] for s in states) > 0


def test_overcommit_and_db(fleet, snap) -> None:
    over = reports.overcommit(snap).set_index("component")
    assert "overall" not in set(over.index)  # the fleet's ratio is separate
    total = reports.overcommit_total(snap)
    for resource in ("cpu", "memory"):
        # sidecars without limits: the fleet may burst without bound, never "1.00x"
        assert any(resource in fm.unbounded_resources(r) for r in fleet.deployments)
        assert total[f"{resource}_overcommit"] == float("inf")
        assert over.loc["sidecars_init", f"{resource}_overcommit"] == float("inf")
    # main always sets its limits in this fleet: its ratio is over the bounded deployments
    bounded = [
        fm.components(r)["main"]
        for r in fleet.deployments
        if fm.status(r)["unpriced_reason"] is None and not fm.status(r)["limits_unbounded"]
    ]
    request = sum(row["cpu_request_cores"] * row["replicas_max"] for row in bounded)
    limit = sum(row["cpu_limit_cores"] * row["replicas_max"] for row in bounded)
    assert over.loc["main", "cpu_overcommit"] == pytest.approx(limit / request)
    db = reports.db_capacity(snap)
    rs = [fm.resource_spec(r) for r in fleet.deployments]
    connections = sum(s.get("db_max_connections") or 0 for s in rs)
    assert "all" not in set(db["deployment_type"])
    assert db["db_max_connections"].sum() == connections  # summing gives the fleet, once
    assert reports.db_capacity_total(snap)["db_max_connections"] == connections
    storage = sum(s.get("db_storage_gi") or 0 for s in rs)
    assert db["db_storage_gib"].sum() == pytest.approx(storage)


def test_pod_requests_follow_kubernetes_rule(fleet, snap) -> None:
    pods = reports.pod_requests(snap).set_index("deployment_id")
    checked = 0
    for record in fleet.deployments:
        parts = fm.components(record)
        if "sidecars_init" not in parts:
            continue
        main, extra = parts["main"], parts["sidecars_init"]
        for measure in fm.MEASURES:
            want = (
                None if None in (main[measure], extra[measure]) else main[measure] + extra[measure]
            )
            assert same(pods.loc[record["id"], f"pod_{measure}"], want), measure
        checked += 1
    assert checked > 20
    assert pods["pod_cpu_limit_cores"].isna().any()  # a sidecar with no limit: unbounded


def test_the_fleets_native_sidecars_count_as_sidecars(fleet, snap) -> None:
    """An init container with restartPolicy Always (a native sidecar; the sandbox fleet has
    one on its fixed schedule) is a sidecar: counted so, and its requests beside the main
    container's."""
    pods = reports.pod_requests(snap).set_index("deployment_id")
    native = [
        r
        for r in fleet.deployments
        if any(
            c.get("restartPolicy") == "Always"
            for c in fm.resource_spec(r).get("init_containers") or ()
        )
    ]
    assert len(native) == 3  # positions 52, 152 and 252
    for record in native:
        rs = fm.resource_spec(record)
        inits = rs["init_containers"]
        row = pods.loc[record["id"]]
        assert row["sidecars"] == len(rs.get("sidecars") or ()) + 1
        assert row["init_containers"] == len(inits) - 1
        side, _peak = fm.pod_parts(rs.get("sidecars") or [], inits, "cpu_request_cores")
        assert row["sidecars_cpu_request_cores"] == pytest.approx(side)
        assert side >= 0.25  # the native sidecar's 250m


def _one_pod(fleet, init_containers, sidecars=(), **scales) -> dict:
    """A fleet record whose main container asks 1 core (limit 2) and 1024 MiB, with the
    given containers and scales."""
    record = next(r for r in fleet.deployments if fm.resource_spec(r))
    source = dict(record["source_config"])
    source["resource_spec"] = {
        **source["resource_spec"],
        "cpu": 1,
        "cpu_limit": 2,
        "memory_mb": 1024,
        "memory_limit_mb": 1024,
        "min_scale": 1,
        "max_scale": 1,
        **scales,
        "sidecars": list(sidecars),
        "init_containers": list(init_containers),
    }
    return {**record, "source_config": source}


def _container(name: str, cpu: str, restart: str | None = None) -> dict:
    return {"name": name, "restartPolicy": restart, "resources": {"requests": {"cpu": cpu}}}


@pytest.mark.parametrize(
    ("inits", "pod_cpu"),
    [
        # a native sidecar (1 core) then a 2-core init container: they run together (3);
        # main + the native sidecar is 2
        ([("proxy", "1", "Always"), ("migrate", "2", None)], 3.0),
        # the same two the other way round: the init container ends before the sidecar
        # starts, so max(2, 1 + 1) = 2
        ([("migrate", "2", None), ("proxy", "1", "Always")], 2.0),
        # two native sidecars (0.5 each) then a 1.5-core init container: 2.5 at its turn
        ([("a", "500m", "Always"), ("b", "500m", "Always"), ("migrate", "1.5", None)], 2.5),
        # no native sidecar: the largest init container alone (OnFailure is no sidecar)
        ([("wait", "250m", "OnFailure"), ("migrate", "2", None)], 2.0),
        # native sidecars only: main 1 + 0.5 + 0.25
        ([("a", "500m", "Always"), ("b", "250m", "Always")], 1.75),
    ],
)
def test_native_sidecars_run_beside_the_init_containers_after_them(tmp_path, fleet, inits, pod_cpu):
    """Kubernetes' rule (KEP 753): per replica, max(main + sidecars + native sidecars, the
    init phase's peak), where each init container runs beside the native sidecars started
    before it. Figures worked out by hand; fleet_math's own reading agrees."""
    record = _one_pod(fleet, [_container(*c) for c in inits])
    fm.export_fleet([record], {record["id"]: "prod"}, tmp_path, DATE)
    pod = reports.pod_requests(tmp_path).set_index("deployment_id").loc[record["id"]]
    assert pod["pod_cpu_request_cores"] == pytest.approx(pod_cpu)
    extra = fm.components(record)["sidecars_init"]["cpu_request_cores"]
    assert 1.0 + extra == pytest.approx(pod_cpu)
    natives = sum(1 for c in inits if c[2] == "Always")
    assert (pod["sidecars"], pod["init_containers"]) == (natives, len(inits) - natives)


def test_a_fractional_scale_is_whole_pods_rounded_up(tmp_path, fleet) -> None:
    """1.5 replicas are 2 pods and 2.25 are 3 (a scheduler places whole pods): main and
    the sidecars_init part alike, in every total and cost."""
    record = _one_pod(
        fleet, [], sidecars=[_container("log", "500m")], min_scale=1.5, max_scale=2.25
    )
    fm.export_fleet([record], {record["id"]: "prod"}, tmp_path, DATE)
    rows = reports.component_capacity(tmp_path).set_index("component")
    for component, cpu in (("main", 1.0), ("sidecars_init", 0.5)):
        row = rows.loc[component]
        assert (row["replicas_min"], row["replicas_max"]) == (2, 3), component
        assert row["cpu_request_cores_min_scale"] == pytest.approx(2 * cpu)
        assert row["cpu_request_cores_max_scale"] == pytest.approx(3 * cpu)
    totals, want = reports.fleet_totals(tmp_path), fm.totals(record)  # every component
    assert totals["replicas_max"] == rows["replicas_max"].sum()
    for column in ("cpu_request_cores_min_scale", "cpu_limit_cores_max_scale"):
        assert same(totals[column], want[column]), column
    assert pd.isna(want["cpu_limit_cores_max_scale"] or float("nan"))  # no limit: unbounded
    pods = reports.pod_requests(tmp_path)
    assert pods[["replicas_min", "replicas_max"]].values.tolist() == [[2, 3]]


def test_largest_deployments(fleet, snap) -> None:
    ranked = sorted(
        fleet.deployments,
        key=lambda r: (-(fm.totals(r)["cpu_request_cores_max_scale"] or 0), r["id"]),
    )
    top = reports.largest_deployments(snap, n=5)
    assert top["deployment_id"].tolist() == [r["id"] for r in ranked[:5]]


def test_anomalies_name_the_deployments(fleet, snap) -> None:
    found = reports.anomalies(snap)

    def ids(kind: str, component: str | None = "main") -> set[str]:
        rows = found[found["anomaly"] == kind]
        if component is not None:
            rows = rows[rows["component"] == component]
        return set(rows["deployment_id"])

    specs = {r["id"]: fm.resource_spec(r) for r in fleet.deployments}
    assert ids("resource_spec_absent", None) == {
        i for i, r in zip(specs, fleet.deployments, strict=True) if not fm.resource_spec(r)
    }
    assert ids("cpu_limit_below_request") == {
        i for i, s in specs.items() if s and s["cpu_limit"] < s["cpu"]
    }
    assert ids("scale_inverted") == {
        i for i, s in specs.items() if s and s["max_scale"] < s["min_scale"]
    }
    assert ids("scale_inverted") == {
        r["id"] for r in fleet.deployments if fm.status(r)["scale_inverted"]
    }
    assert ids("zero_resources") == {i for i, s in specs.items() if s and s["cpu"] == 0}
    assert all(found["name"].notna() | found["deployment_id"].notna())


def test_rightsizing_signals(tmp_path, fleet) -> None:
    records = [dict(r) for r in fleet.deployments[:40]]
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    prod = next(r for r in records if types[r["id"]] == "prod" and fm.resource_spec(r))
    dev = next(r for r in records if types[r["id"]] == "dev" and fm.resource_spec(r))
    for record, cpu, mem in ((prod, 1, 1024), (dev, 4, 8192)):
        source = dict(record["source_config"])
        source["resource_spec"] = {**source["resource_spec"], "cpu": cpu, "memory_mb": mem}
        record["source_config"] = source
    fm.export_fleet(records, types, tmp_path, DATE)
    signals = reports.rightsizing(tmp_path).set_index("deployment_id")["signal"]
    assert signals[prod["id"]] == "prod_at_dev_defaults"
    assert signals[dev["id"]] == "dev_above_dev_defaults"


def test_image_versions(fleet, snap) -> None:
    summary = reports.image_version_summary(snap)
    counts: dict[object, int] = {}
    for record in fleet.deployments:
        counts[record.get("image_version")] = counts.get(record.get("image_version"), 0) + 1
    present = [v for v in VERSION_ORDER if v in counts]
    listed = summary["image_version"].tolist()
    assert listed[: len(present)] == present  # version order, unparseable after
    assert (None in counts) == (len(listed) == len(present) + 1)
    missing = summary["image_version"].isna()  # a missing version is NaN in a `str` column
    present_rows = summary[~missing]
    got = dict(zip(present_rows["image_version"], present_rows["deployments"], strict=True))
    if missing.any():
        got[None] = int(summary["deployments"][missing].item())
    assert got == counts
    behind = dict(zip(summary["image_version"], summary["versions_behind"], strict=True))
    parseable = [v for v in present if v != "latest"]
    for position, version in enumerate(reversed(parseable)):
        assert behind[version] == position
    assert pd.isna(behind["latest"])
    assert reports.newest_version(snap) == parseable[-1]

    shares = reports.newest_share_by_type(snap).set_index("deployment_type")
    for kind in ("dev_free", "dev", "prod"):
        mine = [r for r in fleet.deployments if fleet.deployment_types[r["id"]] == kind]
        on = sum(r.get("image_version") == parseable[-1] for r in mine)
        assert shares.loc[kind, "share_on_newest"] == pytest.approx(on / len(mine))


def test_deployments_behind(fleet, snap) -> None:
    parseable = [v for v in VERSION_ORDER if v != "latest"]
    present = [v for v in parseable if any(r.get("image_version") == v for r in fleet.deployments)]
    expected = {
        r["id"]: len(present) - 1 - present.index(r["image_version"])
        for r in fleet.deployments
        if r.get("image_version") in present
    }
    behind = reports.deployments_behind(snap)
    assert len(behind) == len(fleet.deployments)
    got = behind.dropna(subset=["versions_behind"])
    assert dict(zip(got["deployment_id"], got["versions_behind"], strict=True)) == expected
    assert list(got["versions_behind"]) == sorted(got["versions_behind"], reverse=True)
    assert behind["versions_behind"].isna().sum() == len(fleet.deployments) - len(expected)
    assert behind["versions_behind"].tail(1).isna().all()  # unparseable and missing come last


def test_pending_rollouts(fleet, snap) -> None:
    pending = reports.pending_rollouts(snap).set_index("deployment_id")
    expected = {
        r["id"]: r for r in fleet.deployments if r["active_revision_id"] != r["latest_revision_id"]
    }
    assert set(pending.index) == set(expected)
    at = fm.timestamp(f"{DATE}T06:00:00Z")
    for dep_id, record in expected.items():
        days = (at - fm.timestamp(record["updated_at"])).total_seconds() / 86400
        assert pending.loc[dep_id, "days_since_update"] == pytest.approx(days, abs=1e-5)


def test_report_files(report_path, dataset, dataset_date, fleet, snap) -> None:
    folder = dataset / "reports" / f"snapshot_date={dataset_date}"
    assert report_path == folder / "report.html"
    assert sorted(p.name for p in folder.iterdir()) == [
        "capacity_by_workspace.parquet",
        "capacity_summary.parquet",
        "cost_by_deployment.parquet",
        "image_version_summary.parquet",
        "report.html",
    ]
    capacity = pq.read_table(folder / "capacity_summary.parquet").to_pandas()
    pd.testing.assert_frame_equal(
        capacity, reports.capacity_summary(snap), check_dtype=False, check_like=True
    )
    by_workspace = pq.read_table(folder / "capacity_by_workspace.parquet").to_pandas()
    assert sorted(by_workspace["tenant_id"]) == fleet.tenant_ids()
    assert by_workspace["deployments"].sum() == len(fleet.deployments)
    assert by_workspace["cpu_request_cores_max_scale"].sum() == pytest.approx(
        capacity["cpu_request_cores_max_scale"].sum()
    )
    versions = pq.read_table(folder / "image_version_summary.parquet").to_pandas()
    assert {"image_version", "deployments", "versions_behind"} <= set(versions.columns)
    assert versions.loc[versions["image_version"] == "0.11.0", "versions_behind"].item() == 0
    assert versions["deployments"].sum() == len(fleet.deployments)


def test_html_is_self_contained_and_secret_free(report_path, fleet, canaries) -> None:
    page = report_path.read_text(encoding="utf-8")
    secrets = set(canaries)
    for record in fleet.deployments:
        secrets.update(s["value"] for s in record.get("secrets") or [])
    assert not [s for s in secrets if s in page]
    assert not re.search(r"https?://", page, re.IGNORECASE)
    assert not re.search(r"<script\b", page, re.IGNORECASE)
    assert not re.search(r"<link\b", page, re.IGNORECASE)
    assert not re.search(r"@import", page, re.IGNORECASE)
    assert not re.search(r"<(iframe|object|embed|img)\b", page, re.IGNORECASE)
    refs = re.findall(r"""\b(?:src|href|xlink:href)\s*=\s*["']?([^"'\s>]*)""", page, re.I)
    assert all(ref.startswith("#") for ref in refs), [r for r in refs if not r.startswith("#")]
    assert all(u.startswith("#") for u in re.findall(r"url\(\s*['\"]?([^)'\"]*)", page))
    assert page.count("<svg") >= 4
    assert "(GiB)" in page and "(cores)" in page  # units are spelled out


def test_html_tables_escape_values() -> None:
    from dims._reports import _html as html

    frame = pd.DataFrame({"name": ['<script>alert("x")</script>', "a & b"], "cpu": [1.5, 2.0]})
    rendered = html.table(frame)
    assert "<script>" not in rendered
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in rendered
    assert "a &amp; b" in rendered


def test_empty_and_missing_datasets(tmp_path) -> None:
    with pytest.raises(reports.DatasetError, match="dims export"):
        reports.write_report(tmp_path / "nothing")
    fm.export_fleet([], {}, tmp_path / "empty", DATE)
    page = reports.write_report(tmp_path / "empty").read_text(encoding="utf-8")
    assert "0 deployments" in page
    assert reports.image_version_summary(tmp_path / "empty").empty


@pytest.mark.parametrize("link", ["reports", f"reports/snapshot_date={DATE}"])
def test_a_report_folder_that_is_a_link_is_refused(tmp_path, fleet, capsys, link) -> None:
    """`reports/` or a day's folder in it that is a symbolic link would take the report
    outside --out (the dataset's rule): one line naming it, nothing written on either side."""
    out = tmp_path / "data"
    fm.export_fleet(fleet.deployments[:20], fleet.deployment_types, out, DATE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    (out / link).symlink_to(elsewhere, target_is_directory=True)
    before = sorted(p for p in out.rglob("*"))

    code, printed, err = run(capsys, "report", "--out", str(out))
    assert code == 1 and printed == ""
    (line,) = err.strip().splitlines()
    assert line == (
        f"dims report: error: {out / link} is a symbolic link; dims writes only inside --out "
        "and never through links it did not create: replace the link with a folder, or "
        "choose another --out"
    )
    assert list(elsewhere.iterdir()) == [] and sorted(out.rglob("*")) == before


def test_container_limit_below_request_is_listed(tmp_path, fleet) -> None:
    records = [r for r in fleet.deployments[:30] if fm.resource_spec(r)]
    record = records[0]
    source = dict(record["source_config"])
    sidecar = {"name": "tight", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}
    source["resource_spec"] = {**source["resource_spec"], "sidecars": [sidecar]}
    records[0] = {**record, "source_config": source}
    fm.export_fleet(records, fleet.deployment_types, tmp_path, DATE)
    found = reports.anomalies(tmp_path)
    rows = found[found["component"] == "sidecar:tight"]
    assert rows["deployment_id"].tolist() == [record["id"]]
    assert rows["anomaly"].tolist() == ["cpu_limit_below_request"]


def test_an_unreadable_quantity_is_counted_warned_and_listed(tmp_path, fleet) -> None:
    """Issue 27, item 4: a quantity Kubernetes refuses is null in the table, never 0; the
    export counts it (manifest) and warns once; the report lists it with its reason."""
    records = [r for r in fleet.deployments[:30] if fm.resource_spec(r)]
    record = records[0]
    source = dict(record["source_config"])
    sidecar = {
        "name": "odd",
        "resources": {"requests": {"cpu": "١٢", "memory": " 2Gi"}, "limits": {"cpu": "２"}},
    }
    source["resource_spec"] = {**source["resource_spec"], "sidecars": [sidecar]}
    records[0] = {**record, "source_config": source}
    pages = [Page(records, source="test", deployment_type="prod")]
    with pytest.warns(UnreadableQuantityWarning, match="3 container resource quantity value"):
        result = snapshot.export_snapshot(pages, tmp_path)
    assert result.manifest.unreadable_quantities == 3
    found = reports.anomalies(tmp_path)
    rows = found[found["anomaly"] == "unreadable_quantity"]
    assert rows["deployment_id"].tolist() == [record["id"]] * 3
    assert set(rows["component"]) == {"sidecar:odd"}
    assert sorted(rows["detail"]) == [
        'limits.cpu "２": digits other than ASCII 0-9',
        'requests.cpu "١٢": digits other than ASCII 0-9',
        'requests.memory " 2Gi": spaces are not part of a quantity',
    ]
    pod = reports.pod_requests(tmp_path).set_index("deployment_id").loc[record["id"]]
    # unreadable: unknown, never 0, and the deployment is in no total, with its reason
    assert pd.isna(pod["sidecars_cpu_request_cores"]) and pd.isna(pod["pod_cpu_request_cores"])
    costs = reports.cost_by_deployment(tmp_path).set_index("deployment_id").loc[record["id"]]
    assert (
        costs["unpriced_reason"]
        == "unreadable_quantity"
        == fm.status(records[0])["unpriced_reason"]
    )
    assert costs.filter(like="_usd_month").isna().all()
    assert reports.fleet_totals(tmp_path)["deployments_unpriced"] == 1


def test_the_reports_draw_without_matplotlib(tmp_path):
    """Charts are SVG written by dims: neither importing the reports nor writing a report
    imports matplotlib (about a second of a report's time), and a notebook's backend is
    left alone."""
    import subprocess
    import sys

    out = tmp_path / "data"
    fm.export_fleet([], {}, out, DATE)
    code = (
        "import sys; from dims import _reports as reports; reports.write_report(sys.argv[1]); "
        "assert 'matplotlib' not in sys.modules, 'matplotlib was imported'"
    )
    subprocess.run([sys.executable, "-c", code, str(out)], check=True)


def test_html_reads_like_a_dashboard(report_path, fleet) -> None:
    """Human headers with units, no literal backticks, one number format per unit, costs."""
    page = report_path.read_text(encoding="utf-8")
    headers = re.findall(r"<th[^>]*>(.*?)</th>", page)
    assert headers and not [t for t in headers if "_" in t], "raw snake_case header"
    assert "CPU requested at max scale (cores)" in headers
    # which totals include DB storage, and that the storage column is part of them
    assert "Requests at max scale, with DB storage ($/month)" in headers
    assert "DB storage ($/month, in every total)" in headers
    assert "Unpriced (in no figure)" in headers and "Limits unbounded (not in limits)" in headers
    assert "`" not in page and "<code>sidecars_init</code>" in page
    cells = re.findall(r'<td class="num">([^<]*)</td>', page)
    money = [c for c in cells if c.startswith("$")]
    assert money and all(re.fullmatch(r"\$[\d,]+\.\d\d", c) for c in money), money[:5]
    decimals = {len(c.split(".")[1]) for c in cells if re.fullmatch(r"[\d,]+\.\d+", c)}
    assert decimals == {2}, decimals  # never 1,424 beside 1,447.75 in a measure column
    for heading in ("Costs", "Right-sizing: what each suggestion saves a month"):
        assert heading in page
    assert "OpenCost custom-pricing defaults" in page and "730 hours a month" in page


def _chart(page: str, title: str) -> str:
    """The chart (its panels and legend) whose title starts with `title`."""
    start = page.index(f'aria-label="{title}')
    return page[start : page.index("</figure>", start)]


def _panels(chart: str) -> list[str]:
    return re.findall(r'<svg class="panel".*?</svg>', chart, re.S)


def test_charts_show_every_type_and_both_scales(report_path, fleet) -> None:
    page = report_path.read_text(encoding="utf-8")
    kinds = sorted(set(fleet.deployment_types.values()))
    capacity = _chart(page, "Requested capacity by deployment type")
    panels = _panels(capacity)
    assert len(panels) == 2 * len(kinds)  # CPU and memory, one axis per type: none vanishes
    for kind in kinds:
        assert sum(f'aria-label="{kind} · ' in p for p in panels) == 2, kind
    assert all(">min scale<" in p and ">max scale<" in p for p in panels)
    costs = _panels(_chart(page, "Monthly cost by deployment type"))
    assert [re.search(r'aria-label="([^"]*)"', p)[1] for p in costs] == [
        str(k)
        for k in reports.capacity_by(report_path.parents[2], ["deployment_type"]).deployment_type
    ]  # most expensive first
    namespaces = _chart(page, "Top 10 by Kubernetes namespace")
    assert "agents-prod" in namespaces and "%" in namespaces
    limits = _chart(page, "Requests and limits per component")
    assert ">unbounded<" in limits  # sidecars without limits: never 1.00x
    assert "requested" in limits and "limit beyond the request" in limits


def test_chart_text_is_never_smaller_than_12_px(report_path) -> None:
    page = report_path.read_text(encoding="utf-8")
    sizes = {float(size) for size in re.findall(r'<text [^>]*font-size="([\d.]+)"', page)}
    assert sizes and min(sizes) >= 12, sizes
    widths = [int(w) for w in re.findall(r'<svg class="panel"[^>]* width="(\d+)"', page)]
    assert widths and max(widths) <= 360  # a phone's width, beside the page's margins


def _svg_texts(svg: str) -> list[str]:
    """The text of every `<text>` element, as a reader of the chart sees it."""
    return [html.unescape(t).strip() for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]


#: Service strings matplotlib read as mathtext (`$t^$` did not parse, and the report failed
#: on it; `$\alpha$` was drawn as a Greek letter): the charts draw them as written.
MATHTEXT_LIKE = {
    "name": "api $x^$",
    "k8s_namespace": r"ns-$\alpha$",
    "image_version": "$1.0^$",
    "deployment_type": "$t^$",
    "tenant_id": "$w_{$",
}


def test_dollar_signs_in_service_strings_stay_plain_text(capsys, tmp_path, fleet) -> None:
    records = copy.deepcopy(fleet.deployments[:12])
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    for record in records[:3]:
        record["name"] = MATHTEXT_LIKE["name"]
        record["image_version"] = MATHTEXT_LIKE["image_version"]
        record["tenant_id"] = MATHTEXT_LIKE["tenant_id"]
        listener = record["source_config"].setdefault("listener_config", {})
        listener["k8s_namespace"] = MATHTEXT_LIKE["k8s_namespace"]
        types[record["id"]] = MATHTEXT_LIKE["deployment_type"]
    out = tmp_path / "data"
    fm.export_fleet(records, types, out, DATE)
    code, _, err = run(capsys, "report", "--out", str(out))
    assert code == 0, err
    page = (out / "reports" / f"snapshot_date={DATE}" / "report.html").read_text("utf-8")
    texts = {
        title: _svg_texts(_chart(page, title))
        for title in (
            "Requested capacity by",
            "Monthly cost by",
            "Top 10 by Kub",
            "Deployments per",
        )
    }
    kind = MATHTEXT_LIKE["deployment_type"]
    assert f"{kind} · CPU, cores" in texts["Requested capacity by"]
    assert kind in texts["Monthly cost by"]
    assert MATHTEXT_LIKE["k8s_namespace"] in texts["Top 10 by Kub"]
    assert MATHTEXT_LIKE["image_version"] in texts["Deployments per"]  # a bar's label
    assert f">{html.escape(kind, quote=False)}</span>" in _chart(page, "Deployments per")  # legend
    for value in MATHTEXT_LIKE.values():  # and the tables show them as written
        assert f">{html.escape(value, quote=False)}<" in page, value


def test_panels_escape_what_they_draw() -> None:
    """Service strings are text in a panel, never markup: `<`, `&` and quotes escaped."""
    from dims._reports import _svg

    bar = _svg.Bar("<b>a & b</b> $t^$", [_svg.Segment(1.0, "#000", '"q"')], "n<1 $x_$")
    drawn = _svg.hbars(r"t<i> $\alpha$", [bar], str)
    assert "<b>" not in drawn and "<i>" not in drawn
    assert {"<b>a & b</b> $t^$", "n<1 $x_$", r"t<i> $\alpha$"} <= set(_svg_texts(drawn))
