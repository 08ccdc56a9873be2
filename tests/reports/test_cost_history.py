"""`cost_history` and `dims history --by` equal an independent computation: each day's
per-deployment costs (tests/fleet_math.py, from the raw records and the rates written out
there, never dims._reports) summed per team in plain Python, on the demo's two days
(`sandbox.second_day`) and on a history with a gap and deployments removed and returning.
`cost_history.parquet` is read back with pyarrow and through `dims sql`."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import fleet_math as fm
import pyarrow.parquet as pq
import pytest

from dims import _reports as reports
from dims._reports import cost_history, group_cost_changes
from dims.sandbox import generate_fleet, second_day

COST_HISTORY_COLUMNS = [
    "day",
    "grouping",
    "group",
    "deployments",
    "deployments_unpriced",
    "deployments_unbounded",
    *(f"cost_{b}_{s}_scale_usd_month" for b in ("request", "limit") for s in ("min", "max")),
]
COSTS = [f"cost_{b}_{s}_scale_usd_month" for b in ("request", "limit") for s in ("min", "max")]


def _team(record: dict[str, Any]) -> str:
    labels = fm.resource_spec(record).get("labels")
    team = labels.get("team") if isinstance(labels, dict) else None
    return team if isinstance(team, str) else "__unallocated__"


def expected(days: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(day, team) -> deployments, unpriced and the four costs (None when none is known)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for day, records in days.items():
        for record in records:
            row = out.setdefault(
                (day, _team(record)),
                {"deployments": 0, "unpriced": 0, **dict.fromkeys(COSTS)},
            )
            row["deployments"] += 1
            costs = fm.monthly_costs(record)
            if all(costs[c] is None for c in COSTS):
                row["unpriced"] += 1
            for column in COSTS:
                if costs[column] is not None:
                    row[column] = (row[column] or 0.0) + costs[column]
    return out


def assert_history_is(frame: Any, days: dict[str, list[dict[str, Any]]]) -> None:
    want = expected(days)
    got = {(r["day"], r["group"]): r for r in frame.to_dict(orient="records")}
    assert set(got) == set(want)
    for key, row in want.items():
        assert got[key]["deployments"] == row["deployments"], key
        assert got[key]["deployments_unpriced"] == row["unpriced"], key
        for column in COSTS:
            value = got[key][column]
            if row[column] is None:
                assert value is None or math.isnan(value), (key, column)
            else:
                assert value == pytest.approx(row[column], rel=1e-9, abs=1e-6), (key, column)


def _export(days: dict[str, list[dict[str, Any]]], types: dict[str, str], out: Path) -> None:
    for day, records in days.items():
        fm.export_fleet(records, types, out, day)


def test_the_demo_days_cost_history_and_changes(tmp_path):
    fleet = generate_fleet(120, seed=3)
    first = copy.deepcopy(fleet.deployments)
    types = dict(fleet.deployment_types)
    moved = second_day(fleet, "9.9.9", 0.3, seed=1)
    assert moved.scaled or moved.resized
    types.update(fleet.deployment_types)
    days = {"2025-06-01": first, "2025-06-02": copy.deepcopy(fleet.deployments)}
    out = tmp_path / "data"
    _export(days, types, out)

    history = cost_history(out, "label:team")
    assert list(history.columns) == COST_HISTORY_COLUMNS
    assert set(history["grouping"]) == {"label:team"}
    assert_history_is(history, days)

    # the changes are the differences of the independent sums, per team
    want = expected(days)
    changes = group_cost_changes(history)
    headline = "cost_request_max_scale_usd_month"
    assert len(changes) > 0
    for row in changes.to_dict(orient="records"):
        before = want.get(("2025-06-01", row["group"]), {}).get(headline) or 0.0
        after = want.get(("2025-06-02", row["group"]), {}).get(headline) or 0.0
        assert row["change"] == pytest.approx(after - before, abs=1e-6)
    moved_teams = {
        team
        for team in {t for _, t in want}
        if abs(
            (want.get(("2025-06-02", team), {}).get(headline) or 0.0)
            - (want.get(("2025-06-01", team), {}).get(headline) or 0.0)
        )
        > 1e-6
    }
    assert moved_teams <= set(changes["group"])

    # the report writes it beside its tables; `dims sql` sees it; without --by it is gone
    assert run_ok("report", "--out", str(out), "--by", "label:team", "--quiet")
    folder = out / "reports" / "snapshot_date=2025-06-02"
    written = pq.read_table(folder / "cost_history.parquet").to_pandas()
    assert_history_is(written, days)
    code, printed, _ = _run("sql", "--out", str(out), "--json", SQL_JUMP)
    assert code == 0
    rows = json.loads(printed)
    assert {r["team"] for r in rows} == {t for t in moved_teams if _jump(want, t) > 1e-6}
    assert run_ok("report", "--out", str(out), "--quiet")
    assert not (folder / "cost_history.parquet").exists()

    # dims history --by: JSON is the changes; the terminal names every moved team
    code, printed, _ = _run("history", "--out", str(out), "--by", "label:team", "--json")
    assert code == 0
    listed = json.loads(printed)
    assert listed["days"] == ["2025-06-01", "2025-06-02"]
    assert {c["group"] for c in listed["changes"]} == set(changes["group"])
    code, printed, _ = _run("history", "--out", str(out), "--by", "label:team")
    assert code == 0
    for team in list(changes["group"])[:10]:
        assert team in printed


#: "when did a team's cost jump": docs/reports.md's example.
SQL_JUMP = (
    'select day, "group" as team, cost_request_max_scale_usd_month - lag('
    'cost_request_max_scale_usd_month) over (partition by "group" order by day) as jump '
    "from cost_history where grouping = 'label:team' qualify jump > 0 order by jump desc"
)


def _jump(want: dict[tuple[str, str], dict[str, Any]], team: str) -> float:
    headline = "cost_request_max_scale_usd_month"
    before = want.get(("2025-06-01", team), {}).get(headline)
    after = want.get(("2025-06-02", team), {}).get(headline)
    if before is None or after is None:
        return 0.0
    return float(after - before)


def _run(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from dims._cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def run_ok(*argv: str) -> bool:
    return _run(*argv)[0] == 0


def test_a_history_with_a_gap_and_deployments_removed_and_returning(tmp_path):
    fleet = generate_fleet(60, seed=11)
    records = fleet.deployments
    gone = records[:10]
    days = {
        "2025-01-01": records,
        "2025-01-02": records[10:],  # ten removed
        # 2025-01-03 missing: a gap
        "2025-01-04": records,  # and back
        "2025-01-05": records[:5] + records[30:],
    }
    out = tmp_path / "data"
    _export(days, dict(fleet.deployment_types), out)
    history = cost_history(out, ["label:team"])
    assert sorted(set(history["day"])) == sorted(days)
    assert_history_is(history, days)
    changes = group_cost_changes(history)
    assert set(changes["previous_day"]) <= {"2025-01-01", "2025-01-02", "2025-01-04"}
    # the day after the gap compares with the day before it
    back = changes[changes["day"] == "2025-01-04"]
    assert set(back["previous_day"]) == {"2025-01-02"}
    assert {_team(r) for r in gone} <= set(changes[changes["day"] == "2025-01-02"]["group"])
    # --from/--to bound the days; a date not in the dataset is one line, exit 1
    part = cost_history(out, "label:team", from_date="2025-01-02", to_date="2025-01-04")
    assert sorted(set(part["day"])) == ["2025-01-02", "2025-01-04"]
    code, _, err = _run("history", "--out", str(out), "--by", "label:team", "--from", "2025-01-03")
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "2025-01-03" in err
    code, _, err = _run("history", "--out", str(out))
    assert code == 2 and "--by" in err


def test_an_unpriced_group_is_null_never_zero(tmp_path):
    fleet = generate_fleet(40, seed=5)
    records = copy.deepcopy(fleet.deployments)
    for record in records:
        spec = fm.resource_spec(record)
        spec["labels"] = {"team": "ghost"} if records.index(record) < 3 else spec.get("labels")
        if records.index(record) < 3:
            for key in ("cpu", "memory_mb", "max_scale", "min_scale"):
                spec.pop(key, None)
    days = {"2025-03-01": records}
    out = tmp_path / "data"
    _export(days, dict(fleet.deployment_types), out)
    history = cost_history(out, "label:team")
    assert_history_is(history, days)
    ghost = history[history["group"] == "ghost"]
    assert len(ghost) == 1
    assert int(ghost["deployments_unpriced"].iloc[0]) >= 1


def test_reports_export_the_names():
    assert reports.cost_history is cost_history
