"""The embedded sandbox, tested over real HTTP on loopback (httpx, no mocks).

The sandbox is the default target of the demo, the tests and the notebooks, so it must be
deterministic, match openapi.yaml exactly, filter and page like the service, look like a
real fleet, and inject each fault exactly as documented.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from repo import ROOT

from dims._spec import document
from dims.sandbox import (
    Faults,
    Fleet,
    SandboxHandle,
    fleet_dump_bytes,
    generate_fleet,
    run_sandbox,
)

REPO = ROOT
DEPLOYMENTS = "/v2/deployments"
PROVIDERS = "/v2/auth/providers"
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


# `sandbox` (tests/conftest.py) serves the standard fleet: generate_fleet's defaults, 500
# records of seed 0, which the figures below (500, offset 490, record 400) are about.


@pytest.fixture(scope="module")
def http(sandbox: SandboxHandle) -> Iterator[httpx.Client]:
    """Plain HTTP to the standard sandbox: the wire as the spec describes it, no dims client."""
    with httpx.Client(base_url=sandbox.base_url, timeout=10) as c:
        yield c


@pytest.fixture(scope="module")
def fleet(sandbox: SandboxHandle) -> Fleet:
    return sandbox.fleet


def fetch_all(http: httpx.Client, limit: int = 100, **params: Any) -> list[dict[str, Any]]:
    """Page through the listing the way the spec says: follow `offset`, stop at a short page."""
    out: list[dict[str, Any]] = []
    offset = 0
    while True:
        r = http.get(DEPLOYMENTS, params={**params, "limit": limit, "offset": offset})
        assert r.status_code == 200, r.text
        body = r.json()
        page = body["resources"]
        assert body["offset"] == offset + len(page)
        out.extend(page)
        if len(page) < limit:
            return out
        offset = body["offset"]


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in records]


def spec_of(record: dict[str, Any]) -> dict[str, Any] | None:
    return (record.get("source_config") or {}).get("resource_spec")


# -- the generator -------------------------------------------------------------------------


def test_same_seed_gives_an_identical_fleet() -> None:
    a, b = generate_fleet(300, seed=11), generate_fleet(300, seed=11)
    assert fleet_dump_bytes(a) == fleet_dump_bytes(b)
    assert a.providers == b.providers
    assert a.repositories == b.repositories
    assert a.deployment_types == b.deployment_types
    assert a.remote_reconciled == b.remote_reconciled
    assert a.tag_value_ids == b.tag_value_ids


def test_different_seed_gives_a_different_fleet() -> None:
    a, b = generate_fleet(300, seed=1), generate_fleet(300, seed=2)
    assert fleet_dump_bytes(a) != fleet_dump_bytes(b)
    assert set(ids(a.deployments)).isdisjoint(ids(b.deployments))
    assert a.deployment_types != b.deployment_types


def test_fleet_dump_is_the_deployments_as_a_json_array() -> None:
    fleet = generate_fleet(50)
    assert orjson.loads(fleet_dump_bytes(fleet)) == fleet.deployments
    assert generate_fleet(0).deployments == []


def test_ids_are_unique_uuid4_and_types_cover_every_record(fleet: Fleet) -> None:
    all_ids = ids(fleet.deployments)
    assert len(set(all_ids)) == len(all_ids) == 500
    assert all(UUID_RE.match(i) for i in all_ids)
    assert set(fleet.deployment_types) == set(all_ids)
    assert set(fleet.deployment_types.values()) == {"dev_free", "dev", "prod"}


def test_canaries_are_planted_without_changing_the_rest() -> None:
    plain = generate_fleet(120, seed=5)
    marked = generate_fleet(120, seed=5, canary_secret="CANARY-S", canary_env_value="CANARY-E")
    with_sidecars = 0
    for p, m in zip(plain.deployments, marked.deployments, strict=True):
        assert {"name": "DIMS_CANARY_SECRET", "value": "CANARY-S"} in m["secrets"]
        assert [s for s in m["secrets"] if s["value"] != "CANARY-S"] == (p["secrets"] or [])
        sidecars = (spec_of(m) or {}).get("sidecars") or []
        if sidecars:
            with_sidecars += 1
            env_values = [e.get("value") for c in sidecars for e in c.get("env") or []]
            assert env_values.count("CANARY-E") == 1
    assert with_sidecars >= 10
    assert b"CANARY" not in fleet_dump_bytes(plain)
    assert plain.deployment_types == marked.deployment_types


def test_deployment_type_is_embedded_only_on_request() -> None:
    plain = generate_fleet(100, seed=3)
    assert not any("deployment_type" in (d.get("source_config") or {}) for d in plain.deployments)
    embedded = generate_fleet(100, seed=3, embed_deployment_type=True)
    for d in embedded.deployments:
        if d.get("source_config") is not None:
            assert d["source_config"]["deployment_type"] == embedded.deployment_types[d["id"]]


# -- the fleet matches openapi.yaml -------------------------------------------------------------


@pytest.fixture(scope="module")
def validators() -> dict[str, Draft202012Validator]:
    registry = Registry().with_resource(
        "urn:dims:openapi", Resource(contents=document(), specification=DRAFT202012)
    )

    def make(name: str) -> Draft202012Validator:
        return Draft202012Validator(
            {"$ref": f"urn:dims:openapi#/components/schemas/{name}"},
            registry=registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )

    return {n: make(n) for n in ("Deployment", "OAuthProvider", "Repository", "DeploymentPage")}


def test_schema_validators_check_formats(validators: dict[str, Draft202012Validator]) -> None:
    """Guards against a vacuous pass: formats (uuid, date-time) are really checked."""
    v = validators["Repository"]
    good = {"host_integration_id": "6f1c0b0e-2f1a-4c43-9d8e-0a1b2c3d4e5f", "id": 1, "name": "n"}
    good |= {"owner": "o", "url": "u", "default_branch": "main"}
    assert v.is_valid(good)
    assert not v.is_valid({**good, "host_integration_id": "not-a-uuid"})
    assert not v.is_valid({**good, "id": "1"})
    assert not validators["Deployment"].is_valid({"created_at": "2024-01-01 10:00"})
    assert not validators["Deployment"].is_valid({"source_config": {"resource_spec": {"cpu": "2"}}})


def test_every_record_matches_openapi(validators: dict[str, Draft202012Validator]) -> None:
    fleet = generate_fleet(
        500, seed=1, canary_secret="c", canary_env_value="e", embed_deployment_type=True
    )
    for record in fleet.deployments:
        errors = [e.message for e in validators["Deployment"].iter_errors(record)]
        assert not errors, (record["id"], errors)
    for provider in fleet.providers:
        assert not list(validators["OAuthProvider"].iter_errors(provider)), provider
    for repos in fleet.repositories.values():
        for repo in repos:
            assert not list(validators["Repository"].iter_errors(repo)), repo
    extra, _ = fleet.new_deployment()
    assert validators["Deployment"].is_valid(extra)


def test_served_pages_match_openapi(
    http: httpx.Client, validators: dict[str, Draft202012Validator]
) -> None:
    r = http.get(DEPLOYMENTS, params={"limit": 100, "offset": 50})
    assert r.headers["content-type"] == "application/json"
    assert not list(validators["DeploymentPage"].iter_errors(r.json()))


# -- paging ----------------------------------------------------------------------------------


def test_paging_returns_every_record_exactly_once_in_listing_order(
    http: httpx.Client, fleet: Fleet
) -> None:
    got = fetch_all(http, limit=37)
    assert ids(got) == ids(fleet.deployments)
    assert got == fleet.deployments  # byte-for-byte the generated records, nothing hidden


def test_default_limit_is_20_and_offset_is_the_next_offset(http: httpx.Client) -> None:
    body = http.get(DEPLOYMENTS).json()
    assert len(body["resources"]) == 20
    assert body["offset"] == 20
    body = http.get(DEPLOYMENTS, params={"offset": 490, "limit": 100}).json()
    assert (len(body["resources"]), body["offset"]) == (10, 500)
    body = http.get(DEPLOYMENTS, params={"offset": 900}).json()
    assert body == {"resources": [], "offset": 900}


def test_offset_beyond_64_bits_is_accepted(http: httpx.Client) -> None:
    r = http.get(DEPLOYMENTS, params={"offset": 2**70})
    assert r.status_code == 200
    assert r.json() == {"resources": [], "offset": 2**70}


def test_records_carry_no_hidden_service_attributes(fleet: Fleet) -> None:
    for key in ("remote_reconciled", "tag_value_ids", "deployment_type"):
        assert f'"{key}"'.encode() not in fleet_dump_bytes(fleet)


# -- filters -----------------------------------------------------------------------------------


def test_name_contains_is_a_case_insensitive_substring(http: httpx.Client, fleet: Fleet) -> None:
    for needle in ("AGENT", "graph-0", "zürich", '"quoted"', ", eu"):
        expected = [
            d["id"]
            for d in fleet.deployments
            if needle.casefold() in (d.get("name") or "").casefold()
        ]
        assert expected, needle
        assert ids(fetch_all(http, name_contains=needle)) == expected


def test_deployment_type_partitions_the_fleet(http: httpx.Client, fleet: Fleet) -> None:
    seen: dict[str, str] = {}
    for kind in ("dev_free", "dev", "prod"):
        got = ids(fetch_all(http, deployment_type=kind))
        assert got
        for dep_id in got:
            assert dep_id not in seen
            seen[dep_id] = kind
    assert seen == fleet.deployment_types


def test_image_version_is_exact(http: httpx.Client, fleet: Fleet) -> None:
    got = fetch_all(http, image_version="0.10.1")
    assert got
    assert {d["image_version"] for d in got} == {"0.10.1"}
    assert len(got) == sum(d.get("image_version") == "0.10.1" for d in fleet.deployments)
    assert fetch_all(http, image_version="0.10") == []


def test_deployment_ids_selects_exactly_those(http: httpx.Client, fleet: Fleet) -> None:
    wanted = [fleet.deployments[i]["id"] for i in (400, 3, 77)]
    got = fetch_all(http, deployment_ids=f"{wanted[0]}, {wanted[1]},{wanted[2]},")
    assert ids(got) == sorted(wanted, key=ids(fleet.deployments).index)  # listing order
    unknown = "00000000-0000-4000-8000-000000000000"
    assert fetch_all(http, deployment_ids=unknown) == []


def test_status_matches_the_records_status(http: httpx.Client, fleet: Fleet) -> None:
    statuses = Counter(d["status"] for d in fleet.deployments if "status" in d)
    assert len(statuses) >= 3
    for status, count in statuses.items():
        got = fetch_all(http, status=status)
        assert len(got) == count
        assert {d["status"] for d in got} == {status}
    assert fetch_all(http, status="RUNNING") == []


@pytest.mark.parametrize(
    ("raw", "value"), [("true", True), ("1", True), ("false", False), ("0", False)]
)
def test_remote_reconciled(http: httpx.Client, fleet: Fleet, raw: str, value: bool) -> None:
    expected = [d["id"] for d in fleet.deployments if fleet.remote_reconciled[d["id"]] is value]
    assert 0 < len(expected) < len(fleet.deployments)
    assert ids(fetch_all(http, remote_reconciled=raw)) == expected


def test_tag_value_ids_match_any_listed_tag(http: httpx.Client, fleet: Fleet) -> None:
    tags = Counter(t for ts in fleet.tag_value_ids.values() for t in ts)
    first, second = (t for t, _ in tags.most_common(2))
    one = ids(fetch_all(http, tag_value_ids=first))
    assert one == [d["id"] for d in fleet.deployments if first in fleet.tag_value_ids[d["id"]]]
    both = ids(fetch_all(http, tag_value_ids=f"{first},{second}"))
    expected = [
        d["id"] for d in fleet.deployments if {first, second} & set(fleet.tag_value_ids[d["id"]])
    ]
    assert both == expected
    assert len(both) > len(one)


def test_filters_combine_with_and(http: httpx.Client, fleet: Fleet) -> None:
    got = fetch_all(http, deployment_type="prod", image_version="0.11.0", limit=7)
    expected = [
        d["id"]
        for d in fleet.deployments
        if fleet.deployment_types[d["id"]] == "prod" and d.get("image_version") == "0.11.0"
    ]
    assert expected
    assert ids(got) == expected


# -- errors ------------------------------------------------------------------------------------


def test_providers_are_listed_and_looked_up_by_slug(http: httpx.Client, fleet: Fleet) -> None:
    r = http.get(PROVIDERS)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == fleet.providers
    for provider in fleet.providers:
        assert http.get(f"{PROVIDERS}/{provider['provider_id']}").json() == provider
        # the record's `id` is not the path parameter
        assert http.get(f"{PROVIDERS}/{provider['id']}").status_code == 404


def test_repositories_of_an_integration(http: httpx.Client, fleet: Fleet) -> None:
    integration, repos = next(iter(fleet.repositories.items()))
    assert http.get(f"/v1/integrations/forge/codehost/{integration}/repos").json() == repos
    upper = http.get(f"/v1/integrations/forge/codehost/{integration.upper()}/repos")
    assert upper.json() == repos


@pytest.mark.parametrize(
    "path",
    [
        f"{PROVIDERS}/no-such-provider",
        "/v1/integrations/forge/codehost/00000000-0000-4000-8000-000000000000/repos",
        "/v2/nothing-here",
        f"{DEPLOYMENTS}/",
    ],
)
def test_unknown_things_are_json_404(http: httpx.Client, path: str) -> None:
    r = http.get(path)
    assert r.status_code == 404
    assert r.headers["content-type"] == "application/json"
    assert isinstance(r.json()["detail"], str)


def test_wrong_method_is_405_with_allow(http: httpx.Client) -> None:
    r = http.post(DEPLOYMENTS, json={})
    assert r.status_code == 405
    assert "GET" in r.headers["allow"]
    assert r.json() == {"detail": "Method Not Allowed"}


@pytest.mark.parametrize(
    ("path", "params", "loc", "kind"),
    [
        (DEPLOYMENTS, {"limit": "0"}, ["query", "limit"], "greater_than_equal"),
        (DEPLOYMENTS, {"limit": "101"}, ["query", "limit"], "less_than_equal"),
        (DEPLOYMENTS, {"limit": "abc"}, ["query", "limit"], "int_parsing"),
        (DEPLOYMENTS, {"limit": "1.5"}, ["query", "limit"], "int_parsing"),
        (DEPLOYMENTS, {"offset": "-1"}, ["query", "offset"], "greater_than_equal"),
        (DEPLOYMENTS, {"deployment_type": "staging"}, ["query", "deployment_type"], "enum"),
        (
            DEPLOYMENTS,
            {"remote_reconciled": "maybe"},
            ["query", "remote_reconciled"],
            "bool_parsing",
        ),
        (
            "/v1/integrations/forge/codehost/not-a-uuid/repos",
            {},
            ["path", "integration_id"],
            "uuid_parsing",
        ),
    ],
)
def test_invalid_parameters_are_fastapi_422(
    http: httpx.Client, path: str, params: dict[str, str], loc: list[str], kind: str
) -> None:
    r = http.get(path, params=params)
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/json"
    (item,) = r.json()["detail"]
    assert item["loc"] == loc
    assert item["type"] == kind
    assert isinstance(item["msg"], str) and item["msg"]


def test_every_invalid_parameter_is_reported_at_once(http: httpx.Client) -> None:
    r = http.get(DEPLOYMENTS, params={"limit": "0", "offset": "x", "deployment_type": "qa"})
    assert r.status_code == 422
    assert [e["loc"][1] for e in r.json()["detail"]] == ["limit", "offset", "deployment_type"]


# -- authentication ----------------------------------------------------------------------------


def test_api_key_is_required_when_configured() -> None:
    key = "sandbox-test-key-7f3a"
    with (
        run_sandbox(30, api_key=key) as sb,
        httpx.Client(base_url=sb.base_url, timeout=10) as c,
    ):
        for headers in ({}, {"X-Api-Key": "wrong"}, {"X-Api-Key": key.upper()}):
            for path in (DEPLOYMENTS, PROVIDERS, f"{PROVIDERS}/github-local-dev"):
                r = c.get(path, headers=headers)
                assert r.status_code == 401
                assert r.headers["content-type"] == "application/json"
                assert isinstance(r.json()["detail"], str)
                assert key not in r.text and key.upper() not in r.text
        tenant = sb.fleet.deployments[0]["tenant_id"]
        ok = c.get(DEPLOYMENTS, headers={"X-Api-Key": key, "X-Tenant-Id": tenant})
        assert ok.status_code == 200
        assert len(ok.json()["resources"]) == 20
        assert c.get(DEPLOYMENTS, headers={"X-Api-Key": key}).status_code == 200  # optional
        other = c.get(DEPLOYMENTS, headers={"X-Api-Key": key, "X-Tenant-Id": "other-tenant"})
        assert other.status_code == 403 and key not in other.text
        assert sb.stats.faults["forbidden"] == 1
        assert sb.headers == {"X-Api-Key": key}
        assert key not in repr(sb)
        assert sb.stats.faults["unauthorized"] == 9


# -- faults ------------------------------------------------------------------------------------


@contextlib.contextmanager
def faulty(
    faults: Faults, deployments: int = 30, **kwargs: Any
) -> Iterator[tuple[SandboxHandle, httpx.Client]]:
    with (
        run_sandbox(deployments, seed=3, faults=faults, **kwargs) as sb,
        httpx.Client(base_url=sb.base_url, timeout=10) as c,
    ):
        yield sb, c


def test_faults_are_off_by_default(http: httpx.Client, sandbox: SandboxHandle) -> None:
    for _ in range(30):
        assert http.get(PROVIDERS).status_code == 200
    assert sandbox.faults == Faults()
    assert not sandbox.stats.faults


def test_rate_limit_every_nth_request_with_retry_after() -> None:
    with faulty(Faults(rate_limit_every=3, retry_after_s=0)) as (sb, c):
        responses = [c.get(DEPLOYMENTS if i % 2 else PROVIDERS) for i in range(6)]
        assert [r.status_code for r in responses] == [200, 200, 429, 200, 200, 429]
        limited = responses[2]
        assert limited.headers["retry-after"] == "0"
        assert limited.headers["content-type"] == "application/json"
        assert isinstance(limited.json()["detail"], str)
        assert sb.stats.faults["rate_limit"] == 2
    with faulty(Faults(rate_limit_every=1, retry_after_s=2)) as (_, c):
        assert c.get(PROVIDERS).headers["retry-after"] == "2"


def test_server_errors_every_nth_request_as_json_or_html() -> None:
    with faulty(Faults(error_every=2, error_status=502)) as (sb, c):
        statuses = [c.get(DEPLOYMENTS).status_code for _ in range(4)]
        assert statuses == [200, 502, 200, 502]
        r = c.get(PROVIDERS)
        assert r.status_code == 200
        r = c.get(PROVIDERS)
        assert r.status_code == 502
        assert r.json()["detail"]
        assert sb.stats.faults["error"] == 3
    with faulty(Faults(error_every=1, error_html=True)) as (_, c):
        r = c.get(DEPLOYMENTS)
        assert r.status_code == 503
        assert r.headers["content-type"].startswith("text/html")
        with pytest.raises(json.JSONDecodeError):
            json.loads(r.text)


def test_faults_apply_to_api_routes_only() -> None:
    with faulty(Faults(error_every=1)) as (sb, c):
        assert c.get("/not/an/api/route").status_code == 404
        assert c.get(PROVIDERS).status_code == 503
        assert sb.stats.faults["error"] == 1


def test_truncate_every_nth_success_with_a_matching_content_length() -> None:
    with faulty(Faults(truncate_every=2)) as (sb, c):
        first = c.get(DEPLOYMENTS, params={"limit": 5})
        assert len(first.json()["resources"]) == 5
        assert c.get(f"{PROVIDERS}/nope").status_code == 404  # not a 200: not counted
        cut = c.get(DEPLOYMENTS, params={"limit": 5})
        assert cut.status_code == 200
        assert int(cut.headers["content-length"]) == len(cut.content)
        assert len(cut.content) == len(first.content) // 2
        assert cut.content == first.content[: len(cut.content)]
        with pytest.raises(json.JSONDecodeError):
            json.loads(cut.content)
        assert c.get(PROVIDERS).json()  # the third success is whole again
        assert sb.stats.faults["truncate"] == 1


def test_stuck_offset_answers_the_requested_offset() -> None:
    with faulty(Faults(stuck_offset=True)) as (_, c):
        for offset in (0, 10, 25):
            body = c.get(DEPLOYMENTS, params={"limit": 10, "offset": offset}).json()
            assert body["offset"] == offset
            assert body["resources"]


def test_insert_while_paging_shows_one_record_twice_to_an_offset_pager() -> None:
    with faulty(Faults(insert_while_paging=2), deployments=30) as (sb, c):
        original = ids(sb.fleet.deployments)
        seen = ids(fetch_all(c, limit=10))
        assert len(seen) == 31
        duplicates = [i for i, n in Counter(seen).items() if n > 1]
        assert duplicates == [original[19]]  # last of page 2 shifted onto page 3
        (inserted,) = sb.stats.inserted_ids
        assert inserted not in seen and inserted not in original
        assert sb.stats.faults["insert"] == 1
        now = ids(fetch_all(c, limit=100))
        assert now == [inserted, *original]  # inserted once, at the start, never again
        newest = c.get(DEPLOYMENTS, params={"limit": 1}).json()["resources"][0]
        assert dt.datetime.fromisoformat(newest["created_at"]) > dt.datetime.fromisoformat(
            sb.fleet.deployments[0]["created_at"]
        )
        assert sb.fleet.deployment_types.get(inserted) is None  # the fleet itself is unchanged
        assert inserted in ids(fetch_all(c, deployment_type=_type_of(c, inserted)))


def _type_of(c: httpx.Client, dep_id: str) -> str:
    for kind in ("dev_free", "dev", "prod"):
        if dep_id in ids(fetch_all(c, deployment_type=kind)):
            return kind
    raise AssertionError(f"{dep_id} has no type")


def test_reset_every_nth_request_drops_the_connection() -> None:
    with faulty(Faults(reset_every=2)) as (sb, c):
        assert c.get(PROVIDERS).status_code == 200
        with pytest.raises(httpx.TransportError):
            c.get(DEPLOYMENTS)
        assert c.get(DEPLOYMENTS).status_code == 200  # the client reconnects
        with pytest.raises(httpx.TransportError):
            c.get(PROVIDERS)
        assert sb.stats.faults["reset"] == 2
        assert sb.stats.requests[PROVIDERS] == 2


def test_fault_priority_when_several_fall_on_one_request() -> None:
    with faulty(Faults(reset_every=4, rate_limit_every=2, error_every=3)) as (_, c):
        outcomes = []
        for _ in range(6):
            try:
                outcomes.append(c.get(PROVIDERS).status_code)
            except httpx.TransportError:
                outcomes.append("reset")
        assert outcomes == [200, 429, 503, "reset", 200, 429]


def test_latency_delays_every_api_request() -> None:
    with faulty(Faults(latency_ms=80)) as (_, c):
        started = time.perf_counter()
        assert c.get(PROVIDERS).status_code == 200
        assert time.perf_counter() - started >= 0.08
    with faulty(Faults(), latency_ms=60) as (_, c):
        started = time.perf_counter()
        assert c.get(DEPLOYMENTS).status_code == 200
        assert time.perf_counter() - started >= 0.06


@pytest.mark.parametrize(
    "bad",
    [
        {"error_status": 404},
        {"rate_limit_every": -1},
        {"retry_after_s": 0.5},
        {"latency_ms": -1},
    ],
)
def test_invalid_faults_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Faults(**bad)


def test_stats_count_requests_per_path(sandbox: SandboxHandle) -> None:
    with run_sandbox(10) as sb, httpx.Client(base_url=sb.base_url) as c:
        for _ in range(3):
            c.get(DEPLOYMENTS)
        c.get(f"{PROVIDERS}/github-local-dev")
        c.get("/unknown")
        assert sb.stats.requests == Counter(
            {DEPLOYMENTS: 3, f"{PROVIDERS}/github-local-dev": 1, "/unknown": 1}
        )
        assert sb.stats.total_requests == 5


# -- lifecycle ---------------------------------------------------------------------------------


def _sandbox_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("dims-sandbox")]


def test_sandboxes_run_in_parallel_and_stop_cleanly() -> None:
    before = set(_sandbox_threads())
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(run_sandbox(n, seed=n)) for n in (5, 6, 7)]
        assert len({h.port for h in handles}) == 3
        for h in handles:
            assert h.base_url == f"http://127.0.0.1:{h.port}"
            body = httpx.get(f"{h.base_url}{DEPLOYMENTS}", params={"limit": 100}).json()
            assert len(body["resources"]) == len(h.fleet.deployments)
    assert set(_sandbox_threads()) <= before
    for h in handles:
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{h.base_url}{PROVIDERS}", timeout=2)


def test_sandboxes_start_concurrently_from_threads() -> None:
    def one(seed: int) -> int:
        with run_sandbox(20, seed=seed) as h:
            return len(
                httpx.get(f"{h.base_url}{DEPLOYMENTS}", params={"limit": 100}).json()["resources"]
            )

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(one, range(8))) == [20] * 8


def test_a_given_fleet_is_served_as_is() -> None:
    fleet = generate_fleet(12, seed=99)
    with run_sandbox(fleet=fleet) as h:
        assert h.fleet is fleet
        assert httpx.get(f"{h.base_url}{DEPLOYMENTS}").json()["resources"] == fleet.deployments[:12]
    with pytest.raises(TypeError), run_sandbox(fleet=fleet, canary_secret="x"):
        pass


def test_serve_prints_the_url_and_stops_on_ctrl_c() -> None:
    code = "from dims.sandbox import serve; serve(port=0, deployments=25, api_key='k-serve')"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert match, line
        r = httpx.get(
            f"{match.group(0)}{DEPLOYMENTS}", headers={"X-Api-Key": "k-serve"}, timeout=10
        )
        assert len(r.json()["resources"]) == 20
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "k-serve" not in line + out + err


# -- realism -----------------------------------------------------------------------------------


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def test_resources_follow_the_documented_defaults(fleet: Fleet) -> None:
    by_type: dict[str, list[dict[str, Any]]] = {"dev_free": [], "dev": [], "prod": []}
    for d in fleet.deployments:
        spec = spec_of(d)
        if spec:
            by_type[fleet.deployment_types[d["id"]]].append(spec)

    def share(specs: list[dict[str, Any]], **want: Any) -> float:
        return sum(all(s.get(k) == v for k, v in want.items()) for s in specs) / len(specs)

    dev_default = {"cpu": 1, "memory_mb": 1024, "max_scale": 1, "db_storage_gi": 10}
    assert share(by_type["dev"], **dev_default) > 0.8
    assert share(by_type["dev_free"], **dev_default) > 0.8
    assert share(by_type["prod"], cpu=2, memory_mb=2048, cpu_limit=4, memory_limit_mb=4096) > 0.6
    raised = [s for s in by_type["prod"] if s["cpu"] >= 4 and s["memory_mb"] >= 8192]
    assert len(raised) >= 10
    assert all(s["max_scale"] <= 10 for specs in by_type.values() for s in specs)
    assert all(s["max_scale"] == 1 for s in by_type["dev"] if s["min_scale"] <= 1)
    fractional = {
        v for specs in by_type.values() for s in specs for v in s.values() if isinstance(v, float)
    }
    assert {0.5, 0.25} <= fractional
    for component in ("queue", "orchestrator", "executor", "cache", "db"):
        assert any(s.get(f"{component}_cpu") for specs in by_type.values() for s in specs)


def test_a_few_records_are_odd(fleet: Fleet) -> None:
    specs = [spec_of(d) for d in fleet.deployments]
    present = [s for s in specs if s]
    assert any(s["cpu_limit"] < s["cpu"] for s in present)
    assert any(s["memory_limit_mb"] < s["memory_mb"] for s in present)
    assert any(s["max_scale"] < s["min_scale"] for s in present)
    assert any(s["cpu"] == 0 and s["memory_mb"] == 0 for s in present)
    with_config = [d["source_config"] for d in fleet.deployments if d.get("source_config")]
    assert any(c.get("resource_spec", 0) is None for c in with_config)
    assert any("resource_spec" not in c for c in with_config)
    assert any(d.get("source_config", 0) is None for d in fleet.deployments)
    assert any(s.get("queue_cpu", 0) is None for s in present)
    assert any("cache_cpu" not in s for s in present)
    odd = sum(
        1 for s in specs if not s or s["cpu_limit"] < s["cpu"] or s["max_scale"] < s["min_scale"]
    )
    assert odd < len(specs) * 0.15  # a few, not most


def test_image_versions_need_version_order(fleet: Fleet) -> None:
    versions = Counter(d.get("image_version") for d in fleet.deployments)
    assert {"0.4.12", "0.9.3", "0.10.1", "0.10.2", "0.11.0", "0.10.1-rc1", "latest"} <= set(
        versions
    )
    releases = [v for v in versions if v and re.fullmatch(r"\d+\.\d+\.\d+", v)]
    newest = max(releases, key=_version_key)
    assert newest == "0.11.0" != max(releases)  # text order disagrees with version order
    assert versions.most_common(1)[0][0] == newest
    pending = [d for d in fleet.deployments if d["active_revision_id"] != d["latest_revision_id"]]
    assert 0 < len(pending) < len(fleet.deployments) * 0.2


def test_free_form_values_of_mixed_types(fleet: Fleet) -> None:
    values = [
        v
        for d in fleet.deployments
        for key in ("labels", "annotations")
        for v in ((spec_of(d) or {}).get(key) or {}).values()
    ]
    kinds = {type(v) for v in values}
    assert {str, int, float, bool, dict, list, type(None)} <= kinds


def test_names_are_hostile(fleet: Fleet) -> None:
    names = [d["name"] for d in fleet.deployments]
    assert any(not n.isascii() for n in names)
    assert any(any(ord(ch) > 0xFFFF for ch in n) for n in names)  # astral plane (emoji)
    for ch in ('"', "'", ",", "\n", "\t"):
        assert any(ch in n for n in names), repr(ch)


def test_timestamps_use_several_offsets_and_all_parse(fleet: Fleet) -> None:
    stamps = [d[k] for d in fleet.deployments for k in ("created_at", "updated_at")]
    stamps += [p[k] for p in fleet.providers for k in ("created_at", "updated_at")]
    suffixes = Counter(s[-6:] if s[-6] in "+-" else s[-1] for s in stamps)
    assert {"Z", "+00:00", "-05:00", "+05:30"} <= set(suffixes)
    assert suffixes.most_common(1)[0][0] == "Z"
    for s in stamps:
        parsed = dt.datetime.fromisoformat(s)
        assert parsed.tzinfo is not None
        assert (
            dt.datetime(2023, 1, 1, tzinfo=dt.UTC) < parsed < dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        )
    created = [dt.datetime.fromisoformat(d["created_at"]) for d in fleet.deployments]
    assert created == sorted(created, reverse=True)  # listed newest first


def test_some_records_carry_fields_the_spec_does_not_name(fleet: Fleet) -> None:
    top = Counter(k for d in fleet.deployments for k in d if k not in _spec_props("Deployment"))
    assert set(top) == {"status", "source"}
    assert 0 < top["status"] < len(fleet.deployments) * 0.15
    statuses = {d["status"] for d in fleet.deployments if "status" in d}
    allowed = {
        "AWAITING_DATABASE",
        "READY",
        "UNUSED",
        "AWAITING_DELETE",
        "AWAITING_FINAL_DELETE",
        "UNKNOWN",
    }
    assert statuses <= allowed
    nested = Counter(
        k
        for d in fleet.deployments
        for k in (d.get("source_config") or {})
        if k not in _spec_props("SourceConfig")
    )
    assert set(nested) == {"future_flag"}


def _spec_props(name: str) -> set[str]:
    return set(document()["components"]["schemas"][name]["properties"])


def test_containers_volumes_and_secrets_look_like_kubernetes(fleet: Fleet) -> None:
    containers = [
        c
        for d in fleet.deployments
        for key in ("sidecars", "init_containers")
        for c in (spec_of(d) or {}).get(key) or []
    ]
    quantities = {
        str(q)
        for c in containers
        for part in ("requests", "limits")
        for q in ((c.get("resources") or {}).get(part) or {}).values()
    }
    assert {"500m", "0.25", "128Mi", "1Gi", "512M", "1.5Gi"} <= quantities
    env = [e for c in containers for e in c.get("env") or []]
    assert any("valueFrom" in e and "value" not in e for e in env)
    assert any("value" in e for e in env)
    sources = {
        k for d in fleet.deployments for v in (spec_of(d) or {}).get("volumes") or [] for k in v
    }
    assert {"configMap", "secret", "emptyDir", "persistentVolumeClaim"} <= sources
    secrets = [s for d in fleet.deployments for s in d.get("secrets") or []]
    assert secrets and all(set(s) == {"name", "value"} for s in secrets)
    assert any(d.get("secrets") is None for d in fleet.deployments)
    assert any(d["secret_references"] for d in fleet.deployments)


def test_integrations_are_shared_and_their_repositories_match(fleet: Fleet) -> None:
    used = Counter(
        d["source_config"]["integration_id"]
        for d in fleet.deployments
        if d.get("source_config") and d["source_config"]["integration_id"]
    )
    assert max(used.values()) > 1
    for integration in used:
        repos = fleet.repositories[integration]
        assert 1 <= len(repos) <= 6
        assert {r["host_integration_id"] for r in repos} == {integration}
    for d in fleet.deployments:
        config = d.get("source_config")
        if config and config["integration_id"]:
            urls = {r["url"] for r in fleet.repositories[config["integration_id"]]}
            assert config["repo_url"] in urls
    repo_ids = [r["id"] for repos in fleet.repositories.values() for r in repos]
    assert len(set(repo_ids)) == len(repo_ids)


def test_oauth_providers_look_real(fleet: Fleet) -> None:
    providers = fleet.providers
    assert 3 <= len(providers) <= 6
    slugs = [p["provider_id"] for p in providers]
    assert "github-local-dev" in slugs
    assert len(set(slugs)) == len(slugs)
    assert all(
        p["provider_id"] != p["id"] and re.fullmatch(r"[a-z0-9-]+", p["provider_id"])
        for p in providers
    )
    assert all("client_secret" not in p for p in providers)
    for seed in range(5):  # across seeds: optional fields are sometimes left out
        ps = generate_fleet(1, seed=seed).providers
        assert 3 <= len(ps) <= 6
    every = [p for seed in range(10) for p in generate_fleet(1, seed=seed).providers]
    assert any(p["code_challenge_method"] is None for p in every)
    assert any(p["code_challenge_method"] is not None for p in every)
    for optional in (
        "token_endpoint_auth_method",
        "is_dynamic_client",
        "provider_type",
        "mcp_server_url",
    ):
        assert any(optional not in p for p in every), optional
        assert any(optional in p for p in every), optional


def test_fleet_has_right_sizing_cases_for_the_capacity_report():
    fleet = generate_fleet(300, seed=0)
    prod_at_dev_defaults = dev_above_defaults = 0
    for record in fleet.deployments:
        spec = (record.get("source_config") or {}).get("resource_spec") or {}
        kind = fleet.deployment_types[record["id"]]
        if kind == "prod" and spec.get("cpu") == 1 and spec.get("memory_mb") == 1024:
            prod_at_dev_defaults += 1
        if kind != "prod" and (spec.get("cpu") or 0) > 1:
            dev_above_defaults += 1
    assert prod_at_dev_defaults >= 1 and dev_above_defaults >= 1


def test_roll_out_moves_a_growing_share_live():
    from dims.sandbox import roll_out

    with run_sandbox(deployments=80, seed=9) as sandbox:
        first = roll_out(sandbox.fleet, "9.9.9", 0.25, seed=1)
        more = roll_out(sandbox.fleet, "9.9.9", 0.5, seed=1)  # extends the same rollout
        assert len(first) == 20 and len(set(first) | set(more)) == 40
        served = httpx.get(f"{sandbox.base_url}/v2/deployments", params={"limit": 100}).json()
        moved = [r for r in served["resources"] if r["image_version"] == "9.9.9"]
        assert {r["id"] for r in moved} == set(first) | set(more)
        assert all(r["active_revision_id"] == r["latest_revision_id"] for r in moved)
    with pytest.raises(ValueError, match="share"):
        roll_out(sandbox.fleet, "1.0.0", 1.5)


def test_the_second_day_is_served_live_with_its_added_and_removed_deployments():
    """`second_day` on a served fleet: the listing serves the new list (added in, removed
    out), the scaled and resized records with their new sizes, and the fleet keeps its size."""
    from dims.sandbox import second_day

    with run_sandbox(deployments=100, seed=9) as sandbox:
        before = {r["id"]: copy.deepcopy(r) for r in sandbox.fleet.deployments}
        day = second_day(sandbox.fleet, "9.9.9", 0.3)
        served = httpx.get(f"{sandbox.base_url}/v2/deployments", params={"limit": 100}).json()
    ids = {r["id"] for r in served["resources"]}
    assert len(day.added) == len(day.removed) == 1 and len(day.scaled) == len(day.resized) == 4
    assert set(day.added) <= ids and not set(day.removed) & ids and len(ids) == 100
    by_id = {r["id"]: r for r in served["resources"]}
    for did in day.scaled:
        new, old = (x["source_config"]["resource_spec"] for x in (by_id[did], before[did]))
        assert new["max_scale"] != old["max_scale"] and new["cpu"] == old["cpu"]
    for did in day.resized:
        new, old = (x["source_config"]["resource_spec"] for x in (by_id[did], before[did]))
        assert new["cpu"] == old["cpu"] + 1 and new["memory_mb"] == 2 * old["memory_mb"]
    untouched = set(day.moved) | set(day.scaled) | set(day.resized) | set(day.added)
    assert all(by_id[i] == before[i] for i in ids - untouched)
