"""Settings files (rules files, price sheets) are read by one reader, held to one standard.

Issue 35, item 4: a key given twice (at any depth, YAML or TOML) is one line naming the key,
the file and both lines; an integer past a float's range, a negative, NaN or infinite amount
is one line naming the key; a path that is not a regular file (a FIFO with no writer, a
directory, a device) is refused before it is opened, so nothing blocks; a UTF-8 BOM is read
as the start of the file; a group's value with spaces at its ends is refused, not stripped.
Each case runs on both kinds of file, since both go through `dims._smallfile`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import run

from dims import PriceSheetError, RulesError
from dims import _policy as policy
from dims import _reports as reports

Loader = Callable[[Path], object]
#: (what the file is, its loader, the error it raises, a line that makes it valid)
KINDS = {
    "rules": (policy.load_rules, RulesError, "no_inverted_scales: true\n"),
    "prices": (reports.load_prices, PriceSheetError, "storage_gib_month: 0.04\n"),
}


def _load(kind: str, path: Path) -> object:
    loader, _, _ = KINDS[kind]
    return loader(path)


def _refused(kind: str, path: Path) -> str:
    """The one-line message loading `path` as `kind` raises."""
    _, error, _ = KINDS[kind]
    with pytest.raises(error) as caught:
        _load(kind, path)
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and len(message) < 300, message
    assert message.startswith(f"{path}: "), message
    return message


# -- a key given twice ----------------------------------------------------------------------


DUPLICATES = {
    "rules": [
        ("budgets:\n  fleet: 5\nbudgets:\n  type=prod: 7\n", "budgets", 1, 3),
        (
            "unknown_costs: fail\nbudgets: {fleet: 1}\nunknown_costs: notice\n",
            "unknown_costs",
            1,
            3,
        ),
        ("budgets:\n  fleet: 5\n  type=prod: 9\n  fleet: 6\n", "budgets.fleet", 2, 4),
        (
            "drift:\n  by: [type]\n  max_increase_usd: 1\n  max_increase_usd: 2\n",
            "drift.max_increase_usd",
            3,
            4,
        ),
        ("budgets: {fleet: 1, fleet: 2}\n", "budgets.fleet", 1, 1),
        # equal keys in another spelling: YAML reads both as the same key
        ("budgets:\n  fleet: 5\n  'fleet': 6\n", "budgets.fleet", 2, 3),
    ],
    "prices": [
        ("cpu_core_hour: 5\ncpu_core_hour: 0.00001\n", "cpu_core_hour", 1, 2),
        (
            "types:\n  prod:\n    cpu_core_hour: 5\n    memory_gib_hour: 1\n    cpu_core_hour: 1\n",
            "types.prod.cpu_core_hour",
            3,
            5,
        ),
        ("types:\n  prod: {cpu_core_hour: 1}\n  dev: {}\n  prod: {}\n", "types.prod", 2, 4),
    ],
}
TOML_DUPLICATES = {
    "rules": [
        ('[budgets]\nfleet = 5\n"type=prod" = 3\nfleet = 6\n', "budgets.fleet", 2, 4),
        ("[budgets]\nfleet = 5\n[drift]\nmax_increase_usd = 1\n[budgets]\n", "budgets", 1, 5),
        ("no_inverted_scales = true\nbudgets = {fleet = 1, fleet = 2}\n", "fleet", None, 2),
        (
            "unknown_costs = 'fail'\nbudgets.fleet = 1\nunknown_costs = 'notice'\n",
            "unknown_costs",
            1,
            3,
        ),
    ],
    "prices": [
        ("cpu_core_hour = 5\ncpu_core_hour = 0.00001\n", "cpu_core_hour", 1, 2),
        ("[types.prod]\ncpu_core_hour = 5\ncpu_core_hour = 1\n", "types.prod.cpu_core_hour", 2, 3),
        (
            '[types]\n"prod".cpu_core_hour = 5\nprod.cpu_core_hour = 1\n',
            "types.prod.cpu_core_hour",
            2,
            3,
        ),
    ],
}


def _cases(table: dict[str, list], suffix: str) -> list:
    return [
        pytest.param(kind, suffix, *case, id=f"{kind}{suffix}-{n}")
        for kind, cases in table.items()
        for n, case in enumerate(cases)
    ]


@pytest.mark.parametrize(
    ("kind", "suffix", "text", "key", "first", "second"),
    [*_cases(DUPLICATES, ".yaml"), *_cases(TOML_DUPLICATES, ".toml")],
)
def test_a_key_given_twice_is_one_line_naming_the_key_and_both_lines(
    tmp_path, kind, suffix, text, key, first, second
) -> None:
    path = tmp_path / f"settings{suffix}"
    path.write_text(text, encoding="utf-8")
    message = _refused(kind, path)
    assert f": line {second}: {key} given twice" in message, message
    if first is not None:
        assert f"(first on line {first})" in message, message


@pytest.mark.parametrize("kind", KINDS)
def test_a_merge_key_is_refused_naming_its_line(tmp_path, kind) -> None:
    """`<<` gives a mapping's keys again, the node's own silently winning: refused as
    anchors are, with or without an alias."""
    path = tmp_path / "settings.yaml"
    key = "budgets" if kind == "rules" else "types"
    path.write_text(f"{key}:\n  x: {{<<: {{a: 1}}, a: 2}}\n", encoding="utf-8")
    message = _refused(kind, path)
    assert message == (
        f"{path}: line 2: YAML merge keys (<<) are not allowed in a "
        f"{'rules' if kind == 'rules' else 'price'} file"
    )


def test_the_cli_refuses_a_key_given_twice_in_either_file(capsys, tmp_path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("budgets:\n  fleet: 5\nbudgets:\n  type=prod: 7\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "--rules", str(rules), "--out", str(tmp_path / "no"))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert err.startswith(
        f"dims check: error: {rules}: line 3: budgets given twice (first on line 1)"
    )
    prices = tmp_path / "prices.yaml"
    prices.write_text("cpu_core_hour: 5\ncpu_core_hour: 0.00001\n", encoding="utf-8")
    code, out, err = run(capsys, "metrics", "--out", str(tmp_path / "no"), "--prices", str(prices))
    assert (code, out) == (1, "") and err.count("\n") == 1, err
    assert f"{prices}: line 2: cpu_core_hour given twice (first on line 1)" in err


# -- numbers --------------------------------------------------------------------------------


HUGE = "1" + "0" * 400
BAD_NUMBERS = [
    ("rules", f"budgets:\n  fleet: {HUGE}\n", "budgets.fleet"),
    ("rules", f"budgets:\n  fleet: -{HUGE}\n", "budgets.fleet"),
    ("rules", "budgets:\n  fleet: .nan\n", "budgets.fleet"),
    ("rules", "budgets:\n  fleet: .inf\n", "budgets.fleet"),
    ("rules", "budgets:\n  fleet: 1.0e+301\n", "budgets.fleet"),
    ("rules", f"max_versions_behind: {HUGE}\n", "max_versions_behind"),
    ("rules", f"drift:\n  max_increase_usd: {HUGE}\n", "drift.max_increase_usd"),
    ("rules", "drift:\n  max_increase_usd: 1.0e+301\n", "drift.max_increase_usd"),
    ("rules", f"drift:\n  max_increase_percent: {HUGE}\n", "drift.max_increase_percent"),
    ("rules", f"min_share_on_newest: {HUGE}\n", "min_share_on_newest"),
    ("prices", f"cpu_core_hour: {HUGE}\n", "cpu_core_hour"),
    ("prices", f"types:\n  prod:\n    memory_gib_hour: -{HUGE}\n", "types.prod.memory_gib_hour"),
    ("prices", "storage_gib_month: .nan\n", "storage_gib_month"),
    ("prices", "storage_gib_month: -.inf\n", "storage_gib_month"),
    ("prices", f"hours_per_month: {HUGE}\n", "hours_per_month"),
]


@pytest.mark.parametrize(("kind", "text", "key"), BAD_NUMBERS)
def test_numbers_past_a_float_or_not_finite_are_one_line_naming_the_key(
    tmp_path, kind, text, key
) -> None:
    path = tmp_path / "settings.yaml"
    path.write_text(text, encoding="utf-8")
    assert f": {key}: " in _refused(kind, path)


def test_a_huge_budget_is_one_line_and_exit_2_on_the_cli(capsys, tmp_path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(f"budgets:\n  fleet: {HUGE}\n", encoding="utf-8")
    code, out, err = run(capsys, "check", "--rules", str(rules), "--out", str(tmp_path / "no"))
    assert (code, out) == (2, "") and "Traceback" not in err
    assert err.startswith(f"dims check: error: {rules}: budgets.fleet: ") and err.count("\n") == 1


# -- not a regular file ---------------------------------------------------------------------


def _load_in_a_thread(kind: str, path: Path) -> BaseException | object:
    """What loading `path` raises or returns; a load still blocked after a long wait is
    released by opening the FIFO's other end, and fails the test (a guard, not a timing)."""
    found: list[BaseException | object] = []

    def load() -> None:
        try:
            found.append(_load(kind, path))
        except BaseException as exc:  # handed to the test
            found.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        with open(path, "wb"):  # the writer the reader waits for: it reads an empty file
            pass
        worker.join(60)
        pytest.fail(f"loading {path} blocked until a writer opened it")
    return found[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_fifo_with_no_writer_is_refused_without_blocking(tmp_path, kind) -> None:
    path = tmp_path / "settings.yaml"
    os.mkfifo(path)
    found = _load_in_a_thread(kind, path)
    _, error, _ = KINDS[kind]
    assert isinstance(found, error), found
    message = str(found)
    assert message.startswith(f"{path}: ") and "a FIFO" in message, message
    assert "not a regular file" in message and len(message.splitlines()) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_directory_and_a_device_are_refused_before_they_are_opened(tmp_path, kind) -> None:
    folder = tmp_path / "settings.yaml"
    folder.mkdir()
    assert "a directory, not a regular file" in _refused(kind, folder)
    assert "a character device, not a regular file" in _refused(kind, Path(os.devnull))


def test_a_fifo_on_the_cli_is_one_line_and_exit_2(capsys, tmp_path) -> None:
    path = tmp_path / "rules.yaml"
    os.mkfifo(path)
    found: list[tuple[int, str, str]] = []
    worker = threading.Thread(
        target=lambda: found.append(
            run(capsys, "check", "--rules", str(path), "--out", str(tmp_path / "no"))
        ),
        daemon=True,
    )
    worker.start()
    worker.join(60)
    if worker.is_alive():
        with open(path, "wb"):
            pass
        worker.join(60)
        pytest.fail("dims check blocked on a FIFO")
    code, out, err = found[0]
    assert (code, out) == (2, "") and err.count("\n") == 1 and "not a regular file" in err


# -- a BOM ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_utf8_bom_is_read_as_the_start_of_the_file(tmp_path, kind, suffix) -> None:
    _, _, line = KINDS[kind]
    if suffix == ".toml":
        line = line.replace(": ", " = ")
    plain, marked = tmp_path / f"plain{suffix}", tmp_path / f"bom{suffix}"
    plain.write_text(line, encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + line.encode())
    loaded = _load(kind, marked)
    expected = _load(kind, plain)
    for field in ("source", "name"):  # where they came from differs, and only that
        loaded, expected = _without(loaded, field), _without(expected, field)
    assert loaded == expected


def _without(value: object, field: str) -> object:
    from dataclasses import fields, replace

    if any(f.name == field for f in fields(value)):  # type: ignore[arg-type]
        return replace(value, **{field: ""})  # type: ignore[type-var]
    return value


def test_a_bom_inside_the_file_is_still_refused(tmp_path) -> None:
    path = tmp_path / "rules.toml"
    path.write_bytes(b"no_inverted_scales = true\n\xef\xbb\xbfmax_versions_behind = 3\n")
    assert "not valid TOML" in _refused("rules", path)


# -- padded group values --------------------------------------------------------------------


@pytest.mark.parametrize(
    "group",
    ['"label:team= padded "', '"type= prod"', '"namespace=agents-dev ,type=prod"', '"type =prod "'],
)
def test_a_group_value_with_spaces_at_its_ends_is_refused(tmp_path, group) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(f"budgets:\n  {group}: 10\n", encoding="utf-8")
    message = _refused("rules", path)
    assert re.search(r"budgets\..*: the value '.*' begins or ends with a space", message), message


def test_spaces_around_keys_and_commas_are_kept_as_they_were(tmp_path) -> None:
    rules = policy.parse_rules({"budgets": {"namespace=agents-dev, type=prod": 1, " fleet ": 2}})
    (group, _), (fleet, _) = rules.budgets
    assert group.keys == ("k8s_namespace", "deployment_type")
    assert group.values == ("agents-dev", "prod") and fleet.is_fleet
