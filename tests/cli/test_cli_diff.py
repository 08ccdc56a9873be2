"""`dims demo --roll-out` makes a real diff; `dims diff` and `dims report` speak to scripts."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from analysis.cli import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "data"
    code = main(
        ["demo", "--out", str(out), "--deployments", "60", "--seed", "3", "--roll-out", "9.0.0",
         "--share", "0.5"]
    )  # fmt: skip
    assert code == 0
    return out


def test_diff_lists_every_changed_deployment_as_json_and_parquet(demo, tmp_path, capsys):
    capsys.readouterr()
    changes_file = tmp_path / "changes.parquet"
    assert main(["diff", "--out", str(demo), "--json", "--changes-out", str(changes_file)]) == 0
    printed = json.loads(capsys.readouterr().out)
    changes = printed["changes"]
    # half the fleet moved to 9.0.0: each is listed once, with its versions before and after
    assert (
        len(changes) == printed["counts"]["upgrades"] + printed["counts"]["other_version_changes"]
    )
    assert 20 <= len(changes) <= 30
    assert {c["to_version"] for c in changes} == {"9.0.0"}
    assert len({c["deployment_id"] for c in changes}) == len(changes)
    table = pq.read_table(changes_file).to_pylist()
    assert sorted(r["deployment_id"] for r in table) == sorted(c["deployment_id"] for c in changes)
    assert not list(tmp_path.glob(".*tmp*"))  # written whole, nothing left beside it


def test_diff_on_a_terminal_names_the_deployments(demo, capsys):
    capsys.readouterr()
    assert main(["diff", "--out", str(demo)]) == 0
    out = capsys.readouterr().out
    assert "changed deployments (" in out and "→ 9.0.0" in out


def test_report_json_says_where_everything_went(demo, capsys):
    capsys.readouterr()
    assert main(["report", "--out", str(demo), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["report"].endswith("report.html")
    assert {"report.html", "capacity_summary.parquet", "image_version_summary.parquet"} <= set(
        written["files"]
    )


def test_diff_prints_counts_as_whole_numbers(demo, capsys):
    capsys.readouterr()
    assert main(["diff", "--out", str(demo)]) == 0
    line = next(
        x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("deployments ")
    )
    assert line.split()[1:4] == ["60", "→", "60"]  # not 60.00
