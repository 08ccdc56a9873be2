"""A seeded synthetic fleet that looks like what the real service sends.

The records are the raw JSON-ready dicts the service would put on the wire, so every layer
above HTTP (client, fetch, tables, reports) is exercised against realistic input: the
documented defaults (Development 1 CPU / 1024 MiB / 1 replica / 10 GiB db disk, Production
2 CPU / 2048 MiB / up to 10 replicas, limits twice the request), raised production
deployments, and the odd records a long-lived fleet accumulates (limits below requests,
max_scale below min_scale, zero or missing resources, nulls, unknown fields, hostile names).

Determinism matters more than realism: the same seed gives byte-identical output, so
benchmarks and snapshots are reproducible. Only `random.Random(seed)` is used and all
timestamps derive from a fixed base date. Rare features are placed on a fixed schedule of
listing positions so that even a small fleet (>= 100 records) contains every one of them.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import orjson

from dims import _spec as spec
from dims._gcpause import paused_gc

from ._spec_records import SpecRecords

STATUSES = (
    "AWAITING_DATABASE",
    "READY",
    "UNUSED",
    "AWAITING_DELETE",
    "AWAITING_FINAL_DELETE",
    "UNKNOWN",
)

#: image_version -> weight (percent). Text order differs from version order on purpose;
#: the newest release (0.11.0) is the most common one.
IMAGE_VERSIONS: tuple[tuple[str, int], ...] = (
    ("0.11.0", 38),
    ("0.10.2", 20),
    ("0.10.1", 14),
    ("0.9.3", 9),
    ("0.4.12", 8),
    ("0.10.0", 4),
    ("0.9.10", 3),
    ("0.10.1-rc1", 2),
    ("latest", 2),
)
_VERSION_POOL: tuple[str, ...] = tuple(v for v, w in IMAGE_VERSIONS for _ in range(w))

#: The newest deployment is created this many seconds after the Unix epoch
#: (2025-06-01T00:00:00Z); the fleet spans about two years before that.
_END_TS = 1_748_736_000
_SPAN_S = 2 * 365 * 86_400

#: Rare features sit at these positions modulo 100 of the listing.
_ANOMALY_AT = {
    7: "limit_below_request",
    23: "max_below_min",
    41: "zero_resources",
    58: "resource_spec_null",
    76: "resource_spec_omitted",
    93: "source_config_null",
}
_ODD_NAME_AT = {3, 14, 31, 47, 62, 85, 99}
_NULL_SECRETS_AT = 66  # `secrets: null` rather than a list
_NULL_IMAGE_VERSION_AT = 88
#: A Kubernetes native sidecar (an init container with `restartPolicy: Always`) goes first
#: among the init containers here.
_NATIVE_SIDECAR_AT = 52
#: Right-sizing cases: a production deployment left at the development defaults, or a
#: development one raised above them (whichever the record's type makes it).
_RIGHTSIZING_AT = {36, 71}
_STATUS_EVERY, _STATUS_AT = 17, 3  # top-level `status` (unknown field), ~6 %
_SOURCE_EVERY, _SOURCE_AT = 29, 11  # top-level `source` (unknown field)
_FUTURE_EVERY, _FUTURE_AT = 31, 13  # `source_config.future_flag` (unknown field)
#: Real-shaped fleets: one deployment in twenty is of a type newer than the spec's enum.
_NEWER_TYPE, _NEWER_TYPE_AT = "dev_plus", 7

_ADJECTIVES = (
    "support", "billing", "triage", "research", "sales", "onboarding", "docs", "search",
    "routing", "review", "compliance", "ops",
)  # fmt: skip
_NOUNS = ("agent", "assistant", "bot", "graph", "copilot", "worker", "planner", "router")
_ODD_NAMES = (
    "Kundendienst-Agent für Zürich",
    "客服代理",
    'agent "quoted" name',
    "o'brien's agent",
    "billing, eu-west",
    "multi\nline agent",
    "émoji 🚀 bot",
    "tab\tseparated",
    "Ассистент поддержки",
)
_OWNERS = ("acme-corp", "globex", "initech", "umbrella-labs", "hooli", "zoë-consulting")
_BRANCHES = ("main", "main", "main", "master", "develop", "trunk")
_TEAMS = ("payments", "growth", "platform", "support", "data", "research")
_SECRET_NAMES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "DATABASE_URL",
    "SLACK_BOT_TOKEN",
    "TAVILY_API_KEY",
)


def _uuid(getrandbits: Any) -> str:
    """A version-4 UUID string from the fleet's own random stream (uuid4() is not seeded)."""
    n = getrandbits(128)
    n = (n & ~(0xF000 << 64)) | (4 << 76)
    n = (n & ~(0xC000 << 48)) | (0x8000 << 48)
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _timestamp(ts: float, style: int) -> str:
    """RFC 3339 text; `style` picks the offset so clients meet more than the `Z` form.

    0: UTC with microseconds and `Z` (most records); 1: the same with `+00:00` (pydantic's
    rendering); 2: the same instant in US Eastern standard time (`-05:00`); 3: India
    (`+05:30`). Styles 2 and 3 carry whole seconds.
    """
    whole = int(ts)
    shift, suffix = _OFFSETS[style]
    y, mo, d, h, mi, s = time.gmtime(whole + shift)[:6]
    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}"
    if style < 2:
        return f"{text}.{int((ts - whole) * 1_000_000):06d}{suffix}"
    return text + suffix


_OFFSETS = ((0, "Z"), (0, "+00:00"), (-5 * 3600, "-05:00"), (19_800, "+05:30"))


def _ts_style(r: float) -> int:
    return 0 if r < 0.85 else 1 if r < 0.93 else 2 if r < 0.97 else 3


@dataclass(eq=False)
class Fleet:
    """Everything the sandbox serves; the fields mirror the service's three listings.

    `deployment_types`, `remote_reconciled` and `tag_value_ids` are service-side facts that
    are not fields of a record: the listing filters use them, clients never see them.
    """

    deployments: list[dict[str, Any]] = field(repr=False)
    #: The type each listing filter sees; None: no typed listing returns the deployment.
    deployment_types: dict[str, str | None] = field(repr=False)
    providers: list[dict[str, Any]] = field(repr=False)
    repositories: dict[str, list[dict[str, Any]]] = field(repr=False)
    remote_reconciled: dict[str, bool] = field(repr=False, default_factory=dict)
    tag_value_ids: dict[str, tuple[str, ...]] = field(repr=False, default_factory=dict)
    #: Records a workspace lists after those whose tenant_id names it (`list_also`).
    also_listed: dict[str, list[dict[str, Any]]] = field(repr=False, default_factory=dict)
    seed: int = 0
    #: Counts changes to the list of deployments while served (`second_day`), so the
    #: listing serves the new list; changes inside a record show without it.
    revision: int = 0
    #: How records spell the fields the published service names otherwise (NAMINGS).
    names: str = "spec"
    _builder: _Builder | SpecRecords | None = field(repr=False, default=None)

    def __repr__(self) -> str:
        return (
            f"Fleet(seed={self.seed}, deployments={len(self.deployments)}, "
            f"providers={len(self.providers)}, integrations={len(self.repositories)})"
        )

    def tenant_ids(self) -> list[str]:
        """The workspaces the deployments belong to, sorted."""
        return sorted({r["tenant_id"] for r in self.deployments if r.get("tenant_id")})

    def list_also(self, tenant_id: str, records: Iterable[dict[str, Any]]) -> None:
        """Have workspace `tenant_id` list `records` too, after its own: another workspace's
        deployment it also sees (the same record, or a copy that differs), or records
        without a tenant_id, as real listings may overlap. Only listings scoped by
        X-Tenant-Id serve them (the unscoped one serves `deployments`); set before serving.
        """
        self.also_listed.setdefault(tenant_id, []).extend(records)

    @property
    def can_grow(self) -> bool:
        """Whether `new_deployment` can make one (a fleet generate_fleet() made)."""
        return self._builder is not None

    def new_deployment(self) -> tuple[dict[str, Any], str | None]:
        """A further deployment, newer than every listed one, for the insert-while-paging fault.

        It is not added to the fleet; the caller decides where it appears.
        """
        if self._builder is None:
            raise RuntimeError("this Fleet was not made by generate_fleet()")
        return self._builder.extra()


#: How a fleet may spell the fields the published service names otherwise.
NAMINGS = ("spec", "original", "mixed")


def _object_paths(schema: str = "Deployment", path: tuple[str, ...] = ()) -> list[Any]:
    """(path, schema name) of every object nested in a deployment record (not in arrays)."""
    out: list[Any] = [(path, schema)]
    for prop in spec.schema(schema).properties.values():
        if prop.kind == "object" and prop.ref:
            out += _object_paths(prop.ref, (*path, prop.name))
    return out


#: (path of an object in a record, {spec name: the published service's name}).
_ORIGINAL_SPELLINGS = tuple(
    (path, {name: original for original, name in spec.original_names()[schema].items()})
    for path, schema in _object_paths()
    if schema in spec.original_names()
)
#: Numeric resource fields the published service sends as integers (all but cpu).
_WHOLE_FIELDS = frozenset(
    name
    for name in spec.resource_numeric_fields()
    if spec.component_of(name)[1] not in ("cpu", "cpu_limit")
)


def in_original_names(record: dict[str, Any]) -> dict[str, Any]:
    """The record as the published service spells it: its own names for the fields the
    spec words neutrally, and whole numbers as integers where its schema has integers."""
    out = dict(record)
    for path, spellings in _ORIGINAL_SPELLINGS:
        *parents, last = path
        parent: Any = out
        for key in parents:
            parent = parent.get(key) if type(parent) is dict else None
        obj = parent.get(last) if type(parent) is dict else None
        if type(obj) is dict:
            parent[last] = {
                spellings.get(key, key): _as_published(key, value) for key, value in obj.items()
            }
    return out


def _as_published(name: str, value: Any) -> Any:
    if name in _WHOLE_FIELDS and type(value) is float and value.is_integer():
        return int(value)
    return value


def json_bytes(body: Any) -> bytes:
    """JSON text of `body`: orjson's, or the standard library's for integers past 64 bits
    (valid JSON, which records drawn the spec's way hold and orjson refuses to write)."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode()


def fleet_dump_bytes(fleet: Fleet) -> bytes:
    """The deployments as one JSON array, the shape `dims export --from-json` reads."""
    return json_bytes(fleet.deployments)


def generate_fleet(
    deployments: int = 500,
    seed: int = 0,
    *,
    canary_secret: str | None = None,
    canary_env_value: str | None = None,
    embed_deployment_type: bool = False,
    untyped_every: int = 0,
    real_shaped: bool = False,
    tenants: int = 0,
    names: str = "spec",
    spec_records: bool = False,
) -> Fleet:
    """Build a deterministic fleet of `deployments` records.

    Records are spread over 1 to 3 workspaces (`tenant_id`), or over `tenants` of them when
    given (`Fleet.tenant_ids()` lists them; the sandbox scopes listings by `X-Tenant-Id`).

    `canary_secret` is added as a secret value to every deployment and `canary_env_value`
    as an env value of the first sidecar of every deployment that has sidecars, so tests can
    prove that no export, log or report leaks them. Neither consumes randomness: the rest of
    the fleet is the same with or without them. `embed_deployment_type` adds the
    `source_config.deployment_type` field that newer services send, to every record.

    Two shapes of real services, off by default (the default fleet never changes):
    - `untyped_every=N`: every Nth deployment is in no typed listing and does not name its
      type, as records the per-type filters never return;
    - `real_shaped`: every record carries `status` and `source`; repository-built ones name
      their type in `source_config.deployment_type` and image-built ones carry null there
      (the real service sets it for one source kind only); one in twenty is of a type the
      spec does not list (`dev_plus`), which no typed listing returns.

    `names`: "spec" (`cache_cpu`), "original" (as the published service: `redis_cpu`, see
    `in_original_names`) or "mixed" (every other record); it draws nothing at random.

    `spec_records`: records drawn the spec's way instead (`_spec_records`: anything
    openapi.yaml admits), over `tenants` workspaces; no shape above applies to them.
    """
    _check_sizes(deployments=deployments, untyped_every=untyped_every, tenants=tenants)
    if names not in NAMINGS:
        raise ValueError(f"names must be one of {', '.join(NAMINGS)}, got {names!r}")
    shapes: dict[str, Any] = dict(
        canary_secret=canary_secret, canary_env_value=canary_env_value,
        embed_deployment_type=embed_deployment_type, untyped_every=untyped_every,
        real_shaped=real_shaped, tenants=tenants, names=names,
    )  # fmt: skip
    if spec_records:
        return _spec_fleet(deployments, seed, shapes)
    with paused_gc():  # building many small dicts is dominated by GC passes otherwise
        builder = _Builder(seed, deployments, **shapes)
        providers, repositories = builder.providers(), builder.repositories
        fleet = Fleet([], {}, providers, repositories, seed=seed, names=names, _builder=builder)
        _add_deployments(fleet, builder, deployments)
    return fleet


def _spec_fleet(deployments: int, seed: int, shapes: dict[str, Any]) -> Fleet:
    """A fleet of records drawn the spec's way (generate_fleet's `spec_records`), over
    `shapes["tenants"]` workspaces; none of the realistic shapes applies to it."""
    given = [k for k, v in shapes.items() if v and k != "tenants" and (k, v) != ("names", "spec")]
    if given:
        raise ValueError(f"spec_records draws its own shapes: {', '.join(given)} do not apply")
    source = SpecRecords(seed, shapes["tenants"])
    fleet = Fleet(
        deployments=[],
        deployment_types={},
        providers=source.providers(),
        repositories={},
        seed=seed,
        _builder=source,  # names: the spec's code-host segment (records mix both spellings)
    )
    for _ in range(deployments):
        record, kind = source.deployment()
        fleet.deployments.append(record)
        fleet.deployment_types[record["id"]] = kind
    fleet.repositories = source.repositories(fleet.deployments)
    return fleet


def _check_sizes(**sizes: int) -> None:
    for name, size in sizes.items():
        if size < 0:
            raise ValueError(f"{name} must be >= 0")


def _add_deployments(fleet: Fleet, builder: _Builder, deployments: int) -> None:
    """Append `deployments` records to `fleet`, newest first, a random gap apart."""
    ts = float(_END_TS)
    gap = _SPAN_S / max(deployments, 1)
    rand = builder.rng.random
    for i in range(deployments):
        record, kind, reconciled, tags = builder.deployment(i, ts)
        fleet.deployments.append(record)
        fleet.deployment_types[record["id"]] = kind
        fleet.remote_reconciled[record["id"]] = reconciled
        fleet.tag_value_ids[record["id"]] = tags
        ts -= 1.0 + rand() * 2 * gap


class _Identity(NamedTuple):
    """What a deployment is called and when it was made: drawn first."""

    kind: str
    dep_id: str
    name: str
    slug: str
    latest: str
    active: str
    version: str
    created: str
    updated: str


class _Source(NamedTuple):
    """Where a deployment's code comes from: a repository, or an image."""

    from_repo: bool
    integration: str | None
    repo_url: str | None
    repo_ref: str | None
    image_uri: str | None
    tarball: str | None


class _Builder:
    """Holds the random stream and the shared pools (tenants, integrations, listeners)."""

    def __init__(
        self,
        seed: int,
        deployments: int,
        *,
        canary_secret: str | None,
        canary_env_value: str | None,
        embed_deployment_type: bool,
        untyped_every: int = 0,
        real_shaped: bool = False,
        tenants: int = 0,
        names: str = "spec",
    ) -> None:
        self.rng = random.Random(seed)
        self.names = names
        self.untyped_every = untyped_every
        self.real_shaped = real_shaped
        self.canary_secret = canary_secret
        self.canary_env_value = canary_env_value
        self.embed_deployment_type = embed_deployment_type
        self.extras = 0
        bits = self.rng.getrandbits
        self.organization_id = _uuid(bits)
        drawn = self.rng.randint(1, 3)  # drawn either way: the default fleet never changes
        self.tenants = [_uuid(bits) for _ in range(tenants or drawn)]
        self.listeners = [_uuid(bits) for _ in range(3)]
        self.tag_pool = [_uuid(bits) for _ in range(8)]
        self.repositories: dict[str, list[dict[str, Any]]] = {}
        repo_id = self.rng.randint(100_000_000, 700_000_000)
        for _ in range(max(2, deployments // 20)):
            integration = _uuid(bits)
            owner = self.rng.choice(_OWNERS)
            repos = []
            for _ in range(self.rng.randint(1, 6)):
                repo_id += self.rng.randint(1, 5000)
                repo_name = f"{self.rng.choice(_ADJECTIVES)}-{self.rng.choice(_NOUNS)}"
                repos.append(
                    {
                        "host_integration_id": integration,
                        "id": repo_id,
                        "name": repo_name,
                        "owner": owner,
                        "url": f"https://github.com/{owner}/{repo_name}",
                        "default_branch": self.rng.choice(_BRANCHES),
                    }
                )
            self.repositories[integration] = repos
        self.integrations = list(self.repositories)

    # -- OAuth providers ---------------------------------------------------------------

    def providers(self) -> list[dict[str, Any]]:
        rng, bits = self.rng, self.rng.getrandbits
        chosen = [_PROVIDERS[0], *rng.sample(_PROVIDERS[1:], rng.randint(2, len(_PROVIDERS) - 1))]
        out = []
        for template in chosen:
            created = _END_TS - _SPAN_S + rng.random() * _SPAN_S
            record = {
                "id": _uuid(bits),
                "organization_id": self.organization_id,
                "provider_id": template["provider_id"],
                "name": template["name"],
                "client_id": f"{template['provider_id'][:6]}-{bits(48):012x}",
                "auth_url": template["auth_url"],
                "token_url": template["token_url"],
                "uses_pkce": template["uses_pkce"],
                "code_challenge_method": template["code_challenge_method"],
                "created_at": _timestamp(created, _ts_style(rng.random())),
                "updated_at": _timestamp(created + rng.random() * 86_400 * 90, 0),
            }
            for optional in (
                "provider_type",
                "mcp_server_url",
                "token_endpoint_auth_method",
                "is_dynamic_client",
            ):
                if optional in template:
                    record[optional] = template[optional]
            out.append(record)
        return out

    # -- deployments -------------------------------------------------------------------

    def extra(self) -> tuple[dict[str, Any], str | None]:
        self.extras += 1
        # A position far beyond any listing keeps its name unique among the generated ones.
        record, kind, _, _ = self.deployment(
            1_000_000 + self.extras, _END_TS + 3600.0 * self.extras
        )
        return record, kind

    def deployment(
        self, i: int, ts: float
    ) -> tuple[dict[str, Any], str | None, bool, tuple[str, ...]]:
        """Deployment `i` (created at `ts`), its listed type, remote_reconciled and tags.

        The steps below draw from the one random stream in a fixed order (identity, source,
        resources, configuration, secrets, the record, service fields, listing facts):
        reordering them would change every fleet, and the fleet is the fixture of every test
        and benchmark.
        """
        slot = i % 100
        anomaly = _ANOMALY_AT.get(slot)
        who = self._identity(i, ts, slot)
        source = self._source(who)
        resource_spec = self._resource_spec(who.kind, anomaly, self.rng.random, i)
        config, listed_kind = self._source_config(i, who, source, resource_spec, anomaly)
        secrets = self._secrets(slot)
        record = self._record(who, source, config, secrets, slot)
        self._service_fields(record, i, source.from_repo)
        if self.names == "original" or (self.names == "mixed" and i % 2):
            record = in_original_names(record)
        r = self.rng.random
        reconciled = r() < 0.3
        tags = tuple(dict.fromkeys(self.tag_pool[int(r() * 8)] for _ in range(int(r() * 3))))
        return record, listed_kind, reconciled, tags

    def _identity(self, i: int, ts: float, slot: int) -> _Identity:
        """Type, ids, name, revisions, version and timestamps."""
        r, bits = self.rng.random, self.rng.getrandbits
        x = r()
        kind = "dev_free" if x < 0.22 else "dev" if x < 0.55 else "prod"
        dep_id = _uuid(bits)
        if slot in _ODD_NAME_AT:
            name = f"{_ODD_NAMES[(i // 100 + slot) % len(_ODD_NAMES)]} {i}"
        else:
            name = f"{_ADJECTIVES[int(r() * 12)]}-{_NOUNS[int(r() * 8)]}-{i:05d}"
        latest = _uuid(bits)
        active = latest if r() < 0.92 else _uuid(bits)
        version = _VERSION_POOL[int(r() * 100)]
        style = _ts_style(r())
        created = _timestamp(ts, style)
        updated = _timestamp(ts + r() * 30 * 86_400, style)
        slug = name if slot not in _ODD_NAME_AT else f"agent-{i}"
        return _Identity(kind, dep_id, name, slug, latest, active, version, created, updated)

    def _source(self, who: _Identity) -> _Source:
        """Most deployments build from a code-host repository, some run an image."""
        r, bits = self.rng.random, self.rng.getrandbits
        if not r() < 0.85:
            image_uri = f"registry.example.com/agents/{who.slug}:{who.version}"
            return _Source(False, None, None, None, image_uri, None)
        integration = self.integrations[int(r() * len(self.integrations))]
        repos = self.repositories[integration]
        repo = repos[int(r() * len(repos))]
        repo_ref = repo["default_branch"] if r() < 0.8 else f"release/{who.version}"
        tarball = f"s3://dims-sandbox-builds/{who.dep_id}/{bits(32):08x}.tar.gz"
        return _Source(True, integration, repo["url"], repo_ref, None, tarball)

    def _source_config(
        self,
        i: int,
        who: _Identity,
        source: _Source,
        resource_spec: dict[str, Any] | None,
        anomaly: str | None,
    ) -> tuple[dict[str, Any] | None, str | None]:
        """`source_config` (None for its anomaly) and the type the listings give."""
        r = self.rng.random
        namespace = (
            ("agents-dev", "agents-prod")[who.kind == "prod"]
            if r() < 0.9
            else "team-" + _TEAMS[int(r() * 6)]
        )
        from_repo = source.from_repo
        config: dict[str, Any] = {
            "integration_id": source.integration,
            "repo_url": source.repo_url,
            "build_on_push": from_repo and r() < 0.6,
            "custom_url": f"https://agents.example.com/{who.slug}" if r() < 0.1 else None,
            "resource_spec": resource_spec,
            "listener_id": self.listeners[int(r() * 3)],
            "listener_config": {"k8s_namespace": namespace},
            "install_command": "pip install -e ." if from_repo and r() < 0.3 else None,
            "build_command": "make build" if from_repo and r() < 0.1 else None,
        }
        if anomaly == "resource_spec_omitted":
            del config["resource_spec"]
        if i % _FUTURE_EVERY == _FUTURE_AT:
            config["future_flag"] = True
        listed_kind = self._listed_kind(i, who.kind, from_repo, config)
        return (None if anomaly == "source_config_null" else config), listed_kind

    def _listed_kind(
        self, i: int, kind: str, from_repo: bool, config: dict[str, Any]
    ) -> str | None:
        """The type the typed listings give (None: in none of them); names it in `config`
        when the record should say its own type."""
        listed_kind: str | None = kind
        if self.untyped_every and i % self.untyped_every == self.untyped_every - 1:
            listed_kind = None
        if self.real_shaped:
            if i % 20 == _NEWER_TYPE_AT:
                listed_kind = _NEWER_TYPE  # no typed listing can return it
            config["deployment_type"] = listed_kind if from_repo else None
        elif self.embed_deployment_type and listed_kind is not None:
            config["deployment_type"] = kind
        return listed_kind

    def _secrets(self, slot: int) -> list[dict[str, Any]] | None:
        """Up to three secrets (None at their anomaly), plus the canary when planted."""
        r, bits = self.rng.random, self.rng.getrandbits
        secrets: list[dict[str, Any]] | None = [
            {"name": _SECRET_NAMES[k], "value": f"sk-sandbox-{bits(64):016x}"}
            for k in range(int(r() * 4))
        ]
        if slot == _NULL_SECRETS_AT:
            secrets = None
        if self.canary_secret is not None:
            secrets = [
                *(secrets or ()),
                {"name": "DIMS_CANARY_SECRET", "value": self.canary_secret},
            ]
        return secrets

    def _record(
        self,
        who: _Identity,
        source: _Source,
        config: dict[str, Any] | None,
        secrets: list[dict[str, Any]] | None,
        slot: int,
    ) -> dict[str, Any]:
        """The record in the spec's key order (draws happen in that order too)."""
        r, bits = self.rng.random, self.rng.getrandbits
        return {
            "name": who.name,
            "source_config": config,
            "source_revision_config": {
                "repo_ref": source.repo_ref,
                "graph_config_path": "graph.json" if r() < 0.7 else "agents/graph.json",
                "image_uri": source.image_uri,
                "source_tarball_path": source.tarball,
                "repo_commit_sha": f"{bits(160):040x}" if source.from_repo else None,
            },
            "secrets": secrets,
            "id": who.dep_id,
            "tenant_id": self.tenants[int(r() * len(self.tenants))],
            "created_at": who.created,
            "updated_at": who.updated,
            "latest_revision_id": who.latest,
            "active_revision_id": who.active,
            "secret_references": [
                {"name": "DATABASE_URL", "secret_name": f"{who.slug[:20]}-db", "secret_key": "url"}
            ]
            if r() < 0.3
            else [],
            "image_version": who.version if slot != _NULL_IMAGE_VERSION_AT else None,
        }

    def _service_fields(self, record: dict[str, Any], i: int, from_repo: bool) -> None:
        """`status` and `source`: the real service's fields beyond the spec."""
        if self.real_shaped or i % _STATUS_EVERY == _STATUS_AT:
            record["status"] = STATUSES[int(self.rng.random() * len(STATUSES))]
        if self.real_shaped or i % _SOURCE_EVERY == _SOURCE_AT:
            record["source"] = "github" if from_repo else "external_docker"

    def _resource_spec(
        self, kind: str, anomaly: str | None, r: Any, i: int
    ) -> dict[str, Any] | None:
        if anomaly == "resource_spec_null":
            return None
        prod = kind == "prod"
        raised = prod and r() < 0.2
        if raised:
            cpu = (4, 6, 8)[int(r() * 3)]
            mem = (8192, 12288, 16384)[int(r() * 3)]
            min_scale, max_scale = 2 + int(r() * 2), 6 + int(r() * 5)
        elif prod:
            cpu, mem = 2, 2048
            min_scale, max_scale = (1, 1, 2)[int(r() * 3)], (10, 10, 5, 3)[int(r() * 4)]
        else:
            cpu, mem, min_scale, max_scale = 1, 1024, 1, 1
        if i % 100 in _RIGHTSIZING_AT and anomaly is None:  # no extra draws: same stream
            if prod:
                cpu, mem, min_scale, max_scale, raised = 1, 1024, 1, 1, False
            else:
                cpu, mem = 2, 4096
        queue = r() < 0.9 or prod
        legacy = i % 20 == 17  # created before the executor and cache existed: keys absent
        db_storage = (20, 50, 100, 250)[int(r() * 4)] if prod else 10
        numbers = _numbers(prod, raised, cpu, mem, min_scale, max_scale, queue, legacy, anomaly)
        spec: dict[str, Any] = {
            **numbers,
            "db_storage_gi": db_storage,
            "db_max_connections": (500 if raised else 200) if prod else 100,
            "labels": _labels(r, kind, i),
            "annotations": _annotations(r, i),
            "service_account_name": "agent-runner" if r() < 0.3 else None,
            "image_pull_secrets": [{"name": "regcred"}] if r() < 0.2 else [],
        }
        if anomaly is None and r() < 0.03:
            spec["cpu"] = 1.5 if prod else 0.75  # a hand-tuned fractional request
        self._containers(spec, r, i)
        return spec

    def _containers(self, spec: dict[str, Any], r: Any, i: int) -> None:
        """Sidecars, init containers and volumes into `spec` (drawn last, in this order)."""
        with_sidecars = i % 4 == 1 or r() < 0.15
        with_init = i % 6 == 2 or r() < 0.1
        with_volumes = with_sidecars or r() < 0.2
        if with_sidecars:
            spec["sidecars"] = _sidecars(r, self.canary_env_value)
        else:
            spec["sidecars"] = [] if r() < 0.5 else None
        if with_init:
            spec["init_containers"] = _init_containers(r)
        if i % 100 == _NATIVE_SIDECAR_AT:  # no draw: every other record stays as it was
            spec["init_containers"] = [_native_sidecar(), *(spec.get("init_containers") or ())]
        if with_volumes:
            spec["volumes"] = _volumes(r)
            spec["volume_mounts"] = [
                {"name": "config", "mountPath": "/etc/agent", "readOnly": True},
                {"name": "scratch", "mountPath": "/tmp/scratch", "subPath": f"run-{i}"},
            ]


@functools.cache
def _numbers(
    prod: bool,
    raised: bool,
    cpu: float,
    mem: int,
    min_scale: int,
    max_scale: int,
    queue: bool,
    legacy: bool,
    anomaly: str | None,
) -> dict[str, Any]:
    """The numeric resource_spec fields of one profile; few distinct profiles exist, so
    they are computed once and copied into each record."""
    cpu_limit: float = cpu * 2
    mem_limit = mem * 2
    if anomaly == "limit_below_request":
        cpu_limit, mem_limit = cpu / 2, mem // 2
    elif anomaly == "max_below_min":
        min_scale, max_scale = 3, 1
    elif anomaly == "zero_resources":
        cpu = cpu_limit = mem = mem_limit = 0
    spec: dict[str, Any] = {
        "min_scale": min_scale,
        "max_scale": max_scale,
        "cpu": cpu,
        "cpu_limit": cpu_limit,
        "memory_mb": mem,
        "memory_limit_mb": mem_limit,
        "queue_min_scale": min_scale if queue else None,
        "queue_max_scale": max_scale if queue else None,
        "queue_cpu": cpu if queue else None,
        "queue_cpu_limit": cpu_limit if queue else None,
        "queue_memory_mb": mem if queue else None,
        "queue_memory_limit_mb": mem_limit if queue else None,
        "orchestrator_cpu": 1 if prod else 0.5,
        "orchestrator_cpu_limit": 2 if prod else 1,
        "orchestrator_memory_mb": 1024 if prod else 512,
        "orchestrator_memory_limit_mb": 2048 if prod else 1024,
        "orchestrator_min_scale": 1,
        "orchestrator_max_scale": 3 if prod else 1,
        "executor_cpu": 1 if prod else 0.5,
        "executor_cpu_limit": 2 if prod else 1,
        "executor_memory_mb": 2048 if prod else 512,
        "executor_memory_limit_mb": 4096 if prod else 1024,
        "cache_cpu": 0.5 if prod else 0.25,
        "cache_cpu_limit": 1 if prod else 0.5,
        "cache_memory_mb": 1024 if prod else 256,
        "cache_memory_limit_mb": 2048 if prod else 512,
        "db_cpu": (4 if raised else 2) if prod else 0.5,
        "db_cpu_limit": (8 if raised else 4) if prod else 1,
        "db_memory_mb": (8192 if raised else 4096) if prod else 1024,
        "db_memory_limit_mb": (16384 if raised else 8192) if prod else 2048,
    }
    if legacy:
        for key in [k for k in spec if k.startswith(("executor_", "cache_"))]:
            del spec[key]
    return spec


def _labels(r: Any, kind: str, i: int) -> dict[str, Any] | None:
    team = _TEAMS[int(r() * 6)]
    if i % 8 == 5:  # free-form values of every JSON type
        return {
            "team": team,
            "tier": kind,
            "cost-center": 4711 + int(r() * 10),
            "critical": r() < 0.5,
            "ratio": 0.75,
            "owner": {"name": "Zoë Müller", "slack": "#agents", "pager": None},
            "regions": ["eu-west-1", "us-east-1"],
            "retired": None,
        }
    if i % 50 == 9:
        return None
    return {"team": team, "tier": kind}


def _annotations(r: Any, i: int) -> dict[str, Any]:
    if i % 10 == 3:
        return {
            "dims.example/note": 'multi-line\nnote with "quotes", commas',
            "dims.example/replicas-hint": 3,
            "dims.example/reviewed": True,
            "dims.example/owners": ["ana", "李"],
        }
    return {} if r() < 0.7 else {"dims.example/owner": "platform-team"}


def _sidecars(r: Any, canary: str | None) -> list[dict[str, Any]]:
    x = r()
    otel: dict[str, Any] = {
        "name": "otel-collector",
        "image": "otel/opentelemetry-collector:0.98.0",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--config=/etc/otel/config.yaml"],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ],
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "200m", "memory": "256Mi"},
        },
        "volumeMounts": [{"name": "config", "mountPath": "/etc/otel", "readOnly": True}],
        "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True},
    }
    out = [otel]
    if x < 0.4:
        out.append(
            {
                "name": "cloud-sql-proxy",
                "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0",
                "command": ["/cloud-sql-proxy"],
                "args": ["--port=5432", "project:region:instance"],
                "env": [
                    {
                        "name": "DB_PASSWORD",
                        "valueFrom": {"secretKeyRef": {"name": "agent-db", "key": "password"}},
                    }
                ],
                "resources": {
                    "requests": {"cpu": "0.25", "memory": "512M"},
                    "limits": {"memory": "1Gi"},
                },
            }
        )
    elif x < 0.55:
        out.append(
            {
                "name": "vault-agent",
                "image": "hashicorp/vault:1.16",
                "env": [{"name": "VAULT_ADDR", "value": "https://vault.example.com:8200"}],
                "envFrom": [{"configMapRef": {"name": "vault-agent-config"}}],
                "resources": {"limits": {"cpu": 1, "memory": "1.5Gi"}},
            }
        )
    elif x < 0.65:
        out.append({"name": "log-shipper", "image": "fluent/fluent-bit:3.0", "resources": {}})
    if canary is not None:
        otel["env"].append({"name": "SANDBOX_CANARY", "value": canary})
    return out


def _init_containers(r: Any) -> list[dict[str, Any]]:
    migrate: dict[str, Any] = {
        "name": "migrate",
        "image": "registry.example.com/agents/migrate:1.4.2",
        "command": ["python", "-m", "migrate"],
        "workingDir": "/app",
        "restartPolicy": None,
        "resources": {
            "requests": {"cpu": "500m", "memory": "1Gi"},
            "limits": {"cpu": "2", "memory": "2Gi"},
        },
    }
    if r() < 0.5:
        return [migrate]
    wait = {
        "name": "wait-for-db",
        "image": "busybox:1.36",
        "command": ["sh", "-c", "until nc -z db 5432; do sleep 1; done"],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
    }
    return [wait, migrate]


def _native_sidecar() -> dict[str, Any]:
    """An init container that keeps running (`restartPolicy: Always`, Kubernetes 1.29+): it
    starts before the init containers after it and runs beside them and the main one."""
    return {
        "name": "mesh-proxy",
        "image": "envoyproxy/envoy:v1.30.1",
        "args": ["--config-path", "/etc/envoy/envoy.yaml"],
        "restartPolicy": "Always",
        "resources": {
            "requests": {"cpu": "250m", "memory": "256Mi"},
            "limits": {"cpu": "1", "memory": "512Mi"},
        },
    }


def _volumes(r: Any) -> list[dict[str, Any]]:
    volumes: list[dict[str, Any]] = [
        {
            "name": "config",
            "configMap": {
                "name": "agent-config",
                "items": [{"key": "app.yaml", "path": "app.yaml"}],
            },
        },
        {
            "name": "scratch",
            "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"} if r() < 0.5 else {},
        },
    ]
    if r() < 0.5:
        volumes.append(
            {
                "name": "credentials",
                "secret": {"secretName": "agent-credentials", "defaultMode": 420},
            }
        )
    if r() < 0.3:
        volumes.append(
            {
                "name": "data",
                "persistentVolumeClaim": {"claimName": "agent-data", "readOnly": False},
            }
        )
    return volumes


_PROVIDERS: tuple[dict[str, Any], ...] = (
    {
        "provider_id": "github-local-dev",
        "name": "GitHub (local dev)",
        "auth_url": "https://github.com/login/oauth/authorize",
        "token_url": "https://github.com/login/oauth/access_token",
        "uses_pkce": False,
        "code_challenge_method": None,
        "provider_type": "github",
        "mcp_server_url": None,
        "token_endpoint_auth_method": "client_secret_post",
        "is_dynamic_client": False,
    },
    {
        "provider_id": "google-workspace",
        "name": "Google Workspace",
        "auth_url": "https://accounts.google.com/o/oauth2/v2/auth",
        "token_url": "https://oauth2.googleapis.com/token",
        "uses_pkce": True,
        "code_challenge_method": "S256",
        "provider_type": "google",
    },
    {
        "provider_id": "linear-mcp",
        "name": "Linear MCP",
        "auth_url": "https://mcp.linear.app/authorize",
        "token_url": "https://mcp.linear.app/token",
        "uses_pkce": True,
        "code_challenge_method": "S256",
        "provider_type": "mcp",
        "mcp_server_url": "https://mcp.linear.app/sse",
        "token_endpoint_auth_method": "none",
        "is_dynamic_client": True,
    },
    {
        "provider_id": "okta-prod",
        "name": "Okta (prod)",
        "auth_url": "https://example.okta.com/oauth2/v1/authorize",
        "token_url": "https://example.okta.com/oauth2/v1/token",
        "uses_pkce": True,
        "code_challenge_method": "S256",
        "provider_type": None,
    },
    {
        "provider_id": "slack-bot",
        "name": "Slack — support bot",
        "auth_url": "https://slack.com/oauth/v2/authorize",
        "token_url": "https://slack.com/api/oauth.v2.access",
        "uses_pkce": False,
        "code_challenge_method": None,
    },
    {
        "provider_id": "notion-mcp",
        "name": "Notion MCP",
        "auth_url": "https://mcp.notion.com/authorize",
        "token_url": "https://mcp.notion.com/token",
        "uses_pkce": True,
        "code_challenge_method": "plain",
        "mcp_server_url": "https://mcp.notion.com/mcp",
        "token_endpoint_auth_method": "client_secret_basic",
        "is_dynamic_client": True,
    },
)


def roll_out(fleet: Fleet, version: str, share: float, *, seed: int = 0) -> list[str]:
    """Move `share` (0..1) of the fleet to image `version`, as a release rollout would.

    Deployments are taken in one seeded order, so a growing share on later calls extends
    the same rollout (the history notebooks and tests build snapshots this way). Each moved
    deployment gets a new revision, active and latest, and a later `updated_at`. The sandbox
    serves the fleet's records live: the change shows in the next request. Returns the ids
    moved by this call.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be within 0..1, got {share}")
    rng = random.Random(seed)
    order = sorted(fleet.deployments, key=lambda _: rng.random())
    moved = []
    for record in order[: round(len(order) * share)]:
        if record.get("image_version") == version:
            continue
        revision = _uuid(rng.getrandbits)
        record["image_version"] = version
        record["latest_revision_id"] = record["active_revision_id"] = revision
        record["updated_at"] = _rollout_time(record.get("updated_at"))
        moved.append(record["id"])
    return moved


def _rollout_time(updated_at: Any) -> str:
    """A day after the record's last update (or after the fleet's newest moment)."""
    try:
        previous = datetime.fromisoformat(updated_at)
    except (TypeError, ValueError):
        previous = datetime.fromtimestamp(_END_TS, UTC)
    return (previous + timedelta(days=1)).isoformat()


class SecondDay(NamedTuple):
    """What `second_day` did, by deployment id: the demo says it, the tests check it."""

    moved: list[str]
    scaled: list[str]
    resized: list[str]
    added: list[str]
    removed: list[str]


def _resource_spec_of(record: dict[str, Any]) -> dict[str, Any] | None:
    """The record's resource_spec when it has the spec's sizing fields (else None: a record
    without one, or in the published names, is left as it is)."""
    config = record.get("source_config")
    found = config.get("resource_spec") if type(config) is dict else None
    if type(found) is not dict:
        return None
    sized = all(type(found.get(k)) in (int, float) for k in ("max_scale", "cpu", "memory_mb"))
    return found if sized else None


def second_day(fleet: Fleet, version: str, share: float, *, seed: int = 0) -> SecondDay:
    """The fleet a day later, as a working day changes it: `share` of it rolled out to
    `version` (`roll_out`), and, among the deployments it leaves alone, some scaled (their
    max_scale raised, a few lowered), some resized (more cpu and memory_mb per replica), a few
    removed and as many added. Without the sizing changes the second day moves image versions
    only, and the diff, check's drift and the report's history show $0 by every cause.

    Seeded (the same fleet, version, share and seed: the same day); the fleet keeps its size,
    so counts compare. Each change is about 1 in 25 of the fleet (adds and removes 1 in 100),
    at least one each. Records in the published names are not resized.
    """
    moved = roll_out(fleet, version, share, seed=seed)
    rng = random.Random(seed * 7919 + 38)
    untouched = set(moved)
    left = [r for r in fleet.deployments if r["id"] not in untouched]
    sized = [(r, rs) for r in left if (rs := _resource_spec_of(r)) is not None]
    count = max(1, round(len(fleet.deployments) / 25))
    chosen = rng.sample(sized, min(len(sized), 2 * count))
    scaled, resized = chosen[:count], chosen[count:]
    for record, rs in scaled:
        lower = rng.random() < 0.25 and rs["max_scale"] > 1
        rs["max_scale"] = max(1, rs["max_scale"] - 1) if lower else rs["max_scale"] + 2
        rs["min_scale"] = min(rs.get("min_scale") or 1, rs["max_scale"])
        record["updated_at"] = _rollout_time(record.get("updated_at"))
    for record, rs in resized:
        rs["cpu"] = rs["cpu"] + 1
        rs["memory_mb"] = rs["memory_mb"] * 2
        for limit, request in (("cpu_limit", "cpu"), ("memory_limit_mb", "memory_mb")):
            if type(rs.get(limit)) in (int, float):
                rs[limit] = max(rs[limit], rs[request])
        record["updated_at"] = _rollout_time(record.get("updated_at"))
    changed = {r["id"] for r, _ in chosen}
    spare = [r for r in left if r["id"] not in changed]
    few = max(1, round(len(fleet.deployments) / 100)) if fleet.can_grow else 0
    gone = rng.sample(spare, min(len(spare), few))
    gone_ids = {r["id"] for r in gone}
    fleet.deployments[:] = [r for r in fleet.deployments if r["id"] not in gone_ids]
    added = []
    for _ in range(len(gone)):
        record, kind = fleet.new_deployment()
        fleet.deployments.insert(0, record)  # newest first, as listed
        fleet.deployment_types[record["id"]] = kind
        fleet.remote_reconciled[record["id"]] = False
        fleet.tag_value_ids[record["id"]] = ()
        added.append(record["id"])
    fleet.revision += 1
    return SecondDay(
        moved,
        [r["id"] for r, _ in scaled],
        [r["id"] for r, _ in resized],
        added,
        [r["id"] for r in gone],
    )
