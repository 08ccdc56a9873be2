"""Image version parsing and ordering.

Image versions are strings (`0.4.12`, `v0.10.1`, `0.10.1-rc1`, `latest`). Sorting them as text
puts `0.10.1` before `0.4.12`, which makes "versions behind the newest" wrong, so every report
orders versions with the key defined here:

- a release is a dot-separated list of integers, with an optional leading `v`; trailing zero
  components do not matter (`1.2` == `1.2.0`);
- a pre-release (`-rc1`, `-beta.2`, `.dev3`) sorts before its release, and pre-release tags
  compare piecewise with numbers as numbers (`rc2` < `rc10`);
- build metadata after `+` is ignored for ordering (semver);
- anything else (`latest`, a digest, an empty string, null) does not parse: it sorts after every
  parseable version, by text, with null last, and is never "newest" or "behind".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

_VERSION_RE = re.compile(
    r"""^\s*[vV]?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-.]?(?P<pre>[0-9A-Za-z]+(?:[.-][0-9A-Za-z]+)*))?
    (?:\+(?P<build>[0-9A-Za-z.-]+))?
    \s*$""",
    re.VERBOSE,
)
_PIECE_RE = re.compile(r"\d+|[A-Za-z]+")


@dataclass(frozen=True, order=True)
class Version:
    """A parsed version: compare instances directly, or use `version_key` for mixed input."""

    release: tuple[int, ...]
    # (1,) for a release, (0, pieces...) for a pre-release: a release sorts after its pre-releases.
    pre: tuple[Any, ...]
    text: str = ""


def _pre_key(pre: str) -> tuple[Any, ...]:
    # Numbers compare as numbers and sort before words, as in semver: rc1 < rc2 < rc10.
    pieces = _PIECE_RE.findall(pre)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in pieces)


def parse_version(text: object) -> Version | None:
    """The parsed version, or None when `text` is not a version (`latest`, null, a digest)."""
    if not isinstance(text, str):
        return None
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    release = [int(p) for p in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre = match["pre"]
    if pre is not None and pre.isdigit():
        return None  # `1.2-3`: ambiguous, neither a release component nor a tag
    pre_key: tuple[Any, ...] = (1,) if pre is None else (0, *_pre_key(pre))
    return Version(tuple(release), pre_key, text)


def is_missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def version_key(text: object) -> tuple[Any, ...]:
    """Sort key for `sorted(..., key=version_key)`: parseable oldest→newest, then the rest.

    Unparseable strings follow in text order, and missing values (None, NaN) come last.
    """
    parsed = parse_version(text)
    if parsed is not None:
        return (0, parsed.release, parsed.pre, "")
    if is_missing(text):
        return (2, (), (), "")
    return (1, (), (), str(text))


def sort_versions(values: Iterable[object], *, newest_first: bool = False) -> list[object]:
    """Distinct values in version order (unparseable ones stay last either way)."""
    values = list(values)
    distinct = list(dict.fromkeys(v for v in values if not is_missing(v)))
    parseable = sorted((v for v in distinct if parse_version(v) is not None), key=version_key)
    rest = sorted((v for v in distinct if parse_version(v) is None), key=version_key)
    if newest_first:
        parseable.reverse()
    tail: list[object] = [None] if any(is_missing(v) for v in values) else []
    return [*parseable, *rest, *tail]


def version_rank(values: pd.Series) -> pd.Series:
    """Dense integer rank in version order (0 = oldest parseable), for `sort_values(key=...)`.

    Usage: `df.sort_values("image_version", key=version_rank)`. Equal versions (`1.2` and
    `1.2.0`) share a rank; unparseable values rank after every parseable one.
    """
    keys = {v: version_key(v) for v in values.dropna().unique()}
    order = {k: i for i, k in enumerate(sorted(set(keys.values())))}
    missing_rank = len(order)
    ranks = [missing_rank if is_missing(v) else order[keys[v]] for v in values]
    return pd.Series(ranks, index=values.index, dtype="int64")


def newest(values: Iterable[object]) -> str | None:
    """The newest parseable version among `values`, or None when none parses."""
    parsed = [p for p in (parse_version(v) for v in values) if p is not None]
    return max(parsed).text if parsed else None


def versions_behind(values: Iterable[object]) -> dict[object, int | None]:
    """For each distinct value: how many distinct newer versions exist among `values`.

    Counting versions actually present (not every version ever released) is what the data
    allows: the dataset knows what the fleet runs, not the vendor's release list. `1.2` and
    `1.2.0` are the same version. Unparseable values map to None.
    """
    distinct = set(v for v in values if not is_missing(v))
    keys = {v: version_key(v) for v in distinct if parse_version(v) is not None}
    ladder = sorted(set(keys.values()), reverse=True)
    position = {k: i for i, k in enumerate(ladder)}
    return {v: (position[keys[v]] if v in keys else None) for v in distinct}


def compare(old: object, new: object) -> str:
    """How a deployment's version moved: upgrade, downgrade, same, changed (either does not
    parse), or unknown (one side has no version: a record or a day without image_version
    says nothing of what ran, so no move can be told)."""
    if old == new or (is_missing(old) and is_missing(new)):
        return "same"
    if is_missing(old) or is_missing(new):
        return "unknown"
    a, b = parse_version(old), parse_version(new)
    if a is None or b is None:
        return "changed"
    if (a.release, a.pre) == (b.release, b.pre):
        return "same"
    return "upgrade" if (b.release, b.pre) > (a.release, a.pre) else "downgrade"
