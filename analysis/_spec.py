"""Field lists derived from `openapi.yaml`, the single source of truth for the wire format.

Every list of fields that the analysis layer, the sandbox, the tests or the docs need is
computed here from the curated spec, so adding a field to `openapi.yaml` is one change:
the flattened tables, the Parquet schemas and the unknown-field detection follow.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SPEC_FILENAME = "openapi.yaml"
#: openapi.yaml parsed, as JSON with the text it was parsed from: written at `pip install` by
#: hatch_build.py (git-ignored, carried by a wheel). Reading it skips importing and running
#: a YAML parser, a large share of every command's start (docs/benchmarks.md).
PARSED_COPY = Path(__file__).with_name("openapi.parsed.json")

#: Scalar JSON-schema kinds a column can have (after resolving `format`).
SCALAR_KINDS = frozenset({"string", "uuid", "datetime", "number", "integer", "boolean"})

#: The extension naming a property's spelling in the published service.
ORIGINAL_NAME_KEY = "x-dims-original-name"

#: Resource-spec field prefixes naming a component; fields without one belong to `main`.
COMPONENT_PREFIXES = ("queue", "orchestrator", "executor", "cache", "db")
COMPONENTS = ("main", *COMPONENT_PREFIXES)


def spec_path() -> Path:
    """Where `openapi.yaml` is: inside `analysis` in a wheel, at the repo root otherwise."""
    packaged = Path(__file__).with_name(SPEC_FILENAME)  # a plain path: dims is never zipped
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parent.parent / SPEC_FILENAME


@functools.cache
def document() -> dict[str, Any]:
    """The parsed OpenAPI document: the parsed copy when it was made from the spec's text as
    it is now (an edited spec is parsed again), else the YAML."""
    text = spec_path().read_text(encoding="utf-8")
    try:
        copy = json.loads(PARSED_COPY.read_bytes())
    except (OSError, ValueError):  # not built (no install yet), or damaged
        copy = None
    if isinstance(copy, dict) and copy.get("source") == text:
        parsed: dict[str, Any] = copy["document"]
        return parsed
    return parse_yaml(text)


def parse_yaml(text: str) -> dict[str, Any]:
    """The spec's text parsed (PyYAML is imported here only: most commands never need it)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parsed: dict[str, Any] = yaml.load(text, Loader=loader)
    return parsed


def parsed_copy(text: str) -> str | None:
    """What PARSED_COPY holds for the spec `text`; None when JSON cannot hold the document
    exactly (YAML has more types: dates, integer keys), so that the YAML is always read."""
    parsed = parse_yaml(text)
    try:
        copy = json.dumps({"source": text, "document": parsed}, ensure_ascii=False)
    except (TypeError, ValueError):  # a date, say
        return None
    return copy if json.loads(copy)["document"] == parsed else None


@dataclass(frozen=True)
class Prop:
    """One property of an object schema, reduced to what flattening needs."""

    name: str
    kind: str  # a SCALAR_KINDS member, "object" (a $ref), "freeform", or "array"
    ref: str | None = None  # schema name for kind "object", or of array items
    items_kind: str | None = None  # for arrays: the items' kind
    required: bool = False
    default: Any = None
    #: A secret value (`format: password`): never stored, logged or shown.
    secret: bool = False
    #: The published service's own name for it (`x-dims-original-name`: `redis_cpu` for
    #: `cache_cpu`), which readers take as a second spelling; None when it has none.
    original: str | None = None
    #: Whether the spec lets its value be null (`type: [x, "null"]`, or a null `anyOf`).
    nullable: bool = False


@dataclass(frozen=True)
class ObjectSchema:
    name: str
    properties: dict[str, Prop] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.properties)


def _strip_null(node: dict[str, Any]) -> dict[str, Any]:
    """Reduce `type: [x, "null"]` and `anyOf: [{$ref}, {type: null}]` to their non-null part."""
    if "anyOf" in node:
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            return {**{k: v for k, v in node.items() if k != "anyOf"}, **options[0]}
    kind = node.get("type")
    if isinstance(kind, list):
        rest = [t for t in kind if t != "null"]
        return {**node, "type": rest[0] if len(rest) == 1 else rest}
    return node


def _nullable(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if isinstance(kind, list):
        return "null" in kind
    return kind == "null" or any(_nullable(option) for option in node.get("anyOf", ()))


def kind_of(node: dict[str, Any]) -> tuple[str, str | None]:
    node = _strip_null(node)
    if "$ref" in node:
        return "object", node["$ref"].rsplit("/", 1)[-1]
    kind = node.get("type")
    fmt = node.get("format")
    if kind == "string":
        return {"uuid": "uuid", "date-time": "datetime"}.get(fmt or "", "string"), None
    if kind == "object":
        return "freeform", None
    if kind in ("number", "integer", "boolean", "array"):
        return kind, None
    if "anyOf" in node:  # e.g. string | integer
        return "freeform", None
    raise ValueError(f"openapi.yaml: unsupported schema node {node!r}")


@functools.cache
def schema(name: str) -> ObjectSchema:
    """The object schema `components/schemas/<name>`."""
    raw = document()["components"]["schemas"][name]
    required = set(raw.get("required", ()))
    props: dict[str, Prop] = {}
    for prop_name, node in raw.get("properties", {}).items():
        kind, ref = kind_of(node)
        items_kind = None
        if kind == "array":
            items = _strip_null(_strip_null(node)["items"])
            items_kind, ref = kind_of(items)
            if items_kind == "freeform" and items.get("type") == "object":
                items_kind = "object"  # free-form, but an object (envFrom items)
        props[prop_name] = Prop(
            name=prop_name,
            kind=kind,
            ref=ref,
            items_kind=items_kind,
            required=prop_name in required,
            default=_strip_null(node).get("default"),
            secret=_strip_null(node).get("format") == "password",
            original=node.get(ORIGINAL_NAME_KEY),
            nullable=_nullable(node),
        )
    _check_originals(name, props)
    return ObjectSchema(name=name, properties=props)


def _check_originals(schema_name: str, props: dict[str, Prop]) -> None:
    """An original name is a second spelling of one property: it must name no other."""
    originals = [p.original for p in props.values() if p.original is not None]
    clashes = {o for o in originals if o in props or originals.count(o) > 1}
    if clashes:
        raise ValueError(
            f"openapi.yaml: {schema_name}: {ORIGINAL_NAME_KEY} {sorted(clashes)} "
            "names another property or is given twice"
        )


@functools.cache
def original_names() -> dict[str, dict[str, str]]:
    """schema name -> {original name: the spec's name}, for the schemas that have any:
    the published service's spellings every reader and the generated models accept."""
    out: dict[str, dict[str, str]] = {}
    for name in document()["components"]["schemas"]:
        found = {p.original: p.name for p in schema(name).properties.values() if p.original}
        if found:
            out[name] = found
    return out


@dataclass(frozen=True)
class ScalarField:
    """A scalar reached from a root schema through nested objects (not arrays)."""

    path: tuple[str, ...]
    kind: str

    @property
    def name(self) -> str:
        return self.path[-1]

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def scalar_fields(root: str, prefix: tuple[str, ...] = ()) -> tuple[ScalarField, ...]:
    """Every scalar under `root`, depth first, following `$ref` objects but not arrays."""
    out: list[ScalarField] = []
    for prop in schema(root).properties.values():
        path = (*prefix, prop.name)
        if prop.kind in SCALAR_KINDS:
            out.append(ScalarField(path, prop.kind))
        elif prop.kind == "object" and prop.ref:
            out.extend(scalar_fields(prop.ref, path))
    return tuple(out)


@functools.cache
def deployment_scalar_fields() -> tuple[ScalarField, ...]:
    """Every scalar of a deployment record, named by its leaf (the wide table's columns)."""
    fields = scalar_fields("Deployment")
    names = [f.name for f in fields]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"openapi.yaml: deployment leaf names are not unique: {duplicates}")
    return fields


@functools.cache
def deployment_types() -> tuple[str, ...]:
    """The deployment_type values the spec enumerates (dev_free, dev, prod)."""
    return tuple(document()["components"]["schemas"]["DeploymentType"]["enum"])


def _listing_parameter(name: str) -> dict[str, Any]:
    params = document()["paths"]["/v2/deployments"]["get"]["parameters"]
    found: dict[str, Any] = next(p for p in params if p["name"] == name)
    return found


@functools.cache
def page_size_range() -> tuple[int, int]:
    """The `limit` a deployments listing accepts: (minimum, maximum), 1..100."""
    schema = _listing_parameter("limit")["schema"]
    return int(schema["minimum"]), int(schema["maximum"])


@dataclass(frozen=True)
class CodeHostSegment:
    """The repositories path's code-host segment, as openapi.yaml's `code_host` declares it."""

    #: What dims sends unless told otherwise: the interface spec's literal, `codehost`.
    default: str
    #: What the published service's path has there: `github`.
    published: str
    #: What a segment may be (a regular expression over the whole value).
    pattern: str


@functools.cache
def code_host_segment() -> CodeHostSegment:
    """The `code_host` path parameter of the repositories operation (found by operationId:
    its path holds the very segment this describes)."""
    operations = (op for item in document()["paths"].values() for op in item.values())
    found = next(op for op in operations if op["operationId"] == "list_integration_repositories")
    param = next(p for p in found["parameters"] if p["name"] == "code_host")
    return CodeHostSegment(
        default=str(param["x-dims-default"]),
        published=str(param["x-dims-published"]),
        pattern=str(param["schema"]["pattern"]),
    )


@functools.cache
def header_names() -> tuple[str, str]:
    """The headers carrying the API key and the tenant (openapi.yaml's securitySchemes)."""
    schemes = document()["components"]["securitySchemes"]
    return str(schemes["ApiKeyHeader"]["name"]), str(schemes["TenantHeader"]["name"])


@functools.cache
def service_fields() -> dict[str, str]:
    """Fields the real service sends beyond the interface spec: dotted path -> column.

    From `x-dims-service-fields` of the Deployment schema. The column `deployment_type`
    marks the record's own type; the others are deployments columns of their own.
    """
    fields = document()["components"]["schemas"]["Deployment"].get("x-dims-service-fields", {})
    return {str(path): str(column) for path, column in fields.items()}


def own_type_path() -> tuple[str, ...]:
    """Where a record carries its own deployment_type (`source_config.deployment_type`)."""
    paths = [p for p, column in service_fields().items() if column == "deployment_type"]
    if len(paths) != 1:
        raise ValueError("openapi.yaml: x-dims-service-fields must map one path to deployment_type")
    return tuple(paths[0].split("."))


def component_of(resource_field: str) -> tuple[str, str]:
    """Split a resource_spec field into (component, measure): `queue_cpu` -> (queue, cpu)."""
    for prefix in COMPONENT_PREFIXES:
        if resource_field.startswith(prefix + "_"):
            return prefix, resource_field[len(prefix) + 1 :]
    return "main", resource_field


@functools.cache
def resource_numeric_fields() -> tuple[str, ...]:
    """The numeric resource_spec fields (cpu, memory_mb, ..., db_max_connections)."""
    return tuple(
        p.name
        for p in schema("ResourceSpec").properties.values()
        if p.kind in ("number", "integer")
    )


@functools.cache
def component_measures() -> dict[str, dict[str, str]]:
    """component -> {measure: resource_spec field}, e.g. db -> {cpu: db_cpu, storage_gi: ...}."""
    out: dict[str, dict[str, str]] = {c: {} for c in COMPONENTS}
    for name in resource_numeric_fields():
        component, measure = component_of(name)
        out[component][measure] = name
    return out


def ref_of(root: str, *path: str) -> str:
    """The schema name reached by following `path` from `root` (objects or array items)."""
    current = root
    for step in path:
        prop = schema(current).properties[step]
        if prop.ref is None:
            raise KeyError(f"{root}.{'.'.join(path)} is not an object or an array of objects")
        current = prop.ref
    return current


@functools.cache
def secret_fields() -> dict[str, tuple[str, ...]]:
    """schema name -> its secret properties (`format: password`), e.g. EnvVar -> (value,)."""
    out = {}
    for name in document()["components"]["schemas"]:
        secrets = tuple(p.name for p in schema(name).properties.values() if p.secret)
        if secrets:
            out[name] = secrets
    return out


def python_name(prop_name: str) -> str:
    """The attribute name openapi-python-client gives a property (valueFrom -> value_from)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", prop_name).lower()
