"""The API reference covers the whole SDK surface with signatures (issue 37 item 5).

The site is built as `make test` builds it (`mkdocs build --strict`, into a temporary
folder), and its Python API page is read as text: every public method and property of the
clients, their resources, the listings and `APIResponse` is there with each of its
parameters, and so is every error the SDK raises. The names are taken from the classes
themselves, so a method added to the SDK and left out of the reference fails here.
"""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

import dims
from dims._sdk import _async, _sync

VENV_BIN = Path(sys.executable).parent
#: What a user of the SDK holds: the clients, what `client.deployments` & co. are, the
#: listings and one request's response (the async resources are their twins, said so).
SURFACE = [
    dims.Client,
    dims.AsyncClient,
    dims.DeploymentListing,
    dims.AsyncDeploymentListing,
    dims.APIResponse,
    _sync.Deployments,
    _sync.DeploymentsWithRawResponse,
    _sync.Providers,
    _sync.ProvidersWithRawResponse,
    _sync.Repositories,
    _sync.RepositoriesWithRawResponse,
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [str(VENV_BIN / "mkdocs"), "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    page = (site / "reference" / "dims" / "index.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", page))


#: Where what a user calls is defined: the clients' shared base too, not the listings' shared
#: machinery (`dims._sdk._listing`: what the sync and async listings ask of it).
USERS_MODULES = ("dims._sdk._sync", "dims._sdk._async", "dims._sdk._base", "dims._sdk._models")


def _public(cls: type) -> dict[str, object]:
    """The public methods and properties `cls` has of its own or from its SDK bases."""
    found = {}
    for klass in cls.__mro__:
        if klass.__module__ in USERS_MODULES:
            for name, member in vars(klass).items():
                if not name.startswith("_") and (callable(member) or isinstance(member, property)):
                    found.setdefault(name, member)
    return found


def _sections(text: str) -> dict[type, str]:
    """Each class's part of the page: from its heading (the `¶` before its signature and
    docstring) to the next one's."""
    starts = {}
    for cls in SURFACE:
        heading = re.search(rf"\n\s*(dims\.)?{cls.__name__}\s*\n\s*¶", text)
        assert heading, f"{cls.__name__} has no heading in the reference"
        starts[cls] = heading.start()
    order = sorted(SURFACE, key=starts.__getitem__)
    ends = [starts[c] for c in order[1:]] + [starts[order[-1]] + 4000]
    return {cls: text[starts[cls] : end] for cls, end in zip(order, ends, strict=True)}


@pytest.mark.parametrize("cls", SURFACE, ids=lambda c: c.__name__)
def test_every_sdk_method_is_in_the_reference_with_its_parameters(reference, cls):
    section = _sections(reference)[cls]
    for name, member in _public(cls).items():
        assert re.search(rf"\b{name}\b", section), f"{cls.__name__}.{name} is not in the reference"
        if isinstance(member, property) or not callable(member):
            continue
        assert re.search(rf"\b{name}\(", section), f"{cls.__name__}.{name}() has no signature"
        for parameter in list(inspect.signature(member).parameters)[1:]:  # self
            assert parameter in section, f"{cls.__name__}.{name}: {parameter} not shown"


def test_the_constructor_signature_is_the_users_own(reference):
    start = reference.index("Client(\n")
    signature = reference[start : reference.index(")", start)]
    for parameter in inspect.signature(dims.Client).parameters:
        assert f"{parameter}:" in signature
    assert "_connections" not in signature  # with_options' own way in is not an argument


def test_the_filters_and_the_errors_are_in_the_reference(reference):
    assert "**filters: Unpack[DeploymentFilters]" in reference
    for name in dims.DeploymentFilters.__annotations__:
        assert name in reference
    for name in dims.__all__:
        obj = getattr(dims, name)
        if isinstance(obj, type) and issubclass(obj, dims.DimsError | dims.DimsWarning):
            assert f"dims.{name}" in reference, name


def test_the_async_resources_are_the_sync_ones_twins():
    """The page documents the sync resources and says the async ones are their twins: so
    they must be (tests/spec/test_structure.py holds their parameters equal)."""
    for cls in SURFACE:
        if cls.__module__ == "dims._sdk._sync":
            twin = getattr(_async, f"Async{cls.__name__}")
            assert set(_public(cls)) == set(_public(twin)), cls.__name__
