"""`diff` reads only the deployment columns it compares (`DIFF_COLUMNS`, issue 39 item 5),
and says the same as a comparison of the two days' whole tables.

The fleet is awkward on purpose: hostile names, records without their optional objects,
deployments added, removed, upgraded and resized, figures no cluster runs, and an older day
whose records lack some columns altogether. The reference is `compare` over snapshots loaded
with every column, the path `diff` took before it projected.
"""

from __future__ import annotations

import copy
from datetime import date

import fleet_math as fm
import pandas as pd
import pyarrow.parquet as pq
import pytest

from dims import _reports as reports
from dims._reports._frames import load_snapshot
from dims._reports._history import DIFF_COLUMNS, changed_deployments, compare
from dims._storage import paths
from dims.sandbox import generate_fleet

DATES = ("2025-07-01", "2025-07-08")
#: Columns the older day's file lacks.
LACKING = ["tenant_id", "k8s_namespace", "unreadable_values_json"]
HOSTILE = ["\x1b[31mred\x1b[0m", "a\nb", "‮evil", "tab\there", "<script>", "  "]


@pytest.fixture(scope="module")
def two_days(tmp_path_factory):
    fleet = generate_fleet(120, seed=23)
    out = tmp_path_factory.mktemp("two_days")
    old = copy.deepcopy(fleet.deployments)
    for n, record in enumerate(old):
        if n % 9 == 0:
            record.pop("source_config", None)  # no optional objects
        if n % 13 == 0:
            record["name"] = HOSTILE[n % len(HOSTILE)]
    new = copy.deepcopy(old[6:])  # six removed
    for n, record in enumerate(new):
        record["tenant_id"] = "0c0c0c0c-0000-4000-8000-000000000003"
        if n % 4 == 0:
            record["image_version"] = "0.11.0" if n % 8 else "0.1.0"
        rs = fm.resource_spec(record)
        if n % 5 == 0 and rs.get("cpu"):
            rs["cpu"] = rs["cpu"] + 1
        if n % 17 == 0 and rs:
            rs["memory_mb"] = -5  # a figure no cluster runs
    types = dict(fleet.deployment_types)
    added = []
    for n in range(4):
        record, kind = fleet.new_deployment()
        record["name"] = HOSTILE[n]
        types[record["id"]] = kind
        added.append(record)
    fm.export_fleet(old, types, out, DATES[0])
    fm.export_fleet([*new, *added], types, out, DATES[1])
    for part in paths.partition_dir(out, "deployments", date.fromisoformat(DATES[0])).iterdir():
        # as a day written before these columns were: the file holds none of them
        pq.write_table(pq.read_table(part).drop_columns(LACKING), part)
    return out


def _frames(result: reports.DiffResult) -> dict[str, pd.DataFrame]:
    return {
        "added": result.added,
        "removed": result.removed,
        "version_changes": result.version_changes,
        "capacity_changes": result.capacity_changes,
        "capacity_totals": result.capacity_totals,
        "cost_changes": result.cost_changes,
        "cost_totals": result.cost_totals,
        "cost_causes": result.cost_causes(),
        "changed": changed_deployments(result),
    }


@pytest.mark.parametrize("dates", [DATES, DATES[::-1]])
def test_diff_of_the_columns_it_needs_equals_the_whole_tables(two_days, dates) -> None:
    got = reports.diff(two_days, *dates)
    whole = compare(load_snapshot(two_days, dates[0]), load_snapshot(two_days, dates[1]))
    counts = got.counts()
    assert counts["added"] and counts["removed"] and counts["capacity_changes"]
    assert counts["upgrades"] + counts["downgrades"] > 0
    assert got.summary() == whole.summary()
    assert got.notes == whole.notes
    for name, frame in _frames(whole).items():
        pd.testing.assert_frame_equal(_frames(got)[name], frame, obj=name)


def test_diff_reads_fewer_columns_than_the_table_has(two_days) -> None:
    whole = load_snapshot(two_days, DATES[1]).deployments
    read = load_snapshot(two_days, DATES[1], deployment_columns=DIFF_COLUMNS).deployments
    # the day's date is added as it is to every frame read
    assert set(read.columns) - {"snapshot_date"} == set(DIFF_COLUMNS) & set(whole.columns)
    assert len(read.columns) < len(whole.columns)
    folder = paths.partition_dir(two_days, "deployments", date.fromisoformat(DATES[0]))
    for part in folder.iterdir():  # the older day's files lack them: compared all the same
        assert not set(LACKING) & set(pq.read_schema(part).names)
