"""Image version order: numeric components, pre-releases, and what does not parse."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from dims._reports import _versions as versions

ORDERED = [
    "0.4.12",
    "0.9.3",
    "0.9.10",
    "0.10.0",
    "0.10.1-rc1",
    "0.10.1-rc2",
    "0.10.1-rc10",
    "0.10.1",
    "0.10.2",
    "0.11.0",
    "1.0.0",
    "10.0.0",
]


def test_multi_digit_components_order_numerically() -> None:
    assert versions.parse_version("0.10.1") > versions.parse_version("0.4.12")
    assert versions.parse_version("0.9.10") > versions.parse_version("0.9.3")
    assert versions.parse_version("10.0.0") > versions.parse_version("9.99.99")


def test_full_order_from_any_shuffle() -> None:
    shuffled = ORDERED[:]
    random.Random(1).shuffle(shuffled)
    assert sorted(shuffled, key=versions.version_key) == ORDERED
    assert versions.sort_versions(shuffled) == ORDERED
    assert versions.sort_versions(shuffled, newest_first=True) == ORDERED[::-1]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("0.10.1-rc1", "0.10.1"),
        ("0.10.1-rc2", "0.10.1-rc10"),
        ("0.10.1-alpha", "0.10.1-beta"),
        ("0.10.1-beta.2", "0.10.1-beta.11"),
        ("0.10.1.dev3", "0.10.1"),
        ("0.10.0", "0.10.1-rc1"),
        ("v0.4.12", "v0.10.1"),
    ],
)
def test_pairs(older: str, newer: str) -> None:
    assert versions.version_key(older) < versions.version_key(newer)
    assert versions.compare(older, newer) == "upgrade"
    assert versions.compare(newer, older) == "downgrade"


def test_equal_spellings() -> None:
    assert versions.version_key("1.2") == versions.version_key("1.2.0")
    assert versions.version_key("v1.2.0") == versions.version_key("1.2.0")
    assert versions.version_key("1.2.0+build.7") == versions.version_key("1.2.0")
    assert versions.compare("1.2", "1.2.0") == "same"


def test_unparseable_sort_after_parseable_and_are_kept() -> None:
    values = ["latest", "0.10.1", None, "sha256:abc", "0.4.12", "", "main"]
    ordered = versions.sort_versions(values)
    assert ordered[:2] == ["0.4.12", "0.10.1"]
    assert set(ordered[2:-1]) == {"latest", "sha256:abc", "", "main"}
    assert ordered[-1] is None
    assert versions.parse_version("latest") is None
    assert versions.parse_version(None) is None
    assert versions.newest(values) == "0.10.1"
    assert versions.newest(["latest"]) is None
    assert versions.compare("latest", "0.10.1") == "changed"


def test_versions_behind_counts_distinct_newer_versions() -> None:
    behind = versions.versions_behind(["0.4.12", "0.10.1", "0.10.1", "0.9.3", "1.0", "latest"])
    assert behind == {"1.0": 0, "0.10.1": 1, "0.9.3": 2, "0.4.12": 3, "latest": None}


def test_pandas_sort_key() -> None:
    frame = pd.DataFrame({"image_version": ["0.10.1", "latest", "0.4.12", None, "0.10.1-rc1"]})
    ordered = frame.sort_values("image_version", key=versions.version_rank)
    assert ordered["image_version"].tolist()[:4] == ["0.4.12", "0.10.1-rc1", "0.10.1", "latest"]
    assert pd.isna(ordered["image_version"].tolist()[-1])
    ranks = versions.version_rank(pd.Series(["1.2", "1.2.0", "0.1"]))
    assert ranks.tolist() == [1, 1, 0]
