"""Property-based contract test: the live sandbox never answers outside openapi.yaml.

Schemathesis generates valid and invalid requests for every operation of the curated spec
and sends them over real HTTP to a running sandbox that requires an API key. Every default
check applies: no 5xx, documented status codes, content types, headers and response
schemas, 4xx for invalid input, 2xx (or 404) for valid input, 401 without the key, 405 for
undocumented methods. A failure means the sandbox (the default target of the product)
and the spec disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import schemathesis
from repo import ROOT

from dims._spec import document
from dims.sandbox import SandboxHandle, run_sandbox

SPEC = ROOT / "openapi.yaml"
API_KEY = "st-contract-key"  # a test key for the throwaway sandbox, not a credential
MAX_EXAMPLES = 100
CODE_HOST = "github"  # the published service's segment (the sandbox serves the one it is given)

# `schemathesis.pytest.from_fixture` (a lazily loaded schema) would let a fixture supply the
# base URL, but in schemathesis 4.32.5 it fails under pytest 9 (it sets `node._nodeid`), so
# the schema is loaded eagerly and the live sandbox's URL is passed to each call instead.
# A fixed seed keeps the run reproducible, and its duration predictable, in CI. The
# repositories path's `code_host` segment is fixed to the one the sandbox serves: any other
# is an unknown path (404, as on a real service), and generated ones would almost never
# reach the operation, leaving its 200 responses unchecked.
# The API key goes through schemathesis' auth config (not a fixed header), so that negative
# cases can leave it out and the `ignored_auth` check can probe it. Unknown query parameters
# are not generated as "invalid": FastAPI, and so the service, ignores them.
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 20240601,
        "auth": {"openapi": {"ApiKeyHeader": {"api_key": API_KEY}}},
        "parameters": {"path.code_host": CODE_HOST},
        "generation": {
            "mode": "all",
            "max-examples": MAX_EXAMPLES,
            "allow-extra-parameters": False,
        },
    }
)
schema = schemathesis.openapi.from_path(SPEC, config=CONFIG)

# Which URL paths each operation test must have sent requests to, and how many at least.
# One test function per operation: under pytest 9 the items that one `@schema.parametrize()`
# generates for several operations share a node id, and pytest-xdist then runs only one.
REACHED: dict[str, tuple[Callable[[str], bool], int]] = {
    "test_get_oauth_provider": (lambda p: p.startswith("/v2/auth/providers/"), MAX_EXAMPLES),
    "test_list_oauth_providers": (lambda p: p == "/v2/auth/providers", 10),
    "test_list_integration_repositories": (
        lambda p: p.startswith(f"/v1/integrations/forge/{CODE_HOST}/"),
        MAX_EXAMPLES,
    ),
    "test_list_deployments": (lambda p: p == "/v2/deployments", MAX_EXAMPLES),
}
COVERED = {"get_oauth_provider", "list_oauth_providers", "list_integration_repositories"}
COVERED |= {"list_deployments"}


@pytest.fixture(scope="module")
def contract_sandbox() -> Iterator[SandboxHandle]:
    with run_sandbox(120, seed=7, api_key=API_KEY, code_host=CODE_HOST) as handle:
        yield handle


@pytest.fixture
def reached_sandbox(
    request: pytest.FixtureRequest, contract_sandbox: SandboxHandle
) -> Iterator[None]:
    """Guards against a vacuous pass: the generated requests really reached the sandbox,
    and some of them came without the key and were refused."""
    stats = contract_sandbox.stats
    before, refused = stats.requests, stats.faults["unauthorized"]
    yield
    after = stats.requests
    matches, at_least = REACHED[request.node.originalname]
    sent = sum(n - before[path] for path, n in after.items() if matches(path))
    assert sent >= at_least, f"only {sent} requests reached the sandbox"
    assert stats.faults["unauthorized"] > refused


def _conforms(case: schemathesis.Case, sandbox: SandboxHandle) -> None:
    case.call_and_validate(base_url=sandbox.base_url, timeout=10)


@schema.include(operation_id="get_oauth_provider").parametrize()
@pytest.mark.usefixtures("reached_sandbox")
def test_get_oauth_provider(case: schemathesis.Case, contract_sandbox: SandboxHandle) -> None:
    _conforms(case, contract_sandbox)


@schema.include(operation_id="list_oauth_providers").parametrize()
@pytest.mark.usefixtures("reached_sandbox")
def test_list_oauth_providers(case: schemathesis.Case, contract_sandbox: SandboxHandle) -> None:
    _conforms(case, contract_sandbox)


@schema.include(operation_id="list_integration_repositories").parametrize()
@pytest.mark.usefixtures("reached_sandbox")
def test_list_integration_repositories(
    case: schemathesis.Case, contract_sandbox: SandboxHandle
) -> None:
    _conforms(case, contract_sandbox)


@schema.include(operation_id="list_deployments").parametrize()
@pytest.mark.usefixtures("reached_sandbox")
def test_list_deployments(case: schemathesis.Case, contract_sandbox: SandboxHandle) -> None:
    _conforms(case, contract_sandbox)


def test_every_operation_of_the_spec_is_covered() -> None:
    operation_ids = {
        operation["operationId"]
        for item in document()["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert operation_ids == COVERED
