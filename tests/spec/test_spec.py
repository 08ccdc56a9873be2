"""openapi.yaml is valid and holds every field of the interface spec under its exact name.

The oracle is the interface specification itself (a copy in tests/data), parsed here, so
a field dropped or renamed in openapi.yaml fails the build.
"""

from __future__ import annotations

import re

import pytest
from openapi_spec_validator import validate
from repo import DATA, ROOT

from dims import _spec as spec

INTERFACE = (DATA / "interface-spec.md").read_text()


def section(title: str) -> str:
    start = INTERFACE.index(title)
    rest = INTERFACE[start + len(title) :]
    nxt = re.search(r"\n#{2,4} ", rest)
    return rest[: nxt.start()] if nxt else rest


def first_column(text: str) -> list[str]:
    """The first cell of every data row of the markdown tables in `text`."""
    names = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        header = cells[0] in ("Field", "Group", "Name", "Item", "Limit")
        if line.startswith("|") and not header and not set(cells[0]) <= set("-: "):
            names.append(cells[0])
    return names


def listed(text: str, before: str) -> list[str]:
    """Names listed in prose like `Volume object: name (string); configMap, … (each …)`."""
    line = next(li for li in text.splitlines() if li.startswith(before))
    body = re.sub(r"\([^)]*\)", "", line[len(before) :])
    names = (n.strip().rstrip(".").strip() for n in re.split(r"[;,]", body))
    return [n for n in names if n]


def props(name: str) -> set[str]:
    return set(spec.schema(name).names)


def test_document_is_valid_openapi():
    validate(spec.document())


def test_oauth_provider_fields_presence_and_defaults():
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in section("### 2.1 OAuth provider").splitlines()
        if line.startswith("| ") and not line.startswith("| Field")
    ]
    schema = spec.schema("OAuthProvider")
    assert {r[0] for r in rows} == set(schema.names)
    for name, _type, presence, default in rows:
        assert schema.properties[name].required == presence.startswith("req"), name
        if default:
            assert str(schema.properties[name].default).lower() == default.lower(), name
    raw = spec.document()["components"]["schemas"]["OAuthProvider"]["properties"]
    assert "null" in raw["code_challenge_method"]["type"]
    assert "client_secret" not in " ".join(schema.names).replace("client_secret_post", "")


def test_repository_fields_all_required():
    names = first_column(section("### 2.2 Repository"))
    schema = spec.schema("Repository")
    assert set(names) == set(schema.names)
    assert all(p.required for p in schema.properties.values())


@pytest.mark.parametrize(
    ("title", "schema_name"),
    [
        ("### 2.3 Deployment", "Deployment"),
        ("#### 2.3.1 source_config", "SourceConfig"),
        ("#### 2.3.2 source_revision_config", "SourceRevisionConfig"),
    ],
)
def test_deployment_objects(title, schema_name):
    assert set(first_column(section(title))) == props(schema_name)


def test_resource_spec_fields():
    text = section("#### 2.3.3 resource_spec")
    expected = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 2 and cells[0] not in ("Group", "Field"):
            if (cells[1][0].islower() and "," in cells[1]) or "_" in cells[1]:
                expected |= {n.strip() for n in cells[1].split(",")}
            else:
                expected.add(cells[0])
    assert expected == props("ResourceSpec")
    numeric = set(spec.resource_numeric_fields())
    assert {"cpu", "cache_memory_limit_mb", "db_max_connections", "db_storage_gi"} <= numeric
    assert len(numeric) == 32


def test_nested_objects_of_resource_spec():
    text = section("#### 2.3.3 resource_spec")
    assert set(listed(text, "Volume object:")) == props("Volume")
    assert set(listed(text, "Volume-mount object:")) == props("VolumeMount")
    container = listed(text, "Container object:")
    assert set(container) == props("Container")
    assert props("EnvVar") == {"name", "value", "valueFrom"}
    assert props("ContainerResources") == {"limits", "requests"}
    assert props("ListenerConfig") == {"k8s_namespace"}
    assert props("DeploymentSecret") == {"name", "value"}
    assert props("SecretReference") == {"name", "secret_name", "secret_key"}


def test_deployment_fields_are_optional_and_nullable_except_the_id_dims_requires():
    for name in ("Deployment", "SourceConfig", "SourceRevisionConfig", "ResourceSpec"):
        raw = spec.document()["components"]["schemas"][name]
        required = {"id"} if name == "Deployment" else set()
        assert set(raw.get("required", ())) == required, name
        for prop, node in raw["properties"].items():
            nullable = "null" in node.get("type", []) or any(
                o.get("type") == "null" for o in node.get("anyOf", [])
            )
            assert nullable == (prop not in required), f"{name}.{prop}"


def test_service_fields_beyond_the_spec_are_declared_once():
    assert spec.service_fields() == {
        "status": "status",
        "source": "source",
        "source_config.deployment_type": "deployment_type",
    }
    assert spec.own_type_path() == ("source_config", "deployment_type")
    # none of them is a spec property: they stay unknown fields (kept in unknown_fields_json)
    assert "status" not in spec.schema("Deployment").properties
    assert "deployment_type" not in spec.schema("SourceConfig").properties


def test_operations_paths_and_parameters():
    paths = spec.document()["paths"]
    assert set(paths) == {
        "/v2/auth/providers/{provider_id}",
        "/v2/auth/providers",
        "/v1/integrations/forge/{code_host}/{integration_id}/repos",
        "/v2/deployments",
    }
    op_ids = {op["operationId"] for item in paths.values() for op in item.values()}
    assert op_ids == {
        "get_oauth_provider",
        "list_oauth_providers",
        "list_integration_repositories",
        "list_deployments",
    }
    params = {p["name"]: p["schema"] for p in paths["/v2/deployments"]["get"]["parameters"]}
    expected = first_column(section("Query parameters (all optional):"))
    assert list(params) == expected
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    assert params["offset"] == {"type": "integer", "minimum": 0, "default": 0}
    enum = spec.document()["components"]["schemas"]["DeploymentType"]["enum"]
    assert enum == ["dev_free", "dev", "prod"]


def test_the_code_host_segment_is_a_parameter_whose_default_gives_the_specs_path():
    """The interface spec's path with its literal `codehost`, and the published path with
    `github`, are what the `code_host` parameter's default and published value make."""
    row = next(li for li in section("### 4.3").splitlines() if li.startswith("| Path |"))
    spec_path = re.search(r"(/v1/\S+)", row)[1]
    literal = re.search(r"the segment `(\w+)` stands for the code host", row)[1]
    (path,) = [p for p in spec.document()["paths"] if p.startswith("/v1/")]
    operation = spec.document()["paths"][path]["get"]
    code_host = next(p for p in operation["parameters"] if p["name"] == "code_host")
    assert code_host["in"] == "path" and code_host["required"] is True
    segment = spec.code_host_segment()
    assert segment.default == literal == "codehost"
    assert path.replace("{code_host}", segment.default) == spec_path
    published = path.replace("{code_host}", segment.published)
    assert published == "/v1/integrations/forge/github/{integration_id}/repos"
    assert "`codehost`" in code_host["description"] and "`github`" in code_host["description"]
    # one segment: what could change the path is not one
    assert re.fullmatch(segment.pattern, "github") and re.fullmatch(segment.pattern, "code-host.2")
    for bad in ("", "a/b", ".", "..", "git hub", "%2F", "x" * 65):
        assert not re.fullmatch(segment.pattern, bad), bad


def test_assumptions_are_marked():
    info = spec.document()["info"]["description"]
    for topic in ("authentication", "errors", "presence", "units", "paging", "code host"):
        assert re.search(rf"ASSUMPTION \({topic}", info), topic
    schemes = spec.document()["components"]["securitySchemes"]
    assert schemes["ApiKeyHeader"]["name"] == "X-Api-Key"
    assert schemes["TenantHeader"]["name"] == "X-Tenant-Id"


def test_the_dataset_page_names_every_table_of_the_dataset():
    from dims._tables import TABLE_SCHEMAS

    page = (ROOT / "docs" / "dataset.md").read_text()
    missing = [name for name in TABLE_SCHEMAS if f"`{name}`" not in page]
    assert not missing, f"docs/dataset.md lacks {missing}"


# --- the parsed copy (hatch_build.py writes it at install) ----------------------------------


def test_the_install_wrote_a_parsed_copy_that_spares_the_yaml_parser():
    """A command starts without importing a YAML parser (about 40 ms): the copy is there,
    made from the spec as it is, and holds the same document."""
    import subprocess
    import sys

    code = "import sys, dims._spec as s; s.document(); print('yaml' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
    assert spec.document() == spec.parse_yaml(spec.spec_path().read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "copy",
    [
        '{"source": "an older spec", "document": {"openapi": "stale"}}',  # the spec was edited
        '{"source": ',  # damaged
        "[1, 2]",
    ],
)
def test_a_parsed_copy_not_made_from_the_spec_as_it_is_is_not_used(tmp_path, monkeypatch, copy):
    path = tmp_path / "openapi.parsed.json"
    path.write_text(copy)
    monkeypatch.setattr(spec, "PARSED_COPY", path)
    spec.document.cache_clear()
    try:
        read = spec.document()
    finally:
        spec.document.cache_clear()
    assert read == spec.parse_yaml(spec.spec_path().read_text(encoding="utf-8"))


def test_a_copy_is_made_only_where_json_holds_the_document_exactly():
    assert spec.parsed_copy("when: 2026-11-23\n") is None  # YAML reads a date
    assert spec.parsed_copy("200: ok\n") is None  # an integer key
    made = spec.parsed_copy("a: [1, 2.5, null, 'é']\n")
    assert made is not None and '"document": {"a": [1, 2.5, null, "é"]}' in made
