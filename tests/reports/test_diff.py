"""`diff` and the history reports, over snapshots written by the real export path.

Three snapshots of one fleet: the second upgrades, downgrades, removes, adds and resizes
deployments; expected changes are computed from the raw records, not from the dataset.
"""

from __future__ import annotations

import copy

import fleet_math as fm
import pytest

from dims import _reports as reports
from dims._reports import DatasetError
from dims._reports._history import CHANGE_COLUMNS
from dims.sandbox import generate_fleet

DATES = ("2025-06-01", "2025-06-08", "2025-06-15")


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    fleet = generate_fleet(200, seed=11)
    out = tmp_path_factory.mktemp("history")
    first = copy.deepcopy(fleet.deployments)
    types = dict(fleet.deployment_types)
    fm.export_fleet(first, types, out, DATES[0])

    second = copy.deepcopy(first)
    removed = {r["id"] for r in second[:4]}
    second = second[4:]
    upgraded, downgraded, resized = set(), set(), set()
    for record in second[:30]:
        if record.get("image_version") not in ("0.11.0", None, "latest"):
            record["image_version"] = "0.11.0"
            upgraded.add(record["id"])
    for record in second[30:60]:
        if record.get("image_version") == "0.11.0":
            record["image_version"] = "0.9.10"
            downgraded.add(record["id"])
    for record in second[60:80]:
        rs = fm.resource_spec(record)
        if rs and rs.get("cpu"):
            rs["cpu"] = rs["cpu"] + 2
            resized.add(record["id"])
    added = []
    for _ in range(3):
        record, kind = fleet.new_deployment()
        types[record["id"]] = kind
        added.append(record)
    second += added
    fm.export_fleet(second, types, out, DATES[1])
    fm.export_fleet(second, types, out, DATES[2])  # nothing changes in the third week
    return {
        "out": out,
        "first": first,
        "second": second,
        "types": types,
        "removed": removed,
        "added": {r["id"] for r in added},
        "upgraded": upgraded,
        "downgraded": downgraded,
        "resized": resized,
    }


def test_diff_between_two_dates(history) -> None:
    result = reports.diff(history["out"], DATES[0], DATES[1])
    assert (result.from_date, result.to_date) == DATES[:2]
    assert set(result.added["deployment_id"]) == history["added"]
    assert set(result.removed["deployment_id"]) == history["removed"]
    changes = result.version_changes.set_index("deployment_id")["change"]
    assert set(changes[changes == "upgrade"].index) == history["upgraded"]
    assert set(changes[changes == "downgrade"].index) == history["downgraded"]
    assert history["upgraded"] and history["downgraded"]
    assert set(result.capacity_changes["deployment_id"]) == history["resized"]

    old = {r["id"]: fm.totals(r) for r in history["first"]}
    new = {r["id"]: fm.totals(r) for r in history["second"]}
    moved = result.capacity_changes.set_index("deployment_id")
    for dep_id in history["resized"]:
        want = (
            new[dep_id]["cpu_request_cores_max_scale"] - old[dep_id]["cpu_request_cores_max_scale"]
        )
        assert moved.loc[dep_id, "cpu_request_cores_max_scale_delta"] == pytest.approx(want)

    totals = result.capacity_totals.set_index("measure")
    for measure in ("cpu_request_cores_max_scale", "memory_limit_gib_min_scale", "db_storage_gib"):
        before = fm.fleet_sum(history["first"], measure)
        after = fm.fleet_sum(history["second"], measure)
        assert totals.loc[measure, "from_value"] == pytest.approx(before)
        assert totals.loc[measure, "delta"] == pytest.approx(after - before)
    assert totals.loc["deployments", "delta"] == len(history["added"]) - len(history["removed"])

    text = result.summary()
    assert f"+{len(history['added'])} added" in text
    assert f"-{len(history['removed'])} removed" in text
    assert f"{len(history['upgraded'])} upgraded" in text


def test_diff_defaults_to_the_two_latest(history) -> None:
    result = reports.diff(history["out"])
    assert (result.from_date, result.to_date) == DATES[1:]
    assert result.counts() == {
        "added": 0,
        "removed": 0,
        "upgrades": 0,
        "downgrades": 0,
        "other_version_changes": 0,
        "unknown_version_changes": 0,
        "capacity_changes": 0,
    }
    only_to = reports.diff(history["out"], to_date=DATES[1])
    assert only_to.from_date == DATES[0]


def test_diff_needs_two_snapshots(tmp_path, history) -> None:
    fm.export_fleet(history["first"], history["types"], tmp_path, DATES[0])
    with pytest.raises(DatasetError, match="two snapshots"):
        reports.diff(tmp_path)
    with pytest.raises(DatasetError, match="2024-01-01"):
        reports.diff(history["out"], "2024-01-01")


def test_versions_over_time(history) -> None:
    over = reports.versions_over_time(history["out"])
    assert sorted(over["snapshot_date"].unique()) == list(DATES)
    for date, records in ((DATES[0], history["first"]), (DATES[1], history["second"])):
        rows = over[over["snapshot_date"] == date]
        got = dict(zip(rows["image_version"], rows["deployments"], strict=True))
        want: dict[object, int] = {}
        for record in records:
            want[record.get("image_version")] = want.get(record.get("image_version"), 0) + 1
        assert got == want
        assert rows["share"].sum() == pytest.approx(1.0)


def test_version_changes_and_report_history(history) -> None:
    changes = reports.version_changes(history["out"], DATES[0], DATES[1])
    assert (
        set(changes.loc[changes["change"] == "downgrade", "deployment_id"]) == history["downgraded"]
    )
    path = reports.write_report(history["out"], DATES[1])
    page = path.read_text(encoding="utf-8")
    assert f"Changes since the previous snapshot ({DATES[0]})" in page
    assert "snapshot_date=2025-06-08" in str(path)


def test_changed_deployments_lists_each_deployment_that_moved_once(tmp_path) -> None:
    """The list `dims diff` prints: one row per deployment, what changed and its versions
    before and after; one both upgraded and resized is listed once, as its upgrade."""
    fleet = generate_fleet(40, seed=5)
    first = copy.deepcopy(fleet.deployments)
    types = dict(fleet.deployment_types)
    sized = [r for r in first if fm.resource_spec(r).get("cpu")]
    both, resized, downgraded, gone = sized[:4]
    for record, version in ((both, "1.0.0"), (resized, "1.0.0"), (downgraded, "1.0.0")):
        record["image_version"] = version
    gone["image_version"] = "0.9.0"
    fm.export_fleet(first, types, tmp_path, DATES[0])

    second = [copy.deepcopy(r) for r in first if r is not gone]
    new, kind = fleet.new_deployment()
    new["image_version"] = "2.0.0"
    types[new["id"]] = kind
    changed = {r["id"]: r for r in second}
    changed[both["id"]]["image_version"] = "1.1.0"
    for record in (changed[both["id"]], changed[resized["id"]]):
        fm.resource_spec(record)["cpu"] += 1
    changed[downgraded["id"]]["image_version"] = "0.5.0"
    fm.export_fleet([*second, new], types, tmp_path, DATES[1])
    fm.export_fleet([*second, new], types, tmp_path, DATES[2])

    changes = reports.changed_deployments(reports.diff(tmp_path, DATES[0], DATES[1]))
    assert list(changes.columns) == CHANGE_COLUMNS
    assert all(dtype == "str" for dtype in changes.dtypes)  # text, as in every report frame
    rows = changes.astype(object).where(changes.notna(), None)
    listed = [(r.deployment_id, r.change, r.from_version, r.to_version) for r in rows.itertuples()]
    assert listed == [
        (new["id"], "added", None, "2.0.0"),
        (gone["id"], "removed", "0.9.0", None),
        (downgraded["id"], "downgrade", "1.0.0", "0.5.0"),
        (both["id"], "upgrade", "1.0.0", "1.1.0"),
        (resized["id"], "capacity", None, None),
    ]
    assert list(changes["name"]) == [new["name"], gone["name"], *(
        r["name"] for r in (downgraded, both, resized)
    )]  # fmt: skip

    unchanged = reports.changed_deployments(reports.diff(tmp_path, DATES[1], DATES[2]))
    assert unchanged.empty and list(unchanged.columns) == CHANGE_COLUMNS


def _moves(old: dict[str, dict], new: dict[str, dict]) -> dict[str, int]:
    """What a diff counts, from the raw records: ids on one side, and for ids on both how
    the image_version moved (versions here are plain `x.y.z` or absent)."""
    counts = dict.fromkeys(("upgrades", "downgrades", "other", "unknown"), 0)
    for deployment_id in old.keys() & new.keys():
        a, b = old[deployment_id].get("image_version"), new[deployment_id].get("image_version")
        if a == b:
            continue
        if a is None or b is None:
            counts["unknown"] += 1
        else:
            older = tuple(map(int, a.split("."))) < tuple(map(int, b.split(".")))
            counts["upgrades" if older else "downgrades"] += 1
    return {
        "added": len(new.keys() - old.keys()),
        "removed": len(old.keys() - new.keys()),
        "upgrades": counts["upgrades"],
        "downgrades": counts["downgrades"],
        "other_version_changes": counts["other"],
        "unknown_version_changes": counts["unknown"],
    }


def test_a_day_without_tenant_ids_or_versions_is_compared_by_what_it_says(tmp_path) -> None:
    """Issue 35: the older day's records have no tenant_id and, some, no image_version.
    A deployment in both days is never added, whatever its workspace says; a version
    missing on one side is no unparseable change; a workspace note names only what it
    counts as added (the counts are computed from the raw records, independently)."""
    fleet = generate_fleet(40, seed=17)
    workspace, newcomer = (
        "0a0a0a0a-0000-4000-8000-000000000001",
        "0b0b0b0b-0000-4000-8000-000000000002",
    )
    old = copy.deepcopy(fleet.deployments)
    for n, record in enumerate(old):
        record.pop("tenant_id", None)
        record["image_version"] = None if n % 3 == 0 else "0.3.0"
        if n % 7 == 0:
            record.pop("image_version")
    new = copy.deepcopy(old[5:])  # five removed
    for n, record in enumerate(new):
        record["tenant_id"] = workspace
        record["image_version"] = None if n % 11 == 0 else "0.4.0" if n % 2 else "0.2.0"
    types = dict(fleet.deployment_types)
    added = []
    for _ in range(3):
        record, kind = fleet.new_deployment()
        record["tenant_id"], record["image_version"] = newcomer, "0.4.0"
        types[record["id"]] = kind
        added.append(record)
    fm.export_fleet(old, types, tmp_path, DATES[0])
    fm.export_fleet([*new, *added], types, tmp_path, DATES[1])

    result = reports.diff(tmp_path, DATES[0], DATES[1])
    want = _moves({r["id"]: r for r in old}, {r["id"]: r for r in [*new, *added]})
    counts = result.counts()
    assert {k: v for k, v in counts.items() if k != "capacity_changes"} == want
    assert want["unknown_version_changes"] > 0 and want["upgrades"] > 0 and want["downgrades"] > 0
    assert result.notes == [
        f"workspace(s) only in the to snapshot ({DATES[1]}): {newcomer} (3 deployments); "
        "those deployments count as added"
    ]  # `workspace` is new to the day too, but none of its deployments is added
    back = reports.diff(tmp_path, DATES[1], DATES[0])
    assert back.counts()["removed"] == 3 and back.counts()["added"] == 5
    assert back.notes == [
        f"workspace(s) only in the from snapshot ({DATES[1]}): {newcomer} (3 deployments); "
        "those deployments count as removed"
    ]
    assert "with no version on one side" in result.summary()
    assert "unparseable" not in result.summary()
