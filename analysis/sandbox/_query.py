"""Query and path validation with FastAPI-shaped 422 errors.

The real service is a FastAPI application, so its validation errors are pydantic's:
`{"detail": [{"type", "loc", "msg", "input", ...}]}`, every invalid parameter at once.
Clients parse those bodies, so the sandbox answers in the same shape.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dims import _spec as spec

_INT = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


class ValidationFailed(Exception):
    """Carries the pydantic-style error items of one request."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(errors)} validation error(s)")
        self.errors = errors


@dataclass(frozen=True)
class DeploymentQuery:
    """Validated parameters of GET /v2/deployments; hashable, so selections can be cached."""

    limit: int = 20
    offset: int = 0
    name_contains: str | None = None
    status: str | None = None
    remote_reconciled: bool | None = None
    tag_value_ids: frozenset[str] | None = None
    image_version: str | None = None
    deployment_type: str | None = None
    deployment_ids: frozenset[str] | None = None

    @property
    def filters(self) -> tuple[Any, ...]:
        return (
            self.name_contains,
            self.status,
            self.remote_reconciled,
            self.tag_value_ids,
            self.image_version,
            self.deployment_type,
            self.deployment_ids,
        )


def _error(kind: str, where: str, name: str, msg: str, value: Any, **ctx: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"type": kind, "loc": [where, name], "msg": msg, "input": value}
    if ctx:
        item["ctx"] = ctx
    return item


def _int(
    params: Mapping[str, str],
    name: str,
    default: int,
    errors: list[dict[str, Any]],
    *,
    ge: int,
    le: int | None,
) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not _INT.fullmatch(raw):
        msg = "Input should be a valid integer, unable to parse string as an integer"
        errors.append(_error("int_parsing", "query", name, msg, raw))
        return default
    try:
        value = int(raw)
    except ValueError:  # more digits than int() converts
        msg = "Input should be a valid integer, unable to parse string as an integer"
        errors.append(_error("int_parsing", "query", name, msg, raw))
        return default
    if value < ge:
        msg = f"Input should be greater than or equal to {ge}"
        errors.append(_error("greater_than_equal", "query", name, msg, raw, ge=ge))
    elif le is not None and value > le:
        msg = f"Input should be less than or equal to {le}"
        errors.append(_error("less_than_equal", "query", name, msg, raw, le=le))
    return value


def _csv(raw: str | None) -> frozenset[str] | None:
    """A comma-separated list; empty items are ignored and an empty list means no filter."""
    if raw is None:
        return None
    items = frozenset(part.strip() for part in raw.split(",") if part.strip())
    return items or None


def parse_deployment_query(params: Mapping[str, str]) -> DeploymentQuery:
    """Validate the listing's query string, raising ValidationFailed with every problem."""
    errors: list[dict[str, Any]] = []
    limit = _int(params, "limit", 20, errors, ge=1, le=100)
    offset = _int(params, "offset", 0, errors, ge=0, le=None)

    reconciled: bool | None = None
    raw = params.get("remote_reconciled")
    if raw is not None:
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            reconciled = True
        elif lowered in _FALSE:
            reconciled = False
        else:
            msg = "Input should be a valid boolean, unable to interpret input"
            errors.append(_error("bool_parsing", "query", "remote_reconciled", msg, raw))

    deployment_type = params.get("deployment_type")
    if deployment_type is not None and deployment_type not in spec.deployment_types():
        *rest, last = (repr(t) for t in spec.deployment_types())
        expected = f"{', '.join(rest)} or {last}"  # FastAPI's wording: 'a', 'b' or 'c'
        errors.append(
            _error(
                "enum",
                "query",
                "deployment_type",
                f"Input should be {expected}",
                deployment_type,
                expected=expected,
            )
        )
    if errors:
        raise ValidationFailed(errors)
    return DeploymentQuery(
        limit=limit,
        offset=offset,
        name_contains=params.get("name_contains"),
        status=params.get("status"),
        remote_reconciled=reconciled,
        tag_value_ids=_csv(params.get("tag_value_ids")),
        image_version=params.get("image_version"),
        deployment_type=deployment_type,
        deployment_ids=_csv(params.get("deployment_ids")),
    )


def parse_uuid(value: str, name: str) -> str:
    """The canonical (lower-case, hyphenated) form of a UUID path parameter."""
    if not _UUID.fullmatch(value):
        msg = "Input should be a valid UUID, invalid character or length"
        raise ValidationFailed([_error("uuid_parsing", "path", name, msg, value)])
    return value.lower()
