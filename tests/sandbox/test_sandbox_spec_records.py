"""`dims sandbox --spec-records`: records drawn the spec's way, served over HTTP (issue 35).

The realistic fleet never sends what a mock of the published OpenAPI document does: the
spec-records mode (`run_sandbox(spec_records=True)`, seeded) serves anything openapi.yaml
admits, and an export of it over loopback HTTP holds every invariant the whole-CLI property
tests hold (tests/fleet_invariants.py), command after command.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from cli_in_process import run
from every_command import (
    DAY,
    a_fraction_of_the_profile,
    every_command,
    export_from_service,
    scratch_dir,
)
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from spec_records import deployment_schema, resolve, resource_spec_path

from dims import _spec as spec
from dims.sandbox import fleet_dump_bytes, generate_fleet, run_sandbox


def _open(node: Any) -> Any:
    """A resolved schema that takes fields it does not name, at every level (a newer
    service's fields, the published spellings), and arrays and objects of any size (the
    strategy's bounds dropped): what the spec admits."""
    if isinstance(node, list):
        return [_open(item) for item in node]
    if not isinstance(node, dict):
        return node
    bounds = ("additionalProperties", "maxItems", "maxProperties")
    return {k: _open(v) for k, v in node.items() if k not in bounds}


def schema_of(name: str) -> dict[str, Any]:
    """openapi.yaml's schema `name`, its `$ref`s inlined."""
    schemas = spec.document()["components"]["schemas"]
    return _open(resolve(schemas[name], schemas))


def _walk(value: Any, path: tuple[str, ...] = ()) -> Any:
    """(path, value) of every value in a JSON document, keys included as text values."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, "<key>"), key
            yield from _walk(item, (*path, str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, path)


def test_the_same_seed_serves_the_same_records():
    first = generate_fleet(80, seed=4, spec_records=True)
    again = generate_fleet(80, seed=4, spec_records=True)
    other = generate_fleet(80, seed=5, spec_records=True)
    assert fleet_dump_bytes(first) == fleet_dump_bytes(again)
    assert fleet_dump_bytes(first) != fleet_dump_bytes(other)
    assert first.providers == again.providers and first.repositories == again.repositories


def _shapes(record: dict[str, Any]) -> set[str]:
    """The optional objects a record leaves out or null, and its figures no cluster runs."""
    found: set[str] = set() if "tenant_id" in record else {"tenant_id absent"}
    config = record.get("source_config")
    if isinstance(config, dict) and "listener_config" not in config:
        found.add("listener_config absent")
    elif isinstance(config, dict) and config["listener_config"] is None:
        found.add("listener_config null")
    part: Any = record
    for step in resource_spec_path():
        part = part.get(step) if isinstance(part, dict) else None
    figures = [
        v for k, v in (part or {}).items()
        if k in spec.resource_numeric_fields() and type(v) in (int, float)
    ]  # fmt: skip
    found |= {"a negative figure"} if any(v < 0 for v in figures) else set()
    return found | ({"a figure of 1e300 or more"} if any(v >= 1e300 for v in figures) else set())


def _values(record: dict[str, Any]) -> set[str]:
    """The integers past 64 bits, published spellings and hostile text anywhere in it."""
    found: set[str] = set()
    published = {o for names in spec.original_names().values() for o in names}
    for path, value in _walk(record):
        if type(value) is int and not -(2**63) <= value < 2**64:
            found.add("an integer past 64 bits")
        if path and path[-1] in published:
            found.add("a published spelling")
        if isinstance(value, str):
            found |= {name for name, piece in PIECES.items() if piece in value}
    return found


PIECES = {"ESC": "\x1b", "OSC 52": "\x1b]52;", "CR": "\r", "BEL": "\x07", "newline": "\n",
          "bidi override": "\u202e", "quote": '"', "apostrophe": "'"}  # fmt: skip


def test_spec_records_are_what_the_spec_admits_and_what_no_cluster_runs():
    """Every record valid by openapi.yaml (fields it does not name allowed), and together
    they hold every kind of value the issue names."""
    fleet = generate_fleet(300, seed=1, spec_records=True)
    validator = Draft202012Validator(_open(deployment_schema()))
    for record in fleet.deployments:
        errors = [e.message for e in validator.iter_errors(record)]
        assert not errors, (errors, record)
    features = set().union(*(_shapes(r) | _values(r) for r in fleet.deployments))
    assert features >= {
        "tenant_id absent", "listener_config null", "listener_config absent",
        "a negative figure", "a figure of 1e300 or more", "an integer past 64 bits",
        "a published spelling", *PIECES,
    }  # fmt: skip
    assert len({r["id"] for r in fleet.deployments}) == len(fleet.deployments)
    for schema, records in (
        ("OAuthProvider", fleet.providers),
        ("Repository", [r for repos in fleet.repositories.values() for r in repos]),
    ):
        validator = Draft202012Validator(_open(schema_of(schema)))
        assert records and all(validator.is_valid(r) for r in records), schema


def test_the_sandbox_serves_spec_records_as_drawn_integers_past_64_bits_included():
    """What the service sends is the fleet, read back equal (orjson cannot write an integer
    past 64 bits: the standard library writes those bodies)."""
    fleet = generate_fleet(60, seed=2, spec_records=True)
    fleet.deployments[0]["x-beyond"] = 2**70  # one for sure, wherever the draws put theirs
    with run_sandbox(fleet=fleet) as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        served, offset = [], 0
        while True:
            query = {"limit": 100, "offset": offset}
            page = json.loads(http.get("/v2/deployments", params=query).text)
            if not page["resources"]:
                break
            served += page["resources"]
            offset = page["offset"]
        providers = json.loads(http.get("/v2/auth/providers").text)
    assert served == fleet.deployments
    assert providers == fleet.providers


def test_spec_records_beside_a_realistic_shape_is_one_line_and_exit_1(capsys):
    code, out, err = run(capsys, "sandbox", "--spec-records", "--real-shaped")
    assert code == 1 and not out
    assert err.count("\n") == 1 and "--spec-records" in err and "--real-shaped" in err


@a_fraction_of_the_profile(10)
@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_an_export_over_http_of_spec_records_holds_every_invariant(seed, data):
    """`dims export` over loopback HTTP from the spec-records sandbox, then every command:
    no traceback, documented exit codes, no raw control character, no negative, NaN or
    infinite figure, every record once or rejected with its reason."""
    with run_sandbox(deployments=8, seed=seed, spec_records=True) as sandbox, scratch_dir() as d:
        out = d / "data"
        exported = export_from_service(sandbox.fleet, sandbox.base_url, out, DAY)
        every_command(out, exported, data)
