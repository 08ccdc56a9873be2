"""Records drawn the spec's way: what openapi.yaml admits, not what a cluster runs.

The realistic fleet (`_fleet`) is shaped like the service's documentation; a mock of the
published OpenAPI document sends anything its schema allows instead: optional objects left
out or null, numbers over the whole float range (negatives, zero, fractions, 1e300, integers
past 64 bits), text with terminal control (ESC, OSC 52, CR, BEL, newlines), bidi controls,
quotes and spreadsheet formula prefixes, free-form objects of any shape, the published
service's spellings (`redis_cpu`, `langgraph_config_path`) and fields the spec does not name.
`dims sandbox --spec-records` (`run_sandbox(spec_records=True)`) serves such records.

Every field comes from `dims._spec` (the one source of field names: a field added to
openapi.yaml is drawn here too); only `random.Random(seed)` draws, so a seed gives the same
records every time. The tests' Hypothesis strategy (tests/spec_records.py) draws from the
same pieces of text and numbers.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from dims import _spec as spec

#: Pieces of text a terminal, a spreadsheet, a SQL engine or Prometheus reads as more than
#: text; drawn text is made of these and of plain characters.
HOSTILE_TEXT: tuple[str, ...] = (
    "\x1b[31m",  # CSI: colour
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]52;c;ZWNobyBwd25lZA==\x07",  # OSC 52: write the clipboard
    "\x1b]0;title\x1b\\",  # OSC ended by ST
    "\r",
    "\x07",
    "\n",
    "\nFAIL budgets fleet: forged\n",
    "\ncheck 2025-06-01: 1 rules, all hold\n",
    "\t",
    "\x00",
    "\x7f",
    "\x85",  # NEL, a C1 control
    "\x9b31m",  # CSI as one C1 character
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u2066",  # LEFT-TO-RIGHT ISOLATE
    "\u200f",  # RIGHT-TO-LEFT MARK
    "'",
    '"',
    '";drop table deployments;--',
    "=1+1",
    "+1",
    "-1",
    "@SUM(A1)",
    "=cmd|' /C calc'!A0",
    "__unallocated__",
    "a.b",
    "a b",
    "Team",
    "team",
    "\\",
    "{}",
    ",",
    "é",
    "😀",
    " ",
)

#: Numbers no cluster runs, and the edges of float64.
EDGE_NUMBERS: tuple[float, ...] = (
    0,
    0.0,
    -0.0,
    -1,
    -2.5,
    0.5,
    1e-300,
    5e-324,
    1e300,
    -1e300,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    2**53 + 1,
)
#: Integers past 64 bits (a float64 holds them only approximately).
EDGE_INTEGERS: tuple[int, ...] = (2**63, 2**64, -(2**63) - 1, 10**30, -(10**30))
#: What a real fleet holds, so that some figures price at all.
ORDINARY_NUMBERS: tuple[float, ...] = (1, 2, 0.25, 0.5, 4, 10, 512, 1024, 2048, 4096)

#: Plain characters drawn between the pieces: ASCII, Latin-1, CJK, an emoji, a control.
_PLAIN = "abcXYZ019-_.:/ ÀéßÿĀ中文😀\x01\x1f"
#: How often an optional field is left out, a nullable one is null, a field the spec does not
#: name is added to an object, a field with a published spelling comes under it.
_ABSENT, _NULL, _UNNAMED, _PUBLISHED = 0.3, 0.15, 0.2, 0.3
#: The last instant every offset can show (year 9999 in UTC, a day's margin each side).
_FIRST = datetime(1, 1, 2, tzinfo=UTC)
_SPAN_S = (datetime(9999, 12, 30, tzinfo=UTC) - _FIRST).total_seconds()


class SpecRecords:
    """A seeded source of records as openapi.yaml's schemas admit them."""

    def __init__(self, seed: int = 0, tenants: int = 0) -> None:
        self.rng = random.Random(seed)
        count = tenants or self.rng.randint(1, 3)
        self.tenants = [self.uuid() for _ in range(count)]
        #: Names, namespaces and versions records share (where groups form and collide).
        self.shared = [self.text() for _ in range(2)]

    # --- leaves ---------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def text(self) -> str:
        """A few hostile pieces and plain characters, or none at all."""
        rng = self.rng
        parts = [
            rng.choice(HOSTILE_TEXT) if rng.random() < 0.5 else rng.choice(_PLAIN)
            for _ in range(rng.randint(0, 4))
        ]
        return "".join(parts)

    def number(self) -> float:
        """Ordinary sizes half the time; else an edge, a float of any magnitude and sign, or
        an integer of any size."""
        rng, pick = self.rng, self.rng.random()
        if pick < 0.5:
            return rng.choice(ORDINARY_NUMBERS)
        if pick < 0.7:
            return rng.choice(EDGE_NUMBERS)
        if pick < 0.85:
            return rng.choice((-1, 1)) * 10 ** rng.uniform(-300, 300)
        return self.integer()

    def integer(self) -> int:
        if self.rng.random() < 0.3:
            return self.rng.choice(EDGE_INTEGERS)
        return self.rng.randint(-(2**70), 2**70) >> self.rng.randint(0, 70)

    def moment(self) -> str:
        """An RFC 3339 date-time in years 1-9999, at any offset, in the forms services use."""
        rng = self.rng
        offset = (
            timezone(timedelta(minutes=rng.randint(-1439, 1439))) if rng.random() < 0.5 else UTC
        )
        moment = (_FIRST + timedelta(seconds=rng.uniform(0, _SPAN_S))).astimezone(offset)
        timespec = rng.choice(("seconds", "milliseconds", "microseconds"))
        text = moment.isoformat(sep=rng.choice("T "), timespec=timespec)
        return text.replace("+00:00", "Z") if rng.random() < 0.5 else text

    def free_form_object(self, depth: int = 0) -> dict[str, Any]:
        """An object of any shape: what the spec leaves free-form (labels, securityContext,
        a volume's source, envFrom's items: in openapi.yaml each is an object)."""
        return {self.text(): self.free_form(depth + 1) for _ in range(self.rng.randint(0, 3))}

    def free_form(self, depth: int = 0) -> Any:
        """Any JSON value (inside free-form objects, and fields the spec does not name)."""
        rng, pick = self.rng, self.rng.random()
        if depth < 2 and pick < 0.3:
            return self.free_form_object(depth)
        if depth < 2 and pick < 0.45:
            return [self.free_form(depth + 1) for _ in range(rng.randint(0, 3))]
        leaves = (None, rng.random() < 0.5, self.number(), self.integer(), self.text())
        return leaves[rng.randrange(len(leaves))]

    # --- records ---------------------------------------------------------------------------

    def value(self, prop: spec.Prop) -> Any:
        """A value of `prop`: null where the spec allows it, else one of its kind."""
        if prop.nullable and self.chance(_NULL):
            return None
        if prop.kind == "array":
            kind = prop.items_kind or "freeform"
            return [self.of_kind(kind, prop.ref) for _ in range(self.rng.randint(0, 2))]
        return self.of_kind(prop.kind, prop.ref)

    def of_kind(self, kind: str, ref: str | None) -> Any:
        if kind == "object" and ref is not None:
            return self.record(ref)
        leaves: dict[str, Callable[[], Any]] = {
            "string": self.text,
            "uuid": self.uuid,
            "datetime": self.moment,
            "number": self.number,
            "integer": self.integer,
            "boolean": lambda: self.chance(0.5),
        }
        leaf = leaves.get(kind)
        return leaf() if leaf is not None else self.free_form_object()  # freeform, objects

    def record(self, schema: str) -> dict[str, Any]:
        """An object of `schema`: its optional fields maybe absent, some under the published
        spelling (or under both), and maybe a field the spec does not name."""
        out: dict[str, Any] = {}
        for prop in spec.schema(schema).properties.values():
            if not prop.required and self.chance(_ABSENT):
                continue
            published = prop.original is not None and self.chance(_PUBLISHED)
            out[prop.original if published and prop.original else prop.name] = self.value(prop)
            if prop.original and not published and self.chance(0.1):
                out[prop.original] = self.value(prop)  # both: dims keeps the spec's
        if self.chance(_UNNAMED):
            self._unnamed(out, schema)
        return out

    def _unnamed(self, out: dict[str, Any], schema: str) -> None:
        named = {n for p in spec.schema(schema).properties.values() for n in (p.name, p.original)}
        key = "x-" + self.text()
        if key not in named:
            out[key] = self.free_form()

    # --- a fleet ---------------------------------------------------------------------------

    def deployment(self) -> tuple[dict[str, Any], str | None]:
        """A deployment record and the type the typed listings see it as (None: none)."""
        record = self.record("Deployment")
        record["id"] = self.uuid()  # required, and unique in the fleet
        if self.chance(0.75):  # most carry resources: the figures priced
            resources = self.record("ResourceSpec")
            _put(record, _resource_spec_path(), resources)
            if self.chance(0.5):
                self._complete(resources)
        if isinstance(record.get("tenant_id"), str):
            record["tenant_id"] = self.rng.choice(self.tenants)
        for leaf in ("name", "image_version", "k8s_namespace"):
            if self.chance(0.25):
                _put(record, _scalar_path(leaf), self.rng.choice([*self.shared, "0.10.1"]))
        for path in spec.service_fields():  # what the real service adds (status, source...)
            if self.chance(0.3):
                value = self.text() if self.chance(0.7) else self.free_form()
                _put(record, tuple(path.split(".")), value)
        return record, self.rng.choice((*spec.deployment_types(), None))

    def extra(self) -> tuple[dict[str, Any], str | None]:
        """A further deployment (the insert-while-paging fault's): one more drawn."""
        return self.deployment()

    def _complete(self, resources: dict[str, Any]) -> None:
        """Each component that sets a figure sets them all: one that lacks a request is
        unpriced whole, and drawn figures are rarely all there by chance."""
        for measures in spec.component_measures().values():
            if any(resources.get(name) is not None for name in measures.values()):
                for name in measures.values():
                    if resources.get(name) is None:
                        resources[name] = self.number()

    def providers(self) -> list[dict[str, Any]]:
        """OAuth providers, one per provider_id (the path the service looks them up by)."""
        drawn = [self.record("OAuthProvider") for _ in range(self.rng.randint(0, 3))]
        return list({str(p["provider_id"]): p for p in drawn}.values())

    def repositories(self, records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """Repositories of every integration the records name (0 to 2 each)."""
        path = _scalar_path("integration_id")
        out: dict[str, list[dict[str, Any]]] = {}
        for record in records:
            integration = _get(record, path)
            if isinstance(integration, str) and integration not in out:
                repos = [self.record("Repository") for _ in range(self.rng.randint(0, 2))]
                for repo in repos:
                    repo["host_integration_id"] = integration
                out[integration] = repos
        return out


def _scalar_path(leaf: str) -> tuple[str, ...]:
    """Where a deployment's scalar `leaf` sits (`k8s_namespace`: source_config.listener_config)."""
    return next(f.path for f in spec.deployment_scalar_fields() if f.name == leaf)


def _resource_spec_path() -> tuple[str, ...]:
    """Where a record's resource figures sit (`source_config.resource_spec`)."""
    return _scalar_path(spec.resource_numeric_fields()[0])[:-1]


def _get(record: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = record
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return value


def _put(record: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set `value` at `path`, making the objects on the way where they are missing or null."""
    target = record
    for step in path[:-1]:
        if not isinstance(target.get(step), dict):
            target[step] = {}
        target = target[step]
    target[path[-1]] = value
