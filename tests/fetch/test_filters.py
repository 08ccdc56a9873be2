"""An export's options and filters, checked once where they come in (issue 28): the same
filters in the query, the evidence, the manifest and the files; the output checked before
anything is asked of the service; one `take_snapshot` for one workspace or many."""

from __future__ import annotations

import asyncio
import datetime as dt
import inspect
import json

import pyarrow.parquet as pq
import pytest

import dims
from dims import _spec as spec
from dims._connection import RetryPolicy, connect
from dims._errors import ConfigurationError, ExportError
from dims._options import ExportOptions, Filters
from dims._snapshot import take_snapshot
from dims.sandbox import run_sandbox
from dims_client.models import DeploymentType

DAY = dt.date(2026, 3, 4)
DEAD = "http://127.0.0.1:9"  # nothing listens there


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


# -- the SDK's filters: typed, and checked as the CLI checks them (issue 37 item 5) -------------


def test_the_sdk_filters_are_the_specs_with_their_kinds():
    """`dims.DeploymentFilters` (what `deployments.list(**filters)` takes) names the spec's
    filters in its order, each typed as the spec types it: a boolean as bool, the enum as a
    Literal of its values, text as text."""
    import typing

    from dims._options import FilterText, filter_choices, filter_names

    hints = typing.get_type_hints(dims.DeploymentFilters)
    assert tuple(hints) == filter_names()
    kinds = {name: spec.kind_of(param["schema"]) for name, param in _spec_filters().items()}
    for name, hint in hints.items():
        kind, ref = kinds[name]
        if kind == "boolean":
            assert hint == bool | None, name
        elif ref is not None:
            (literal, none) = typing.get_args(hint)
            assert none is type(None) and typing.get_args(literal) == filter_choices(name)
        else:
            assert hint == FilterText | None, name
    assert filter_choices("deployment_type") == spec.deployment_types()
    assert filter_choices("status") is None


def _spec_filters():
    params = spec.document()["paths"]["/v2/deployments"]["get"]["parameters"]
    return {p["name"]: p for p in params if p["name"] not in ("limit", "offset")}


#: What `dims export --deployment-type prd` says (argparse's words), and the SDK too.
REFUSED = "invalid choice: 'prd' (choose from 'dev_free', 'dev', 'prod')"


def test_a_deployment_type_the_spec_lacks_is_refused_at_once_as_the_cli_does(capsys, tmp_path):
    """Every way in refuses `deployment_type="prd"` before a request: a client of an address
    nothing listens on would otherwise fail with a connection error, not this one."""
    from cli_in_process import run

    code, _, err = run(capsys, "export", "--base-url", DEAD, "--deployment-type", "prd")
    assert code == 2 and REFUSED in err
    with dims.Client(base_url=DEAD, max_retries=0) as client:
        calls = [
            lambda: client.deployments.list(deployment_type="prd"),
            lambda: client.deployments.list(deployment_type=["prod", "prd"]),
            lambda: client.deployments.with_raw_response.list(deployment_type="prd"),
            lambda: client.take_snapshot(tmp_path / "out", deployment_type="prd"),
            lambda: dims.take_snapshot(
                client, tmp_path / "out", filters={"deployment_type": "prd"}
            ),
        ]
        for call in calls:
            with pytest.raises(ConfigurationError) as info:
                call()
            assert str(info.value) == f"deployment filter deployment_type: {REFUSED}"

    async def in_async() -> list[str]:
        said = []
        async with dims.AsyncClient(base_url=DEAD, max_retries=0) as client:
            for call in (
                lambda: client.deployments.list(deployment_type="prd"),
                lambda: client.deployments.with_raw_response.list(deployment_type="prd"),
                lambda: client.take_snapshot(tmp_path / "out", deployment_type="prd"),
            ):
                with pytest.raises(ConfigurationError) as info:
                    await _maybe_awaited(call())
                said.append(str(info.value))
        return said

    said = asyncio.run(in_async())
    assert said == [f"deployment filter deployment_type: {REFUSED}"] * 3
    assert not (tmp_path / "out").exists()


async def _maybe_awaited(value):
    return await value if inspect.isawaitable(value) else value


def test_the_sdk_filters_select_what_the_cli_filters_select(capsys, tmp_path):
    """`deployments.list(deployment_type="prod", name_contains=…)` lists what
    `dims export --deployment-type prod --name-contains …` writes."""
    from cli_in_process import run

    with run_sandbox(deployments=80, seed=3) as sb, dims.Client(base_url=sb.base_url) as client:
        listed = {str(d.id) for d in client.deployments.list(deployment_type="prod")}
        argv = ["--base-url", sb.base_url, "--out", str(tmp_path), "--deployment-type", "prod"]
        code, _, err = run(capsys, "export", *argv)
    assert code == 0, err
    written = set(pq.read_table(next(tmp_path.rglob("deployments/*/*.parquet")))["id"].to_pylist())
    assert listed == written and 0 < len(listed) < 80
