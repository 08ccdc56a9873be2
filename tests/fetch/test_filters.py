"""An export's options and filters, checked once where they come in (issue 28): the same
filters in the query, the evidence, the manifest and the files; the output checked before
anything is asked of the service; one `take_snapshot` for one workspace or many."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.parquet as pq
import pytest

from dims._connection import RetryPolicy, connect
from dims._errors import ConfigurationError, ExportError
from dims._options import ExportOptions, Filters
from dims._snapshot import take_snapshot
from dims.sandbox import run_sandbox
from dims_client.models import DeploymentType

DAY = dt.date(2026, 3, 4)


def test_filters_are_normalised_once_in_the_order_given():
    given = {
        "status": None,  # no filter
        "deployment_type": DeploymentType.PROD,
        "name_contains": "web",
        "deployment_ids": ("a", "b"),
        "tag_value_ids": [],  # no filter
        "remote_reconciled": False,
    }
    filters = Filters.of(given)
    assert list(filters.items()) == [
        ("deployment_type", "prod"),
        ("name_contains", "web"),
        ("deployment_ids", ["a", "b"]),
        ("remote_reconciled", False),
    ]
    assert list(filters.sorted()) == [
        "deployment_ids", "deployment_type", "name_contains", "remote_reconciled",
    ]  # fmt: skip
    assert Filters.of(filters) is filters and Filters.of(dict(filters)) == filters
    assert not Filters.of(None) and not Filters.of({"status": None})


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"colour": "red"}, r"unknown deployment filter\(s\) \['colour'\]; the spec names \["),
        ({"remote_reconciled": "true"}, "remote_reconciled must be true or false, got str"),
        ({"status": 7}, r"status must be text \(or a list of texts\), got int '7'"),
        ({"deployment_ids": ["a", 2]}, "deployment_ids must be text"),
    ],
)
def test_a_filter_the_spec_does_not_have_is_one_line(given, says):
    with pytest.raises(ConfigurationError, match=says) as info:
        Filters.of(given)
    assert "\n" not in str(info.value)


def test_options_come_as_an_object_or_as_keywords_and_a_keyword_wins():
    options = ExportOptions(snapshot_date=DAY, strict=True)
    chosen, filters = ExportOptions.given(options, {"snapshot_date": DAY.replace(day=5), "a": 1})
    assert (chosen.snapshot_date, chosen.strict, filters) == (DAY.replace(day=5), True, {"a": 1})
    assert options.snapshot_date == DAY  # frozen: never changed under its holder


def test_one_export_keeps_one_form_of_its_filters_everywhere(tmp_path):
    """The query, every listing's evidence, the manifest and every file's metadata hold the
    same filters: no filter for None or an empty list, an enum as its value (the evidence
    kept them as given before, `null` and `[]` included)."""
    with run_sandbox(deployments=40, seed=3) as sandbox:
        client = connect(sandbox.base_url, retry=RetryPolicy.none())
        result = take_snapshot(
            client, tmp_path, snapshot_date=DAY, deployment_type=DeploymentType.PROD,
            status=None, name_contains="", deployment_ids=[],
        )  # fmt: skip
    given_order = {"deployment_type": "prod", "name_contains": ""}
    manifest = json.loads((result.out_dir / "_manifests" / f"{DAY}.json").read_text())
    assert manifest["filters"] == given_order and list(manifest["filters"]) == sorted(given_order)
    assert manifest["fetch"]["filters"] == given_order
    assert [listing["filters"] for listing in manifest["fetch"]["listings"]] == [given_order]
    assert list(manifest["fetch"]["filters"]) == list(given_order)
    for path in result.paths.values():
        metadata = pq.read_metadata(path / "part-0.parquet").metadata
        assert json.loads(metadata[b"dims.filters"]) == manifest["filters"]


def test_the_output_is_checked_before_anything_is_asked_of_the_service(tmp_path):
    """One check of the output, by the writer's session, before the first request (the
    providers were listed before it)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with run_sandbox(deployments=10, seed=1) as sandbox:
        client = connect(sandbox.base_url, retry=RetryPolicy.none())
        with pytest.raises(ExportError, match=f"cannot write to {blocker}"):
            take_snapshot(client, blocker / "out")
        assert sum(sandbox.stats.requests.values()) == 0


def test_one_take_snapshot_for_one_client_or_many_workspaces(tmp_path):
    with run_sandbox(deployments=30, seed=2, tenants=2) as sandbox:
        a, b = sandbox.fleet.tenant_ids()
        clients = {t: connect(sandbox.base_url, tenant_id=t) for t in (a, b)}
        result = take_snapshot(clients, tmp_path, ExportOptions(snapshot_date=DAY))
    assert sorted(result.manifest.workspaces) == sorted([a, b])
    assert result.rows["deployments"] == 30 and not result.partial
