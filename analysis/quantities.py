"""Kubernetes resource quantities ("500m", "0.25", "256Mi", "1Gi", "512M", "1e3") as numbers.

Sidecars and init containers state their resources as Kubernetes quantities, while the
deployment's own resource_spec uses plain cores and MiB. Reports add the two, so both are
reduced here to the same units: CPU in cores, memory in MiB (1024 * 1024 bytes).

A value that is not a quantity gives None, never an exception: a typo in one container must
not stop an export. The grammar follows the Kubernetes `resource.Quantity` format: a signed
decimal number, then either a binary suffix (Ki..Ei), a decimal suffix (n, u, m, k, M..E) or
a decimal exponent (e3, E-2). JSON numbers are accepted as suffix-less quantities.
"""

from __future__ import annotations

import functools
import math
import re

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
_MULTIPLIERS = {**_DECIMAL, **_BINARY}

# The exponent alternative comes first so that "1E3" is 1000 while "1E" is one exa.
_QUANTITY = re.compile(
    r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?"
)

_MIB = float(2**20)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> float | None:
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    try:
        if exponent is not None:
            value = float(f"{number}e{exponent}")
        else:
            value = float(number) * _MULTIPLIERS[suffix or ""]
    except (OverflowError, ValueError):
        return None
    return value if math.isfinite(value) else None


def parse_quantity(value: object) -> float | None:
    """The quantity in base units (cores for CPU, bytes for memory), or None if unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        return _parse_text(value)
    return None


def cpu_cores(value: object) -> float | None:
    """A CPU quantity in cores: "500m" -> 0.5, "2" -> 2.0."""
    return parse_quantity(value)


def memory_mib(value: object) -> float | None:
    """A memory quantity in MiB: "256Mi" -> 256.0, "1Gi" -> 1024.0, "512M" -> 488.28125."""
    number = parse_quantity(value)
    return None if number is None else number / _MIB
