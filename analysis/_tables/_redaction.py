"""Secret values out of any record that is kept (rejected_records) or shown."""

from __future__ import annotations

import functools
from typing import Any

from dims import _spec as spec
from dims._secrets import REDACTED

from ._rules import has_own_password, holds_password, is_password


def redact(value: Any, schema_name: str = "Deployment") -> Any:
    """A copy of a record with every secret value replaced by REDACTED.

    Follows the spec to the password fields; where the record's shape differs from the spec
    on the way to one (e.g. `secrets` is a string), the whole part is replaced, since it may
    hold the secret itself.
    """
    if type(value) is list and schema_name == "Deployment":  # records nested by mistake
        return [redact(item, schema_name) for item in value]
    if type(value) is not dict:
        return value
    return _redact_object(value, schema_name)


#: What redaction does to a property: replace its value, or look inside an object or
#: inside each item of an array (of the schema named beside it).
_REPLACE, _INSIDE_OBJECT, _INSIDE_ITEMS = range(3)


@functools.cache
def _plan(schema_name: str) -> tuple[bool, frozenset[str], dict[str, tuple[int, str]]]:
    """(whether unknown keys are replaced too, the known keys, what to do to each property
    on the way to a secret value): worked out once per schema, so that a record is
    redacted by visiting only those properties (a rejected record used to cost a spec
    lookup per key, a fifth of a dirty export's extra time)."""
    properties = spec.schema(schema_name).properties
    # Unknown fields of a secret-bearing object (a secret entry, an env entry) may hold
    # secret material: redacted here as in unknown_fields_json.
    sensitive = has_own_password(schema_name)
    actions: dict[str, tuple[int, str]] = {}
    for key, prop in properties.items():
        if is_password(schema_name, key):
            actions[key] = (_REPLACE, "")
        elif prop.ref and holds_password(prop.ref):
            actions[key] = (_INSIDE_OBJECT if prop.kind == "object" else _INSIDE_ITEMS, prop.ref)
    return sensitive, frozenset(properties), actions


def _redact_object(obj: dict[str, Any], schema_name: str) -> dict[str, Any]:
    out = dict(obj)
    sensitive, known, actions = _plan(schema_name)
    if sensitive:
        for key in obj.keys() - known:
            out[key] = REDACTED
    for key, (action, ref) in actions.items():
        value = obj.get(key)
        if value is None:
            continue
        if action == _INSIDE_OBJECT and type(value) is dict:
            out[key] = _redact_object(value, ref)
        elif action == _INSIDE_ITEMS and type(value) is list:
            out[key] = [
                _redact_object(item, ref) if type(item) is dict else REDACTED for item in value
            ]
        else:  # a secret value, or a part of another shape than the spec's: it may be one
            out[key] = REDACTED
    return out
