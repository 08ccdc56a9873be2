"""The page's first screen (issue 38 item 1): the month's cost as one figure with its basis and
its min-max range said as a range (never an arrow), its change since the previous snapshot,
the top movers and the savings, checked against an independent computation over the raw fleet
of two days (the second one moves money: `sandbox.second_day`). And the "Costs" chart that
compares types draws them on one axis.
"""

from __future__ import annotations

import copy
import html
import re
from pathlib import Path

import fleet_math as fm
import pandas as pd
import pytest

from dims import _reports as reports
from dims._reports import _charts as charts
from dims.sandbox import generate_fleet, second_day

REQUESTS_MAX = "cost_request_max_scale_usd_month"
REQUESTS_MIN = "cost_request_min_scale_usd_month"


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _signed(value: float) -> str:
    return f"{'+' if value >= 0 else '−'}${abs(value):,.0f}"


@pytest.fixture(scope="module")
def two_days(tmp_path_factory) -> tuple[list[dict], list[dict], Path]:
    work = tmp_path_factory.mktemp("first-screen")
    fleet = generate_fleet(200, seed=5)
    fm.export_fleet(fleet.deployments, fleet.deployment_types, work / "data", "2025-06-01")
    before = copy.deepcopy(fleet.deployments)
    changed = second_day(fleet, "9.9.9", 0.2, seed=3)
    assert changed.scaled and changed.resized and changed.added and changed.removed
    fm.export_fleet(fleet.deployments, fleet.deployment_types, work / "data", "2025-06-02")
    return before, copy.deepcopy(fleet.deployments), work / "data"


@pytest.fixture(scope="module")
def page(two_days) -> str:
    return html.unescape(reports.write_report(two_days[2]).read_text(encoding="utf-8"))


def _card(page: str, label_starts: str) -> tuple[str, str]:
    """(value, note) of the overview's card whose label starts with `label_starts`."""
    card = r'<div class="v">([^<]*)</div><div class="k">([^<]*)</div>'
    for value, label, note in re.findall(card + r'(?:<div class="n">([^<]*)</div>)?', page):
        if label.startswith(label_starts):
            return value, note
    raise AssertionError(f"no card {label_starts!r}")


def test_the_months_cost_is_one_figure_with_its_basis_and_range(two_days, page: str) -> None:
    _, after, _ = two_days
    value, note = _card(page, "the month's cost: requests at max scale")
    assert value == _usd(fm.fleet_cost(after, REQUESTS_MAX))
    low, high = fm.fleet_cost(after, REQUESTS_MIN), fm.fleet_cost(after, REQUESTS_MAX)
    assert f"between {_usd(low)} at min scale and {_usd(high)} at max scale" in note
    overview = page[page.index('<section id="overview">') : page.index("</section>")]
    assert "→" not in overview, "a range drawn as an arrow reads as a change over time"


def test_the_change_since_the_previous_snapshot(two_days, page: str) -> None:
    before, after, _ = two_days
    value, _ = _card(page, "change since 2025-06-01, requests at max scale")
    delta = fm.fleet_cost(after, REQUESTS_MAX) - fm.fleet_cost(before, REQUESTS_MAX)
    assert abs(delta) >= 1, "the second day moves money"
    assert value == _signed(delta)


def _per_deployment(records: list[dict]) -> dict[str, tuple[str, float]]:
    out = {}
    for record in records:
        cost = fm.monthly_costs(record)[REQUESTS_MAX]
        out[record["id"]] = (record["name"], cost or 0.0)
    return out


def test_the_top_mover_is_first(two_days, page: str) -> None:
    before, after = (_per_deployment(day) for day in two_days[:2])
    moves = {
        i: (
            after.get(i, before.get(i))[0],
            after.get(i, ("", 0.0))[1] - before.get(i, ("", 0.0))[1],
        )
        for i in {*before, *after}
    }
    biggest = max(abs(delta) for _, delta in moves.values())
    tied = {name: delta for name, delta in moves.values() if abs(abs(delta) - biggest) < 0.01}
    movers = page[page.index('<div class="movers">') :]
    first = re.search(r"<li>(.*?) \(", movers)
    assert first, "no movers listed"
    name = first.group(1)
    assert name in tied, (name, tied)
    assert _signed(tied[name]) in movers[: movers.index("</li>")]


def test_savings_are_in_the_overview(page: str) -> None:
    overview = page[page.index('<section id="overview">') : page.index("</section>")]
    assert "saved a month if every right-sizing suggestion is taken" in overview


def test_one_snapshot_says_there_is_no_change(tmp_path: Path) -> None:
    fleet = generate_fleet(40, seed=2)
    fm.export_fleet(fleet.deployments, fleet.deployment_types, tmp_path / "data", "2025-06-01")
    page = html.unescape(reports.write_report(tmp_path / "data").read_text(encoding="utf-8"))
    value, note = _card(page, "change since the last snapshot")
    assert (value, note) == ("—", "no earlier snapshot in this folder")
    assert '<div class="movers">' not in page


def _bar_widths(svg: str) -> list[float]:
    return [float(w) for w in re.findall(r'<rect x="[^"]*" y="[^"]*" width="([^"]*)"', svg)]


def test_cost_by_type_panels_share_one_axis() -> None:
    """Issue 38: dev's $14.3k bar was drawn longer than prod's $102k bar."""
    columns = [
        f"cost_{b}_{s}_scale_usd_month" for b in ("request", "limit") for s in ("min", "max")
    ]
    frame = pd.DataFrame(
        [
            {"deployment_type": "prod", **dict.fromkeys(columns, 102_000.0)},
            {"deployment_type": "dev", **dict.fromkeys(columns, 14_300.0)},
        ]
    )
    svg = charts.cost_by_type_chart(frame)
    widths = _bar_widths(svg)
    assert len(widths) == 8
    prod, dev = widths[:4], widths[4:]
    for big, small in zip(prod, dev, strict=True):
        assert small < big
        assert small / big == pytest.approx(14_300 / 102_000, rel=0.02)


def test_the_costs_caption_no_longer_admits_separate_axes(page: str) -> None:
    assert "own axis" not in page[page.index('<section id="costs">') :].split("</section>")[0]
