"""Secret values out of any record that is kept (rejected_records) or shown."""

from __future__ import annotations

from typing import Any

from analysis import spec
from analysis.secrets import REDACTED

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


def _redact_object(obj: dict[str, Any], schema_name: str) -> dict[str, Any]:
    out = dict(obj)
    properties = spec.schema(schema_name).properties
    # Unknown fields of a secret-bearing object (a secret entry, an env entry) may hold
    # secret material: redacted here as in unknown_fields_json.
    sensitive = has_own_password(schema_name)
    for key, value in obj.items():
        prop = properties.get(key)
        if prop is None and sensitive:
            out[key] = REDACTED
            continue
        if prop is None or value is None:
            continue
        if is_password(schema_name, key):
            out[key] = REDACTED
        elif prop.ref and holds_password(prop.ref):
            if prop.kind == "object":
                out[key] = _redact_object(value, prop.ref) if type(value) is dict else REDACTED
            elif type(value) is list:
                out[key] = [
                    _redact_object(item, prop.ref) if type(item) is dict else REDACTED
                    for item in value
                ]
            else:
                out[key] = REDACTED
    return out
