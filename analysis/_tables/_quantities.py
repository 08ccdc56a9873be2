"""Kubernetes resource quantities ("500m", "0.25", "256Mi", "1Gi", "512M", "1e3") as numbers.

Sidecars and init containers state their resources as Kubernetes quantities, while the
deployment's own resource_spec uses plain cores and MiB. Reports add the two, so both are
reduced here to the same units: CPU in cores, memory in MiB (1024 * 1024 bytes).

The grammar is Kubernetes' own (`resource.ParseQuantity`, k8s.io/apimachinery), exactly: an
optional sign, ASCII digits with an optional decimal point (`1`, `1.5`, `1.`, `.5`), then
nothing, a binary suffix (Ki Mi Gi Ti Pi Ei: powers of 1024), a decimal one (n u m k M G T P
E: `1k` is 1000, `1M` a million) or a decimal exponent (`e3`, `E-2`: integer digits). No
spaces anywhere, no other digits: `"١٢"` (Arabic-Indic), `"２"` (full-width) and `" 2 "`
are refused, as ParseQuantity refuses them. (Kubernetes' JSON reading trims surrounding
spaces before parsing, with a TODO to stop; dims follows the grammar.) JSON numbers are
quantities without a suffix, as Kubernetes reads them.

A value that is not a quantity gives None, never an exception and never 0: a typo in one
container must not stop an export, nor read as less than it asks. `problem` says why, in
words a reason or an anomaly can quote. The grammar takes a sign, but a container's columns
take only what a cluster runs (`readable`): a negative quantity (Kubernetes' validation
refuses it) or one above 2^32 cores or MiB is unreadable there too, by the rule of the
resource_spec figures (`_figures`).
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

# ASCII digits only ([0-9], never \d, which takes every script's digits). The exponent
# alternative comes first so that "1E3" is 1000 while "1E" is one exa.
_QUANTITY = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?"
)
_SUFFIXES = "Ki Mi Gi Ti Pi Ei (1024s), n u m k M G T P E (1000s) or an exponent such as e3"

_MIB = float(2**20)

#: The largest figure a deployment can ask for, in cores, replicas, MiB, GiB or connections:
#: more is beyond any cluster (the rule of `_figures`, which container quantities follow).
LARGEST_FIGURE = float(2**32)


def figure_problem(value: float) -> str | None:
    """Why a figure (cores, MiB, replicas, ...) is none a cluster runs, in a few words; None
    when a cluster can run it. Zero is a figure."""
    if not math.isfinite(value):
        return "not a finite number"
    if value < 0:
        return "negative: no cluster runs it"
    if value > LARGEST_FIGURE:
        return f"above 2^32 ({LARGEST_FIGURE:,.0f}): no cluster runs it"
    return None


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> float | None:
    match = _QUANTITY.fullmatch(text)
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


def in_unit(value: object, key: str) -> float | None:
    """The quantity of resource `key` in its column's unit: cores for `cpu`, MiB otherwise."""
    return cpu_cores(value) if key == "cpu" else memory_mib(value)


def readable(value: object, key: str) -> float | None:
    """The quantity in its column's unit (`in_unit`) when a cluster can run it: None for
    text Kubernetes refuses, and for a figure no cluster runs (negative, which Kubernetes'
    validation refuses, or above 2^32 cores or MiB: `_figures`); `-0` is 0."""
    number = in_unit(value, key)
    if number is None or figure_problem(number) is not None:
        return None
    return number + 0.0


def problem(value: object, key: str | None = None) -> str | None:
    """Why a value is not a Kubernetes quantity, in a few words; None when it is one, or
    when there is none (null: the quantity is absent, which is no error). With the resource
    `key` (`cpu`, `memory`), also why its figure is none a cluster runs (`readable`)."""
    if value is None:
        return None
    if parse_quantity(value) is not None:
        number = None if key is None else in_unit(value, key)
        return None if number is None else figure_problem(number)
    if isinstance(value, bool):
        return "a boolean, not a quantity"
    if isinstance(value, int | float):
        return "a number beyond float64"
    if not isinstance(value, str):
        return f"{'an object' if isinstance(value, dict) else 'an array'}, not a quantity"
    return _text_problem(value)


def _text_problem(text: str) -> str:
    if _QUANTITY.fullmatch(text):
        return "a number beyond float64"
    if not text:
        return "empty text, not a quantity"
    if any(c.isspace() for c in text):
        return "spaces are not part of a quantity"
    if any(c.isdigit() and not c.isascii() for c in text):
        return "digits other than ASCII 0-9"
    return f"not a number with one of Kubernetes' suffixes ({_SUFFIXES})"


def cpu_cores(value: object) -> float | None:
    """A CPU quantity in cores: "500m" -> 0.5, "2" -> 2.0."""
    return parse_quantity(value)


def memory_mib(value: object) -> float | None:
    """A memory quantity in MiB: "256Mi" -> 256.0, "1Gi" -> 1024.0, "512M" -> 488.28125."""
    number = parse_quantity(value)
    return None if number is None else number / _MIB
