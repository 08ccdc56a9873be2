"""Service text is data: every command run on a dataset whose names, namespaces, types,
versions, label keys and values and workspace ids carry terminal control (ESC, CSI, OSC 52,
CR, BEL, C1, DEL), newlines that would forge lines, quotes, and bidi overrides.

Each command's whole output (stdout and stderr, `--json` too) holds no raw control, format or
separator character but the newlines `dims` puts between its lines; `dims check` keeps one
line per violation; the JSON still reads back to the exact service text; the HTML report
escapes it.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from pathlib import Path

import fleet_math as fm
import pytest
from cli_in_process import run
from hostile_servers import JSON, Connection, Handler, Request, lists_records, serve, within

from dims import DeploymentLookupError
from dims import _escape as escape
from dims import _reports as reports
from dims.sandbox import generate_fleet

BEFORE, AFTER = "2025-06-01", "2025-06-02"
#: What a terminal acts on: OSC 52 (write the clipboard) ended by BEL, a CSI colour, CR over
#: the line, a newline that starts a forged line, C1 CSI, DEL, the bidi override and isolate,
#: the line separator; quotes for the CSV and the SQL.
ATTACK = (
    "\x1b]52;c;cHduZWQ=\x07\x1b[31m\rok\nFAIL forged_rule fleet: $0.00 > limit $0.00"
    "\ncheck 2025-06-02: 9 rules, all hold\n\x9b2J\x7f\u202egnp.exe\u2066x\u2069\u2028'\"q"
)


def hostile(tag: str) -> str:
    return f"{tag}{ATTACK}"


#: A label key as hostile, but without the comma that separates `--by`'s keys.
KEY = hostile("key").replace(",", ";")


def unsafe(text: str) -> list[str]:
    """The characters of `text` a terminal acts on or hides, but the newline (the test's own
    reading of Unicode's categories, not dims's)."""
    return sorted(
        {c for c in text if c != "\n" and unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"}}
    )


def _hostile_records(records: list[dict], types: dict[str, str]) -> None:
    """Make the first records' text fields hostile, in place (`types` too)."""
    for n, record in enumerate(records[:4]):
        record["name"] = hostile(f"name{n}")
        record["image_version"] = hostile(f"version{n}")
        spec = fm.resource_spec(record)
        spec["labels"] = {"team": hostile(f"team{n}"), KEY: hostile(f"value{n}")}
        record["source_config"]["listener_config"] = {"k8s_namespace": hostile(f"ns{n}")}
        types[record["id"]] = hostile(f"type{n % 2}")
    records[1]["tenant_id"] = hostile("workspace")
    # one with an inverted scale, so that `no_inverted_scales` names it
    spec = fm.resource_spec(records[2])
    spec["min_scale"], spec["max_scale"] = 3, 1


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    """Two days: the plain fleet, then the same fleet with hostile text and one more."""
    fleet = generate_fleet(12, seed=11)
    folder = tmp_path_factory.mktemp("hostile")
    first = copy.deepcopy(fleet.deployments)
    fm.export_fleet(first, dict(fleet.deployment_types), folder, BEFORE)
    second, types = copy.deepcopy(first), dict(fleet.deployment_types)
    _hostile_records(second, types)
    added = copy.deepcopy(second[0])
    added["id"], added["name"] = "00000000-0000-4000-8000-0000000000ad", hostile("added")
    types[added["id"]] = types[second[0]["id"]]
    fm.export_fleet([*second[1:], added], types, folder, AFTER)
    return folder


def assert_clean(code: int, stdout: str, stderr: str) -> None:
    assert code in (0, 1), stderr
    assert unsafe(stdout) == [] and unsafe(stderr) == []


def test_escape_shows_every_control_and_keeps_ordinary_unicode() -> None:
    kept = "é 名前 👨\u200d👩 🏴\U000e0067\U000e007f"  # joiners of emoji and scripts
    shown = escape.printable(ATTACK + kept)
    assert unsafe(shown.removesuffix(kept)) == [] and "\n" not in shown
    assert shown.startswith("\\u001b]52;c;cHduZWQ=\\u0007\\u001b[31m\\rok\\nFAIL")
    assert "\\u009b2J\\u007f\\u202egnp.exe\\u2066x\\u2069\\u2028'\"q" in shown
    assert shown.endswith(kept)
    assert escape.printable("\U000110bd\ud800") == "\\ud804\\udcbd\\ud800"
    assert escape.printable_lines("a\x1b\nb\u2028") == "a\\u001b\nb\\u2028"
    # the escapes are JSON's: inside a JSON string they read back to the text itself
    document = escape.printable_lines(json.dumps({"v": ATTACK}, ensure_ascii=False, indent=2))
    assert unsafe(document) == [] and json.loads(document) == {"v": ATTACK}


def test_report_headline_and_by_lines_are_one_line_each(capsys, out, tmp_path) -> None:
    code, stdout, stderr = run(
        capsys, "report", "--out", str(out), "--by", "namespace", "--by", f"label:{KEY}"
    )
    assert_clean(code, stdout, stderr)
    assert code == 0
    # a namespace's row is one line: the forged text is inside it, escaped
    rows = [line for line in stdout.splitlines() if "ns0" in line]
    assert rows and all("\\nFAIL forged_rule" in line for line in rows)
    assert not any(line.startswith("FAIL ") for line in stdout.splitlines())


def test_a_warning_naming_the_fleets_types_is_one_clean_line(capsys, out, tmp_path) -> None:
    sheet = tmp_path / "prices.yaml"
    sheet.write_text("types:\n  prdo:\n    cpu_core_hour: 0.05\n", encoding="utf-8")
    code, stdout, stderr = run(capsys, "report", "--out", str(out), "--prices", str(sheet))
    assert_clean(code, stdout, stderr)
    warned = stderr.splitlines()
    assert len(warned) == 1 and "types.prdo" in warned[0] and "type0\\u001b]52" in warned[0]


def test_report_json_reads_back_the_exact_names(capsys, out) -> None:
    code, stdout, stderr = run(capsys, "report", "--out", str(out), "--json", "--by", "namespace")
    assert_clean(code, stdout, stderr)
    values = {row["value"] for row in json.loads(stdout)["by"]["namespace"]}
    assert hostile("ns0") in values


def test_diff_lists_changes_one_line_each(capsys, out) -> None:
    code, stdout, stderr = run(capsys, "diff", "--out", str(out))
    assert_clean(code, stdout, stderr)
    added = "00000000-0000-4000-8000-0000000000ad"
    listed = [line for line in stdout.splitlines() if added in line]
    assert len(listed) == 1 and "added\\u001b]52" in listed[0]
    code, stdout, stderr = run(capsys, "diff", "--out", str(out), "--json")
    assert_clean(code, stdout, stderr)
    names = {c["name"] for c in json.loads(stdout)["changes"]}
    assert hostile("name1") in names


def test_check_keeps_one_line_per_violation(capsys, out, tmp_path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "max_versions_behind: 0\nno_inverted_scales: true\n"
        "drift:\n  by: [type, namespace, label:team]\n  max_increase_usd: 0\n",
        encoding="utf-8",
    )
    code, stdout, stderr = run(capsys, "check", "--rules", str(rules), "--out", str(out))
    assert_clean(code, stdout, stderr)
    assert code == 1
    _, as_json, _ = run(capsys, "check", "--rules", str(rules), "--out", str(out), "--json")
    counts = json.loads(as_json)["counts"]
    lines = stdout.splitlines()
    assert [line for line in lines if line.startswith("FAIL ")] == lines[: counts["violations"]]
    assert len([line for line in lines if line.startswith("note ")]) == counts["notices"]
    assert len(lines) == counts["violations"] + counts["notices"] + 1
    assert re.fullmatch(r"check 2025-06-02 against 2025-06-01: \d+ rules, \d+ failed .*", lines[-1])
    assert not any(line.startswith("FAIL forged_rule") for line in lines)
    assert any("name2\\u001b]52" in line for line in lines)  # the inverted one, named


@pytest.mark.parametrize("key", ["00000000-0000-4000-8000-0000000000ad", None])
def test_explain_shows_every_field_escaped(capsys, out, key) -> None:
    if key is None:  # its name, as the user would copy it
        key = hostile("added")
    code, stdout, stderr = run(capsys, "explain", key, "--out", str(out))
    assert_clean(code, stdout, stderr)
    assert code == 0
    head = stdout.splitlines()[:3]
    assert "added\\u001b]52" in head[0] and "ns0\\u001b]52" in head[1]
    assert "version0\\u001b" in head[1] and "type0\\u001b" in head[1]
    code, stdout, stderr = run(capsys, "explain", key, "--out", str(out), "--json")
    assert_clean(code, stdout, stderr)
    assert json.loads(stdout)["name"] == hostile("added")


def test_explain_a_name_it_does_not_find_is_one_clean_line(capsys, out) -> None:
    # what JSON leaves as it is (DEL, C1, bidi) first: the message shortens what it quotes
    nobody = f"\u202e\x7f\x9b{hostile('nobody')}"
    code, stdout, stderr = run(capsys, "explain", nobody, "--out", str(out))
    assert code == 1 and stdout == ""
    assert unsafe(stderr) == [] and len(stderr.splitlines()) == 1


def test_explain_a_name_two_share_lists_their_ids_on_one_clean_line(capsys, tmp_path) -> None:
    fleet = generate_fleet(4, seed=3)
    records, types = copy.deepcopy(fleet.deployments[:2]), dict(fleet.deployment_types)
    for n, record in enumerate(records):
        types[hostile(f"id{n}")] = types.pop(record["id"])
        record["id"], record["name"] = hostile(f"id{n}"), "twin"
    fm.export_fleet(records, types, tmp_path, AFTER)
    code, stdout, stderr = run(capsys, "explain", "twin", "--out", str(tmp_path))
    assert (code, stdout) == (1, "") and unsafe(stderr) == [] and len(stderr.splitlines()) == 1
    assert "id0\\u001b]52" in stderr and "id1\\u001b]52" in stderr
    # the SDK's error says the same; its ids are the exact ones
    with pytest.raises(DeploymentLookupError) as raised:
        reports.explain(reports.load_snapshot(tmp_path), "twin")
    assert unsafe(str(raised.value)) == [] and "\n" not in str(raised.value)
    assert sorted(raised.value.ids) == sorted(r["id"] for r in records)


def test_metrics_json_and_warnings_are_clean(capsys, out) -> None:
    code, stdout, stderr = run(capsys, "metrics", "--out", str(out), "--json")
    assert_clean(code, stdout, stderr)
    values = {
        sample["labels"].get("k8s_namespace")
        for family in json.loads(stdout)
        for sample in family["samples"]
    }
    # the JSON's labels are the text format's: a label value shows service text as a terminal
    # would be shown it (one rule, dims._escape), so a series is one name in both
    assert escape.printable_lines(hostile("ns0")) in values


def test_sql_tables_show_one_row_a_line(capsys, out) -> None:
    query = "select name, k8s_namespace, image_version from deployments order by name"
    code, stdout, stderr = run(capsys, "sql", "--out", str(out), query)
    assert_clean(code, stdout, stderr)
    lines = stdout.splitlines()
    assert lines[-1] == "(12 rows)" and len(lines) == 2 + 12 + 1
    code, stdout, stderr = run(capsys, "sql", "--out", str(out), "--json", query)
    assert_clean(code, stdout, stderr)
    assert hostile("added") in {row["name"] for row in json.loads(stdout)}
    for shape in ("csv", "markdown"):  # each row one line too, and no raw control
        code, stdout, stderr = run(capsys, "sql", "--out", str(out), "--format", shape, query)
        assert_clean(code, stdout, stderr)
        assert len(stdout.splitlines()) == (1 if shape == "csv" else 2) + 12, stdout


def test_catalog_lines_are_clean(capsys, out, tmp_path) -> None:
    code, stdout, stderr = run(capsys, "catalog", str(tmp_path / "c.duckdb"), "--out", str(out))
    assert_clean(code, stdout, stderr)


def _one_workspace_refused(records: list[bytes]) -> Handler:
    """Workspace `ok` lists `records`; any other is refused with a detail that attacks."""
    listing = lists_records(records)

    async def handler(request: Request, connection: Connection) -> None:
        if request.headers.get("x-tenant-id") == "ok":
            return await listing(request, connection)
        body = json.dumps({"detail": hostile("detail")}).encode()
        headers = {**JSON, "Content-Length": str(len(body)), "Connection": "close"}
        await connection.head("403 Forbidden", headers)
        await connection.send(body)
        return None

    return handler


def test_export_says_a_failed_workspace_on_one_line(capsys, tmp_path) -> None:
    records = [json.dumps(r).encode() for r in generate_fleet(3, seed=5).deployments]
    with serve(_one_workspace_refused(records)) as server:
        code, stdout, stderr = within(
            lambda: run(
                capsys, "export", "--base-url", server.base_url, "--out", str(tmp_path),
                "--tenant-id", "ok,refused", "--allow-partial", "--retries", "0",
            )
        )  # fmt: skip
    assert code == 3, stderr
    assert unsafe(stdout) == [] and unsafe(stderr) == []
    failed = [line for line in stdout.splitlines() if "workspace refused: FAILED" in line]
    assert len(failed) == 1 and "detail\\u001b]52" in failed[0], stdout
    assert not any(line.startswith("FAIL forged_rule") for line in stdout.splitlines())
    # the error itself, as the SDK raises it and the manifest keeps it: one escaped line
    manifest = json.loads(next(tmp_path.glob("_manifests/*.json")).read_text(encoding="utf-8"))
    error = manifest["workspaces"]["refused"]["error"]
    assert unsafe(error) == [] and "detail\\u001b]52" in error


def test_the_html_report_escapes_service_text(capsys, tmp_path) -> None:
    fleet = generate_fleet(8, seed=2)
    records, types = copy.deepcopy(fleet.deployments), dict(fleet.deployment_types)
    tag = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    for n, record in enumerate(records[:3]):
        record["name"] = f"{tag}name{n}"
        record["image_version"] = f"{tag}v{n}"
        fm.resource_spec(record)["labels"] = {"team": f"{tag}team", f"{tag}key": f"{tag}value"}
        record["source_config"]["listener_config"] = {"k8s_namespace": f"{tag}ns"}
        types[record["id"]] = f"{tag}type"
    fm.export_fleet(records, types, tmp_path, AFTER)
    code, stdout, stderr = run(
        capsys, "report", "--out", str(tmp_path), "--by", f"label:{tag}key", "--json"
    )
    assert code == 0, stderr
    page = Path(json.loads(stdout)["report"]).read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x" in page
    for shown in ("name0", "v0", "team", "ns", "type"):
        assert f"&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;{shown}" in page, shown
