"""Names that collide: report tables whose names clean to one, and views DuckDB takes for one.

`--by label:a.b` and `--by 'label:a b'` both clean to `cost_by_label_a_b`; `label:Team` and
`label:team` differ only by case, which DuckDB's names (and a macOS disk) ignore. Each
allocation keeps its own table, its own rows, and a warning says which one was renamed;
`dims sql` and `dims catalog` make one view per name whatever files lie in `reports/`, and a
file there never hides a dataset table.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import duckdb
import fleet_math as fm
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_in_process import run

from dims import NameCollisionWarning
from dims import _reports as reports
from dims import _storage as storage

DATE = "2025-06-02"
#: Label keys that clean to one table name (the first two) or differ only by case.
KEYS = {"a.b": "dot", "a b": "space", "Team": "upper", "team": "lower"}


@pytest.fixture(scope="module")
def out(tmp_path_factory, fleet) -> Path:
    """The fleet, each deployment labelled under every key of KEYS with that key's word."""
    folder = tmp_path_factory.mktemp("collide")
    records = copy.deepcopy(fleet.deployments[:40])
    for n, record in enumerate(records):
        fm.resource_spec(record)["labels"] = {key: f"{word}{n % 3}" for key, word in KEYS.items()}
    types = {r["id"]: fleet.deployment_types[r["id"]] for r in records}
    fm.export_fleet(records, types, folder, DATE)
    return folder


def _report_dir(out: Path) -> Path:
    return out / "reports" / f"snapshot_date={DATE}"


def _values(path: Path) -> set[str]:
    table = pq.read_table(path)
    return set(table.column(0).to_pylist())


def _fresh(out: Path, tmp_path: Path) -> Path:
    copied = tmp_path / "data"
    shutil.copytree(out, copied)
    shutil.rmtree(copied / "reports", ignore_errors=True)
    return copied


@pytest.mark.parametrize(("first", "second"), [("a.b", "a b"), ("Team", "team")])
def test_two_allocations_that_clean_to_one_name_keep_their_own_tables(
    out, tmp_path, capsys, first, second
) -> None:
    data = _fresh(out, tmp_path)
    code, printed, err = run(
        capsys, "report", "--out", str(data), "--by", f"label:{first}", "--by", f"label:{second}",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith("dims: warning: ")]
    assert len(warned) == 1 and f"label:{second}" in warned[0] and f"label:{first}" in warned[0]
    files = sorted(p.name for p in _report_dir(data).glob("cost_by_label_*.parquet"))
    assert len(files) == 2 and len({f.casefold() for f in files}) == 2
    by_values = {frozenset(_values(_report_dir(data) / f)) for f in files}
    want = {frozenset(f"{KEYS[k]}{n}" for n in range(3)) for k in (first, second)}
    assert by_values == want  # each its own rows, never one holding the other's
    plain = {"a.b": "cost_by_label_a_b", "Team": "cost_by_label_Team"}[first]
    renamed = next(f for f in files if f != f"{plain}.parquet")  # the second's, made distinct
    assert f"{plain}.parquet" in files and renamed in warned[0]
    assert re.fullmatch(rf"{plain}_[0-9a-f]{{8}}\.parquet", renamed, re.IGNORECASE)
    by = json.loads(printed)["by"]
    assert {row["value"] for row in by[f"label:{second}"]} == {
        f"{KEYS[second]}{n}" for n in range(3)
    }
    # the catalog and dims sql hold both, each under its own name
    code, _, err = run(capsys, "catalog", str(tmp_path / "c.duckdb"), "--out", str(data))
    assert code == 0, err
    with duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True) as connection:
        for name in files:
            view = name[: -len(".parquet")]
            rows = connection.execute(f'select * from "{view}"').to_arrow_table()
            assert set(rows.column(0).to_pylist()) == _values(_report_dir(data) / name)
    for name in files:
        view = name[: -len(".parquet")]
        code, printed, err = run(
            capsys, "sql", "--out", str(data), "--json", f'select * from "{view}"'
        )
        assert code == 0, err
        assert {next(iter(r.values())) for r in json.loads(printed)} == _values(
            _report_dir(data) / name
        )


def test_the_same_allocation_twice_is_one_table_and_no_warning(out, tmp_path, capsys) -> None:
    data = _fresh(out, tmp_path)
    code, _, err = run(
        capsys, "report", "--out", str(data), "--by", "namespace", "--by", "k8s_namespace"
    )
    assert code == 0 and err == "", err
    assert [p.name for p in _report_dir(data).glob("cost_by_k8s*")] == [
        "cost_by_k8s_namespace.parquet"
    ]


def test_the_python_api_warns_of_the_rename(out, tmp_path) -> None:
    data = _fresh(out, tmp_path)
    with pytest.warns(NameCollisionWarning, match=r"label:a b.*cost_by_label_a_b"):
        reports.write_report(data, by=["label:a.b", "label:a b"])


def _plant(data: Path, name: str, rows: int) -> None:
    folder = _report_dir(data)
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"planted": list(range(rows))}), folder / f"{name}.parquet")


@pytest.mark.parametrize("name", ["Deployments", "DEPLOYMENTS_HISTORY", "deployments_history"])
def test_a_report_file_never_hides_a_dataset_table(out, tmp_path, capsys, name) -> None:
    data = _fresh(out, tmp_path)
    _plant(data, name, 7)
    code, printed, err = run(
        capsys, "sql", "--out", str(data), "--json",
        "select (select count(*) from deployments) as latest, "
        "(select count(*) from deployments_history) as every",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(printed) == [{"latest": 40, "every": 40}]
    assert len(err.splitlines()) == 1 and f"{name}.parquet" in err and "warning" in err
    code, _, err = run(capsys, "catalog", str(tmp_path / "c.duckdb"), "--out", str(data))
    assert code == 0, err
    assert f"{name}.parquet" in err
    with duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True) as connection:
        assert connection.execute("select count(*) from deployments").fetchone() == (40,)


def test_report_files_that_differ_by_case_are_one_view_each(out, tmp_path, capsys) -> None:
    """A day's folder holds `cost_by_label_Team` and `cost_by_label_team` (a report run
    removes the allocations it did not ask for, so here the first is put back, as an older
    dims or a copy would leave it): DuckDB can hold one of them under that name; the other is
    left out of the views, with a warning."""
    data = _fresh(out, tmp_path)
    assert run(capsys, "report", "--out", str(data), "--by", "label:Team")[0] == 0
    first = _report_dir(data) / "cost_by_label_Team.parquet"
    kept = first.read_bytes()
    assert run(capsys, "report", "--out", str(data), "--by", "label:team")[0] == 0
    assert not first.exists()  # removed as stale
    first.write_bytes(kept)
    names = sorted(p.stem for p in _report_dir(data).glob("cost_by_label_*.parquet"))
    assert names == ["cost_by_label_Team", "cost_by_label_team"]
    with pytest.warns(NameCollisionWarning, match="cost_by_label_team.parquet"):
        views = storage.write_catalog(data, tmp_path / "c.duckdb").views
    assert "cost_by_label_Team" in views and "cost_by_label_team" not in views
    code, printed, err = run(capsys, "sql", "--out", str(data), "--json", "show tables")
    assert code == 0, err
    shown = [row["name"] for row in json.loads(printed)]
    assert len(shown) == len({n.lower() for n in shown}) and "cost_by_label_Team" in shown
    assert "cost_by_label_team.parquet" in err
