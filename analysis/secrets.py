"""Keeping secret values out of reprs of the generated models.

openapi.yaml marks secret values `format: password` (a deployment's secrets[].value and a
container's env[].value). The generated attrs models print every field in their repr, and
the generator's templates offer no per-field repr without copying its model template
whole, so the repr of each model holding such a field is replaced by one explicit step,
`protect_generated_models()`, which `analysis.connect()` takes before it hands out a
client (call it yourself to use the generated client without `connect`); the generated
files stay untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import spec

#: What stands in for a secret value wherever one would otherwise be shown or stored.
REDACTED = "***REDACTED***"


def _masked_repr(secret_names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        parts = []
        for attribute in type(self).__attrs_attrs__:
            value = getattr(self, attribute.name)
            masked = attribute.name in secret_names and isinstance(value, str)
            parts.append(f"{attribute.name}={REDACTED if masked else repr(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    return __repr__


@functools.cache
def protect_generated_models() -> tuple[str, ...]:
    """Mask secret fields in the reprs of the generated models; returns the models changed."""
    import generated_client.models as models  # here: REDACTED alone must stay light to import

    changed = []
    for schema_name, secret_names in spec.secret_fields().items():
        model = getattr(models, schema_name, None)
        if model is None:
            continue
        python_names = tuple(spec.python_name(n) for n in secret_names)
        model.__repr__ = _masked_repr(python_names)
        changed.append(schema_name)
    return tuple(changed)
