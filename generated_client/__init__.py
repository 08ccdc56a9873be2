"""A client library for the Deployment and Integration Management Service.

Generated from dims' openapi.yaml. Made by dims' custom template: `api` and `models` are
imported here, so `import dims_client` reaches every operation and model.
"""

from collections.abc import Callable, Mapping
from typing import Any

from . import api, models
from .client import AuthenticatedClient, Client

__all__ = (
    "AuthenticatedClient",
    "Client",
    "api",
    "models",
)

#: The published service's own names of some properties (openapi.yaml's
#: `x-dims-original-name`), by model: original name -> the spec's name.
ORIGINAL_NAMES: dict[type, dict[str, str]] = {
    models.SourceRevisionConfig: {
        "langgraph_config_path": "graph_config_path",
    },
    models.ResourceSpec: {
        "redis_cpu": "cache_cpu",
        "redis_cpu_limit": "cache_cpu_limit",
        "redis_memory_mb": "cache_memory_mb",
        "redis_memory_limit_mb": "cache_memory_limit_mb",
    },
}


def _reading_originals(
    from_dict: Callable[..., Any], originals: Mapping[str, str]
) -> Any:
    """`from_dict` that reads a property under either name: the original fills the spec's
    name when that is missing or null; a different value beside it stays in
    `additional_properties`, so nothing the service sent is lost."""

    def read(cls: type, src_dict: Mapping[str, Any]) -> Any:
        d = dict(src_dict)
        for original, name in originals.items():
            if original not in d:
                continue
            if d.get(name) is None:
                d[name] = d.pop(original)
            elif d[name] == d[original]:
                del d[original]
        return from_dict(cls, d)

    return classmethod(read)


for _model, _originals in ORIGINAL_NAMES.items():
    _model.from_dict = _reading_originals(_model.from_dict.__func__, _originals)  # type: ignore[attr-defined]
