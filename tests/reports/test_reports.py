"""Report figures equal an independent computation over the same raw fleet.

The dataset is written by the real export path; the expected figures come from the raw
fleet dicts in plain Python (tests/fleet_math.py), never from analysis.tables or the reports.
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

from analysis import reports

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


def test_capacity_summary_equals_independent_totals(fleet, snap) -> None:
    expected = fm.grouped_totals(fleet.deployments, _by_type(fleet))
    summary = reports.capacity_summary(snap)
    got = {(r.component, r.deployment_type): r for r in summary.itertuples(index=False)}
    assert set(got) == set(expected)
    for key, want in expected.items():
        row = got[key]._asdict()
        assert row["deployments"] == len(want["ids"]), key
        for column, value in want.items():
            if column != "ids":
                assert row[column] == pytest.approx(value, abs=1e-9), (key, column)
    assert "sidecars_init" in summary["component"].tolist()


def test_capacity_by_namespace_and_fleet_totals(fleet, snap) -> None:
    expected = fm.grouped_totals(fleet.deployments, lambda r, c: fm.namespace(r))
    by_ns = reports.capacity_by_namespace(snap).set_index("k8s_namespace")
    for namespace, want in expected.items():
        assert by_ns.loc[namespace, "deployments"] == len(want["ids"])
        for column in ("cpu_request_cores_max_scale", "memory_limit_gib_min_scale"):
            assert by_ns.loc[namespace, column] == pytest.approx(want[column])
    per_deployment = [fm.totals(r) for r in fleet.deployments]
    totals = reports.fleet_totals(snap)
    for column in ("cpu_request_cores_max_scale", "memory_request_gib_min_scale"):
        assert totals[column] == pytest.approx(sum(t[column] for t in per_deployment))
    assert totals["db_storage_gib"] == pytest.approx(
        sum(t["db_storage_gib"] for t in per_deployment)
    )


def test_overcommit_and_db(fleet, snap) -> None:
    per_deployment = [fm.totals(r) for r in fleet.deployments]
    request = sum(t["cpu_request_cores_max_scale"] for t in per_deployment)
    limit = sum(t["cpu_limit_cores_max_scale"] for t in per_deployment)
    over = reports.overcommit(snap)
    assert "overall" not in set(over["component"])  # the fleet's ratio is separate
    assert reports.overcommit_total(snap)["cpu_overcommit"] == pytest.approx(limit / request)
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
            want = main[measure] + extra[measure]
            assert pods.loc[record["id"], f"pod_{measure}"] == pytest.approx(want), measure
        checked += 1
    assert checked > 20


def test_largest_deployments(fleet, snap) -> None:
    ranked = sorted(
        fleet.deployments,
        key=lambda r: (-fm.totals(r)["cpu_request_cores_max_scale"], r["id"]),
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
    assert ids("max_scale_below_min_scale") == {
        i for i, s in specs.items() if s and s["max_scale"] < s["min_scale"]
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
    from analysis.reports import html

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


def test_importing_the_reports_leaves_the_notebook_backend_alone():
    """Charts draw on their own Figure objects, so Jupyter's inline backend keeps working."""
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('pdf'); import analysis.reports; "
        "from analysis.reports import charts; "
        "assert matplotlib.get_backend() == 'pdf', matplotlib.get_backend()"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_html_reads_like_a_dashboard(report_path, fleet) -> None:
    """Human headers with units, no literal backticks, one number format per unit, costs."""
    page = report_path.read_text(encoding="utf-8")
    headers = re.findall(r"<th[^>]*>(.*?)</th>", page)
    assert headers and not [t for t in headers if "_" in t], "raw snake_case header"
    assert "CPU requested at max scale (cores)" in headers
    assert "Requests at max scale ($/month)" in headers
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
    start = page.index(f'aria-label="{title}')
    return page[start : page.index("</svg>", start)]


def test_charts_show_every_type_and_both_scales(report_path, fleet) -> None:
    page = report_path.read_text(encoding="utf-8")
    kinds = sorted(set(fleet.deployment_types.values()))
    capacity = _chart(page, "Requested capacity by deployment type")
    panels = set(re.findall(r'id="c[0-9a-f]+-(axes_\d+)"', capacity))
    assert len(panels) == 2 * len(kinds)  # CPU and memory, one axis per type: none vanishes
    costs = _chart(page, "Monthly cost by deployment type")
    assert len(set(re.findall(r'id="c[0-9a-f]+-(axes_\d+)"', costs))) == len(kinds)
    for kind in kinds:
        assert f"> {kind}" in capacity or f">{kind}<" in capacity, kind
    namespaces = _chart(page, "Top 15 namespaces")
    assert "min scale" in namespaces and "max scale" in namespaces
    limits = _chart(page, "Requests vs limits per component")
    assert "request" in limits and "limit" in limits


def _svg_texts(svg: str) -> list[str]:
    """The text of every `<text>` element, as a reader of the chart sees it."""
    return [html.unescape(t).strip() for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]


#: Service strings matplotlib reads as mathtext: `$t^$` does not parse (the report failed on
#: it), `$\alpha$` parses and would be drawn as a Greek letter.
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
        for title in ("Requested capacity by", "Monthly cost by", "Top 15", "Deployments per")
    }
    kind = MATHTEXT_LIKE["deployment_type"]
    assert kind in texts["Requested capacity by"] and kind in texts["Monthly cost by"]
    assert MATHTEXT_LIKE["k8s_namespace"] in texts["Top 15"]
    assert MATHTEXT_LIKE["image_version"] in texts["Deployments per"]  # a tick label
    assert kind in texts["Deployments per"]  # a legend entry
    for value in MATHTEXT_LIKE.values():  # and the tables show them as written
        assert f">{html.escape(value, quote=False)}<" in page, value


def test_to_svg_saves_every_text_as_written() -> None:
    """Texts made outside the charts' style (a title, tick labels drawn later) stay plain."""
    from matplotlib.figure import Figure

    from analysis.reports import charts

    fig = Figure()
    ax = fig.subplots()
    ax.set_title("$t^$")
    ax.bar([0, 1], [1, 2])
    ax.set_xticks([0, 1], [r"$\alpha$", "$x_$"])
    texts = _svg_texts(charts.to_svg(fig, "plain"))
    assert {"$t^$", r"$\alpha$", "$x_$"} <= set(texts), texts
