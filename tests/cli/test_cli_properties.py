"""Every command over any fleet the spec admits, not only the sandbox's (issue 35, item 1).

Fleets are drawn from openapi.yaml (tests/spec_records.py: optional objects absent or null,
numbers over the whole float range, text with terminal control, bidi and quotes, free-form
objects of any shape, the published service's spellings, fields the spec does not name) and
run through the real CLI in-process: export (`--from-json`) -> report (`--focus` to a Parquet
or a CSV bill, `--by label:<a drawn key>`, `--by namespace`) -> metrics (text, OpenMetrics,
JSON) -> check -> explain -> catalog -> sql, then a perturbed copy exported on a later day ->
diff (tests/every_command.py). Each run
and each file is held to tests/fleet_invariants.py (no traceback, documented exit codes, no
raw control character, no negative, NaN or infinite figure, every record once or rejected),
and adding a deployment never lowers a fleet total.

Each example runs some twenty commands, so these run a sixth of the profile's examples
(`make test`: 5 each; `make test-thorough`: 83 each).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from every_command import (
    DAY,
    LATER,
    a_fraction_of_the_profile,
    check_diff,
    check_history_by,
    dims,
    every_command,
    export,
    scratch_dir,
)
from fleet_invariants import strict_json
from hypothesis import given
from hypothesis import strategies as st
from spec_records import HOSTILE, fleets


def later_day(fleet: list[dict[str, Any]], data: st.DataObject) -> list[dict[str, Any]]:
    """The fleet a day later: some gone, some new, some moved to another version or without
    their tenant_id or image_version (a field left out on one day only)."""
    records = [copy.deepcopy(r) for r in fleet if data.draw(st.integers(0, 4), label="kept")]
    for record in records:
        change = data.draw(st.sampled_from(["none", "version", "no version", "no tenant"]))
        if change == "version":
            record["image_version"] = data.draw(HOSTILE.text | st.just("9.0.0"))
        elif change == "no version":
            record.pop("image_version", None)
        elif change == "no tenant":
            record.pop("tenant_id", None)
    taken = {r["id"] for r in fleet}
    new = data.draw(fleets(min_size=0, max_size=2), label="new")
    return records + [r for r in new if r["id"] not in taken]


@a_fraction_of_the_profile(6)
@given(fleet=fleets(), ascii_only=st.booleans(), data=st.data())
def test_every_command_holds_on_any_fleet_the_spec_admits(fleet, ascii_only, data):
    with scratch_dir() as folder:
        out = folder / "data"
        exported = export(fleet, out, DAY, ascii_only)
        every_command(out, exported, data)
        later = later_day(fleet, data)
        second = export(later, out, LATER, ascii_only)
        check_diff(out, exported, second)
        check_history_by(out)


# --- adding a deployment never lowers a total -----------------------------------------------

#: Figures of a report that may fall when a deployment is added: shares, and the time taken.
NOT_TOTALS = ("share", "cost_share", "seconds")


def report_totals(records: list[Any], out: Path) -> tuple[dict[str, Any], dict[Any, Any]]:
    """`dims report --json`'s fleet totals and counts, and the capacity summary's rows by
    (component, deployment_type), of `records` exported alone."""
    export(records, out, DAY)
    summary = strict_json(dims("report", "--out", out, "--json").out)
    totals = {f"usd_month.{k}": v for k, v in summary["usd_month"].items()}
    totals |= {k: v for k, v in summary.items() if k.startswith("deployments")}
    capacity = {}
    for row in _capacity_rows(Path(summary["folder"])):
        key = (row.pop("component"), row.pop("deployment_type"))
        capacity[key] = {k: v for k, v in row.items() if k not in NOT_TOTALS}
    return totals, capacity


def _capacity_rows(folder: Path) -> list[dict[str, Any]]:
    return pq.read_table(folder / "capacity_summary.parquet").to_pylist()


def not_lower(before: Any, after: Any) -> bool:
    """A total with one more deployment is at least the one without (null is unknown or
    unbounded: above any figure, and it stays so); float sums in another order may differ
    by rounding only."""
    if before is None:
        return after is None
    if after is None:
        return True
    return after >= before - 1e-9 * abs(before) - 1e-9


@a_fraction_of_the_profile(6)
@given(more=fleets(min_size=1, max_size=5), data=st.data())
def test_adding_a_deployment_never_lowers_a_fleet_total(more, data):
    """F and F + {d}, d anywhere in the listing: every total of `dims report --json` and
    every row of the capacity summary with d is at least the one without it."""
    position = data.draw(st.integers(0, len(more) - 1), label="the deployment added")
    fleet = more[:position] + more[position + 1 :]
    with scratch_dir() as folder:
        totals, capacity = report_totals(fleet, folder / "without" / "data")
        totals_more, capacity_more = report_totals(more, folder / "with" / "data")
    for name, value in totals.items():
        assert not_lower(value, totals_more[name]), (name, value, totals_more[name])
    for key, row in capacity.items():
        assert key in capacity_more, key
        for name, value in row.items():
            after = capacity_more[key][name]
            assert not_lower(value, after), (key, name, value, after)
