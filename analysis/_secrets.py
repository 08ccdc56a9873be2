"""Keeping secret values out of reprs of the generated models.

openapi.yaml marks secret values `format: password` (a deployment's secrets[].value and a
container's env[].value). The generated attrs models print every field in their repr, and
the generator's templates offer no per-field repr without copying its model template
whole, so the repr of each model holding such a field is replaced by one explicit step,
`protect_generated_models()` (which also leaves UNSET fields out of reprs), taken by
`dims.connect()` before it hands out a
client (call it yourself to use the generated client without `connect`); the generated
files stay untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import _spec as spec

#: What stands in for a secret value wherever one would otherwise be shown or stored.
REDACTED = "***REDACTED***"


def _readable_repr(secret_names: tuple[str, ...]) -> Callable[[Any], str]:
    """A repr that shows the fields a record has (not the UNSET ones), secrets masked."""
    from dims_client.types import Unset

    def __repr__(self: Any) -> str:
        parts = []
        for attribute in type(self).__attrs_attrs__:
            value = getattr(self, attribute.name)
            if isinstance(value, Unset) or (
                attribute.name == "additional_properties" and not value
            ):
                continue
            masked = attribute.name in secret_names and isinstance(value, str)
            parts.append(f"{attribute.name}={REDACTED if masked else repr(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    return __repr__


@functools.cache
def protect_generated_models() -> tuple[str, ...]:
    """Give every generated model a readable repr: fields it has, secret values masked.

    Returns the models that hold a secret field.
    """
    import attrs

    import dims_client.models as models  # here: REDACTED alone must stay light to import

    secrets = {
        name: tuple(spec.python_name(n) for n in fields)
        for name, fields in spec.secret_fields().items()
    }
    for name in dir(models):
        model = getattr(models, name)
        if isinstance(model, type) and attrs.has(model):
            model.__repr__ = _readable_repr(secrets.get(name, ()))  # type: ignore[method-assign]
    return tuple(name for name in secrets if hasattr(models, name))
