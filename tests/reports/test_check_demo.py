"""docs/check.md's example rules on the demo's two days give exactly the violations the raw
records show (computed here from the records, not from `dims._reports`), none of them
because something could not be priced; an unchanged fleet never fails drift, whatever it
leaves unpriced; a deployment newly unpriced is reported apart from the growth.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import fleet_math as fm
import pytest
from repo import ROOT

from dims import _policy as policy
from dims import _reports as reports
from dims._cli import main
from dims.sandbox import generate_fleet, second_day

REQUESTS_MAX = "cost_request_max_scale_usd_month"
DOCS = ROOT / "docs" / "check.md"
#: `dims demo`'s defaults: 500 deployments, seed 0, `--roll-out 0.12.0` at `--share 0.3`.
DEMO = {"deployments": 500, "seed": 0, "version": "0.12.0", "share": 0.3}
_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.]+))?")


def _documented_yaml() -> str:
    (block,) = re.findall(r"```yaml\n(# rules\.yaml\n.*?)```", DOCS.read_text(), re.S)
    return block


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict[str, Any]:
    """`dims demo --roll-out 0.12.0` into a folder, and the same two days as raw records."""
    out = tmp_path_factory.mktemp("demo") / "dims-demo"
    assert main(["demo", "--out", str(out), "--roll-out", DEMO["version"]]) == 0
    fleet = generate_fleet(DEMO["deployments"], DEMO["seed"])
    first, first_types = copy.deepcopy(fleet.deployments), dict(fleet.deployment_types)
    day = second_day(fleet, DEMO["version"], DEMO["share"])
    days = reports.snapshot_days(out)
    return {
        "out": out,
        "then": reports.load_snapshot(out, days[0]),
        "now": reports.load_snapshot(out, days[1]),
        "first": first,
        "second": fleet.deployments,
        "types": {**first_types, **fleet.deployment_types},
        "day": day,
    }


def test_the_demo_exported_the_records_computed_here(demo) -> None:
    for snap, records in ((demo["then"], demo["first"]), (demo["now"], demo["second"])):
        assert set(snap.deployments["id"]) == {r["id"] for r in records}


def _team(record: dict) -> str:
    return (fm.resource_spec(record).get("labels") or {}).get("team") or "__unallocated__"


def _in(group: str, record: dict, types: dict[str, str]) -> bool:
    if group == "fleet":
        return True
    key, value = group.split("=", 1)
    found = {
        "type": types[record["id"]],
        "namespace": fm.namespace(record),
        "label:team": _team(record),
    }[key]
    return found == value


def _cost(record: dict) -> float | None:
    return fm.monthly_costs(record)[REQUESTS_MAX]


def _version_key(text: object) -> tuple | None:
    match = _VERSION.fullmatch(str(text)) if text is not None else None
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch), pre is None, pre or "")


def _over_budget(data: dict, demo: dict) -> set[tuple[str, str]]:
    """The budgets whose known figure (the raw records' dollars) is above the limit."""
    found = set()
    for group, limit in data["budgets"].items():
        known = [c for r in demo["second"] if _in(group, r, demo["types"]) and (c := _cost(r))]
        if round(sum(known), 2) > round(limit, 2):
            found.add(("budgets", group))
    return found


def _expected(data: dict, demo: dict) -> set[tuple[str, str]]:
    """(rule, group) of every violation the raw records show under the documented rules."""
    now, types = demo["second"], demo["types"]
    found = _over_budget(data, demo)
    keys = {r["id"]: _version_key(r.get("image_version")) for r in now}
    ranked = sorted({k for k in keys.values() if k is not None}, reverse=True)
    behind = {i: ranked.index(k) for i, k in keys.items() if k is not None}
    if max(behind.values()) > data["max_versions_behind"]:
        found.add(("max_versions_behind", "fleet"))
    on_newest = sum(k == ranked[0] for k in keys.values()) / len(now)
    if on_newest < data["min_share_on_newest"]:
        found.add(("min_share_on_newest", "fleet"))
    prod = [r for r in now if types[r["id"]] == "prod"]
    if any(fm.status(r)["limits_unbounded"] for r in prod):
        found.add(("no_unbounded_limits", "type=prod"))
    if any(fm.status(r)["scale_inverted"] for r in now):
        found.add(("no_inverted_scales", "fleet"))
    rs = [fm.resource_spec(r) for r in prod]
    if any(s.get("cpu") == 1 and s.get("memory_mb") == 1024 for s in rs):
        found.add(("no_prod_at_dev_defaults", "type=prod"))
    for key in data["drift"]["by"]:
        for value in {_in_value(key, r, types) for r in now}:
            grew, before = _growth(f"{key}={value}", demo)
            if round(grew, 2) > data["drift"]["max_increase_usd"]:
                found.add(("drift.max_increase_usd", f"{key}={value}"))
            share = 100 * grew / before if before else (float("inf") if grew > 0 else 0.0)
            if round(share, 2) > data["drift"]["max_increase_percent"]:
                found.add(("drift.max_increase_percent", f"{key}={value}"))
    return found


def _in_value(key: str, record: dict, types: dict[str, str]) -> str:
    return types[record["id"]] if key == "type" else _team(record)


def _growth(group: str, demo: dict) -> tuple[float, float]:
    """(growth, cost before) of a group over the deployments whose cost is known on each
    side they are on: the raw records' own account of drift."""
    now = {r["id"]: _cost(r) for r in demo["second"] if _in(group, r, demo["types"])}
    then = {r["id"]: _cost(r) for r in demo["first"] if _in(group, r, demo["types"])}
    every_now = {r["id"]: _cost(r) for r in demo["second"]}
    every_then = {r["id"]: _cost(r) for r in demo["first"]}
    after = sum(c for i, c in now.items() if c is not None and every_then.get(i, 0) is not None)
    before = sum(c for i, c in then.items() if c is not None and every_now.get(i, 0) is not None)
    return after - before, before


def test_the_documented_rules_give_exactly_the_real_violations_on_the_demo(demo, tmp_path) -> None:
    import yaml

    text = _documented_yaml()
    data = yaml.safe_load(text)
    rules = tmp_path / "rules.yaml"
    rules.write_text(text, encoding="utf-8")
    result = policy.check(demo["now"], policy.load_rules(rules), against=demo["then"])
    got = {(v.rule, v.group) for v in result.violations}
    assert got == _expected(data, demo)
    assert all(v.op != "may exceed" for v in result.violations)  # nothing fails on the unknown
    assert any(v.rule.startswith("drift") for v in result.violations)  # the demo moves money
    unpriced = {r["id"] for r in demo["second"] if fm.status(r)["unpriced_reason"] is not None}
    assert unpriced  # the demo leaves deployments unpriced, and the fleet's budget says so
    (fleet_note,) = [n for n in result.notices if (n.rule, n.group) == ("budgets", "fleet")]
    assert set(fleet_note.deployment_ids) == unpriced and "to be priced:" in fleet_note.message


def test_the_demos_second_day_moves_money_by_cause(demo) -> None:
    """Deployments added, removed, scaled and resized: `diff` says each in dollars, and the
    causes add up to the change of the fleet's cost (the raw records' sums)."""
    found = reports.diff(demo["out"])
    by_cause = found.cost_changes.groupby("cause")[REQUESTS_MAX].sum()
    for cause in ("added", "removed", "scale", "requests"):
        assert abs(by_cause[cause]) > 1, cause
    day = demo["day"]
    changes = found.cost_changes.set_index("deployment_id")["cause"]
    assert {changes[i] for i in day.added if i in changes} == {"added"}
    assert {changes[i] for i in day.removed if i in changes} == {"removed"}
    assert set(day.scaled) & set(changes.index) <= set(changes.index[changes == "scale"])
    assert set(day.resized) & set(changes.index) <= set(changes.index[changes == "requests"])
    total = fm.fleet_cost(demo["second"], REQUESTS_MAX) - fm.fleet_cost(demo["first"], REQUESTS_MAX)
    assert by_cause.sum() == pytest.approx(total, abs=0.01)
    assert abs(total) > 0 or by_cause.abs().sum() > 100


def test_an_unchanged_fleet_never_fails_drift_even_under_unknown_costs_fail(demo) -> None:
    rules = policy.parse_rules(
        {
            "unknown_costs": "fail",
            "drift": {"by": ["type", "label:team", "namespace"], "max_increase_usd": 0,
                      "max_increase_percent": 0},
        }
    )  # fmt: skip
    result = policy.check(demo["now"], rules, against=demo["now"])
    assert result.passed and result.violations == [] and result.notices == []


def test_a_deployment_newly_unpriced_is_reported_apart_not_as_growth(tmp_path, demo) -> None:
    """Day 2 of a fleet where one priced deployment loses its resource_spec and another, of
    another type, asks for more: the growth is the second's alone; the first is a notice
    (default) or a "may exceed" (`unknown_costs: fail`), named with what it needs."""
    first = copy.deepcopy(demo["first"][:60])
    types = {r["id"]: demo["types"][r["id"]] for r in first}
    second = copy.deepcopy(first)
    priced = [r for r in second if fm.status(r)["unpriced_reason"] is None]
    lost = priced[0]
    grown = next(r for r in priced if types[r["id"]] != types[lost["id"]])
    lost["source_config"]["resource_spec"] = None
    fm.resource_spec(grown)["cpu"] += 3
    fm.export_fleet(first, types, tmp_path, "2025-06-01")
    fm.export_fleet(second, types, tmp_path, "2025-06-02")
    now = reports.load_snapshot(tmp_path, "2025-06-02")
    drift = {"by": ["type"], "max_increase_usd": 0}
    noticed = policy.check(now, policy.parse_rules({"drift": drift}))
    kind = types[grown["id"]]
    (violation,) = [v for v in noticed.violations if v.group == f"type={kind}"]
    assert violation.deployment_ids == (grown["id"],)
    before = next(r for r in first if r["id"] == grown["id"])
    assert violation.figure == pytest.approx(_cost(grown) - _cost(before))
    (notice,) = [n for n in noticed.notices if lost["id"] in n.deployment_ids]
    assert (
        notice.deployment_ids == (lost["id"],) and "1 deployment newly unpriced" in notice.message
    )
    assert policy.NEEDS["resource_spec_absent"] in notice.message
    failed = policy.check(now, policy.parse_rules({"drift": drift, "unknown_costs": "fail"}))
    may = [v for v in failed.violations if v.op == "may exceed"]
    assert [v.deployment_ids for v in may] == [(lost["id"],)]


def test_the_demo_day_is_seeded() -> None:
    days = []
    for _ in range(2):
        fleet = generate_fleet(80, 4)
        days.append((second_day(fleet, "9.9.9", 0.3, seed=2), fleet.deployments))
    assert days[0] == days[1]
    assert all(days[0][0]) and len(days[0][1]) == 80


# -- the pull-request comment ------------------------------------------------------------


def _comment(capsys, demo, tmp_path, *extra: str) -> tuple[int, str]:
    rules = tmp_path / "rules.yaml"
    rules.write_text(_documented_yaml(), encoding="utf-8")
    capsys.readouterr()
    code = main(["check", "--rules", str(rules), "--out", str(demo["out"]), *extra])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("host", ["markdown", "github", "gitlab"])
def test_a_comment_has_the_summary_violations_cost_by_group_and_details(
    capsys, demo, tmp_path, host
) -> None:
    from fleet_invariants import assert_sound_comment

    code, body = _comment(capsys, demo, tmp_path, "--format", host)
    result = policy.check(
        demo["now"], policy.load_rules(tmp_path / "rules.yaml"), against=demo["then"]
    )
    assert code == 1 and not result.passed
    assert_sound_comment(body.removesuffix("\n"), host)
    assert body.startswith(policy.MARKER) is (host != "markdown")
    assert ("> [!CAUTION]" in body) is (host == "github")
    lines = body.splitlines()
    head = lines.index("| rule | group | figure | limit | why | deployments |")
    rows = lines[head + 2 : lines.index("", head)]
    assert len(rows) == len(result.violations)
    # the fleet's row is the raw records' dollars, both days
    before = fm.fleet_cost(demo["first"], REQUESTS_MAX)
    after = fm.fleet_cost(demo["second"], REQUESTS_MAX)
    (fleet,) = [line for line in lines if line.startswith("| **fleet** |")]
    assert fleet.split(" | ")[1:3] == [f"${before:,.2f}", f"${after:,.2f}"]
    # each team's change is the raw records' own
    for team in {_team(r) for r in demo["second"]} - {"__unallocated__"}:
        grew = fm.fleet_cost([r for r in demo["second"] if _team(r) == team], REQUESTS_MAX)
        was = fm.fleet_cost([r for r in demo["first"] if _team(r) == team], REQUESTS_MAX)
        (row,) = [line for line in lines if line.startswith(f"| label\\:team\\={team} |")]
        sign = "+" if grew - was >= 0 else "−"
        assert row.split(" | ")[3] == f"{sign}${abs(grew - was):,.2f}"
    details = body.index("<details><summary>")
    assert body.index("| rule | status |") > details and body.rstrip().endswith("</details>")


def test_skip_unchanged_writes_nothing_only_when_nothing_changed(capsys, demo, tmp_path) -> None:
    same = demo["now"].snapshot_date
    code, body = _comment(capsys, demo, tmp_path, "--format", "github", "--skip-unchanged",
                          "--against", same)  # fmt: skip
    assert (code, body) == (0, "")
    code, body = _comment(capsys, demo, tmp_path, "--format", "github", "--skip-unchanged")
    assert code == 1 and body.startswith(policy.MARKER)  # the demo's second day changed


def test_json_and_a_comment_format_together_are_refused(capsys, demo, tmp_path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(_documented_yaml(), encoding="utf-8")
    capsys.readouterr()
    argv = ["check", "--rules", str(rules), "--out", str(demo["out"]), "--format", "gitlab"]
    assert main([*argv, "--json"]) == 2
    assert "--json and --format gitlab" in capsys.readouterr().err


HOSTILE_NAMES = [
    "pipe | in | name",
    "tick `code` tick",
    "line\nFAIL forged | x | y",
    "<!-- dims-check --> <details><script>alert(1)</script>",
    "**bold** [link](https://example.com) ![img](x) # heading",
    "back\\slash\\|pipe",
]


def test_hostile_names_neither_break_the_table_nor_forge_lines(tmp_path, capsys) -> None:
    from fleet_invariants import assert_sound_comment

    fleet = generate_fleet(40, 3)
    records = copy.deepcopy(fleet.deployments)
    for i, record in enumerate(records):  # every deployment named: whichever a line shows
        record["name"] = f"{HOSTILE_NAMES[i % len(HOSTILE_NAMES)]} {i}"
    types = dict(fleet.deployment_types)
    fm.export_fleet(records, types, tmp_path / "data", "2025-06-01")
    rules = tmp_path / "rules.yaml"
    rules.write_text("no_inverted_scales: true\nmax_versions_behind: 0\nbudgets:\n  fleet: 1\n")
    for host in ("markdown", "github", "gitlab"):
        capsys.readouterr()
        code = main(["check", "--rules", str(rules), "--out", str(tmp_path / "data"),
                     "--format", host])  # fmt: skip
        body = capsys.readouterr().out
        assert code == 1
        assert_sound_comment(body.removesuffix("\n"), host)
        escaped = ("pipe \\| in \\| name", "line\\\\nFAIL forged \\| x", "&lt;script&gt;")
        assert sum(body.count(e) for e in escaped) >= 3  # the names are there, escaped


def test_a_comment_keeps_within_its_hosts_limit() -> None:
    many = tuple(
        policy.Notice("budgets", f"label:team=t{i}", "x" * 200, (f"id-{i}",), (f"n{i}",))
        for i in range(600)
    )
    result = policy.CheckResult(
        "2025-06-02", None, "requests at max scale",
        (policy.RuleResult("budgets", "pass", 600, notices=many),),
    )  # fmt: skip
    github = policy.comment(result, None, None, "github")
    gitlab = policy.comment(result, None, None, "gitlab")
    assert len(github) <= policy.LIMITS["github"] < len(gitlab)
    assert "cut to fit" in github and "cut to fit" not in gitlab
    assert github.rstrip().endswith("</details>")


def test_the_demos_report_shows_the_second_days_dollars_by_cause(demo) -> None:
    (page,) = (demo["out"] / "reports").glob(f"snapshot_date={demo['now'].snapshot_date}/*.html")
    text = page.read_text(encoding="utf-8")
    for cause in ("deployments added", "deployments removed", "scale changes", "request changes"):
        assert cause in text, cause
