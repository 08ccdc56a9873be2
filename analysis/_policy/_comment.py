"""A check's result as a pull-request comment (`dims check --format markdown|github|gitlab`).

CI users post a Markdown body on the merge request (Infracost's `github-comment` and
`gitlab-comment`): a summary line, a table of the violations, the month's cost by group
against the base snapshot, and the rest collapsed in a `<details>` block. Every piece of
service text in it goes through `escape.markdown_text`, so a name holding `|`, a backtick,
a newline or `<!--` shows as written and never breaks the table or forges a line.

The hosts differ in what they render and take:

- `markdown`: the body alone, for any host or a file;
- `github`: a hidden marker (`MARKER`) first, so a CI step finds its own comment and updates
  it in place; the verdict as a GitHub alert (`> [!CAUTION]`, `> [!NOTE]`); at most 65,536
  characters, GitHub's limit for a comment body (details beyond it are cut, and say so);
- `gitlab`: the marker too; at most 1,000,000 characters, GitLab's limit for a note.
"""

from __future__ import annotations

from dataclasses import dataclass

from dims._escape import markdown_text
from dims._policy._results import CheckResult, Notice, Violation, shown
from dims._policy._rules import Rules
from dims._reports import PriceSheet, Snapshot, allocation_keys, cost_by, fleet_totals

HOSTS = ("markdown", "github", "gitlab")
#: The hidden line a CI step looks for to update its comment in place.
MARKER = "<!-- dims-check -->"
#: The most characters a host takes in one comment (None: no limit).
LIMITS: dict[str, int | None] = {"markdown": None, "github": 65_536, "gitlab": 1_000_000}
#: What a cut comment ends its details with (room is kept for it).
_CUT = "\n- … cut to fit the host's limit for a comment; `dims check --json` has everything\n"


@dataclass(frozen=True)
class GroupCost:
    """One group's cost (the rules' basis and scale) on the base snapshot and now."""

    key: str
    value: str
    before: float | None
    after: float | None
    unpriced_now: int

    @property
    def change(self) -> float | None:
        if self.before is None and self.after is None:
            return None
        return (self.after or 0.0) - (self.before or 0.0)


def _known(value: object) -> float | None:
    number = float(value) if isinstance(value, int | float) else float("nan")
    return number if number == number else None  # NaN: unknown


def cost_changes(
    now: Snapshot, base: Snapshot, rules: Rules, prices: PriceSheet
) -> list[GroupCost]:
    """Per group of the drift rule's keys (else `type`), then the fleet: the report's own
    figure (`reports.cost_by`, `fleet_totals`) on the base snapshot and now."""
    keys = rules.drift.by if rules.drift is not None else ("type",)
    column = rules.cost_column
    out = []
    for key in keys:
        (name,) = allocation_keys(key)
        frames = [cost_by(snap, [name], prices) for snap in (base, now)]
        before, after = (f.set_index(name) for f in frames)
        for value in sorted(set(before.index) | set(after.index), key=str):
            was = _known(before[column].get(value)) if value in before.index else None
            now_row = after.loc[value] if value in after.index else None
            out.append(
                GroupCost(
                    key,
                    str(value),
                    was,
                    _known(now_row[column]) if now_row is not None else None,
                    int(now_row["deployments_unpriced"]) if now_row is not None else 0,
                )
            )
    totals = [fleet_totals(snap, prices) for snap in (base, now)]
    out.append(
        GroupCost(
            "fleet",
            "fleet",
            _known(totals[0][column]),
            _known(totals[1][column]),
            int(totals[1]["deployments_unpriced"]),
        )
    )
    return out


def _usd(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "unknown"
    sign = ("+" if value >= 0 else "−") if signed else ("" if value >= 0 else "−")
    return f"{sign}${abs(value):,.2f}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _deployments(item: Violation | Notice, shown_names: int = 3) -> str:
    """`237: research-bot-00369, billing-agent-00361, … and 234 more` (escaped)."""
    count = len(item.deployment_ids)
    if not count:
        return ""
    names = [markdown_text(n or i) for n, i in zip(item.names, item.deployment_ids, strict=True)]
    more = f", … and {count - shown_names:,} more" if count > shown_names else ""
    return f"{count:,}: {', '.join(names[:shown_names])}{more}"


def _summary(result: CheckResult, fleet: GroupCost | None, basis: str) -> str:
    failed = sum(not rule.passed for rule in result.rules)
    verdict = (
        f"**dims check: {failed} of {len(result.rules)} rules failed** "
        f"({len(result.violations):,} violations, {len(result.notices):,} notes)"
        if failed
        else f"**dims check: all {len(result.rules)} rules hold** ({len(result.notices):,} notes)"
    )
    against = f" against {result.against_date}" if result.against_date else ""
    line = f"{verdict} · snapshot {result.snapshot_date}{against}"
    if fleet is not None:
        line += (
            f" · the month's cost {_usd(fleet.before)} → {_usd(fleet.after)} "
            f"({_usd(fleet.change, signed=True)}), {markdown_text(basis)}"
        )
    return line


def _violations(result: CheckResult) -> list[str]:
    if not result.violations:
        return ["No rule fails."]
    lines = [
        _row(["rule", "group", "figure", "limit", "why", "deployments"]),
        "|---|---|--:|--:|---|---|",
    ]
    for v in result.violations:
        lines.append(
            _row(
                [
                    markdown_text(v.rule),
                    markdown_text(v.group),
                    markdown_text(shown(v.figure, v.unit)),
                    markdown_text(f"{v.op} {shown(v.limit, v.unit)}"),
                    markdown_text(v.note),
                    _deployments(v),
                ]
            )
        )
    return lines


def _costs(changes: list[GroupCost] | None, base_date: str | None, basis: str) -> list[str]:
    if changes is None:
        return ["No earlier snapshot to compare the cost with."]
    lines = [
        f"**The month's cost by group against {markdown_text(base_date)}** "
        f"({markdown_text(basis)}; unpriced deployments are not in a figure)",
        "",
        _row(["group", markdown_text(base_date), "now", "change", "unpriced now"]),
        "|---|--:|--:|--:|--:|",
    ]
    for c in changes:
        group = "**fleet**" if c.key == "fleet" else markdown_text(f"{c.key}={c.value}")
        lines.append(
            _row(
                [
                    group,
                    _usd(c.before),
                    _usd(c.after),
                    _usd(c.change, signed=True),
                    f"{c.unpriced_now:,}",
                ]
            )
        )
    return lines


def _details(result: CheckResult) -> list[str]:
    lines = [
        _row(["rule", "status", "checked", "violations", "notes"]),
        "|---|---|--:|--:|--:|",
        *(
            _row(
                [
                    markdown_text(r.rule),
                    r.status,
                    f"{r.checked:,}",
                    f"{len(r.violations):,}",
                    f"{len(r.notices):,}",
                ]
            )
            for r in result.rules
        ),
        "",
    ]
    for n in result.notices:
        named = _deployments(n)
        lines.append(
            f"- note {markdown_text(n.rule)} {markdown_text(n.group)}: "
            f"{markdown_text(n.message)}{f'; deployments {named}' if named else ''}"
        )
    lines += [f"- warning: {markdown_text(w)}" for w in result.warnings]
    return lines


def comment(
    result: CheckResult,
    changes: list[GroupCost] | None,
    base_date: str | None,
    host: str = "markdown",
) -> str:
    """The comment body for `host` (one of `HOSTS`): summary, violations, cost by group
    against `base_date` (`changes`: `cost_changes`, None without a base), then details."""
    fleet = changes[-1] if changes else None
    summary = _summary(result, fleet, result.basis)
    if host == "github":
        summary = f"> [!{'NOTE' if result.passed else 'CAUTION'}]\n> {summary}"
    head = [
        *([MARKER] if host != "markdown" else []),
        summary,
        "",
        *_violations(result),
        "",
        *_costs(changes, base_date, result.basis),
        "",
        "<details><summary>Details: every rule, the notes</summary>",
        "",
    ]
    tail = "\n\n</details>\n"
    body = "\n".join(head)
    limit = LIMITS[host]
    room = None if limit is None else limit - len(tail) - len(_CUT) - len(body)
    kept: list[str] = []
    for line in _details(result):
        if room is not None and len(line) + 1 > room:
            kept.append(_CUT.strip("\n"))
            break
        kept.append(line)
        room = None if room is None else room - len(line) - 1
    return body + "\n" + "\n".join(kept) + tail


def unchanged(changes: list[GroupCost] | None, diff_counts: dict[str, int], moved: bool) -> bool:
    """Nothing changed against the base: no deployment added, removed, moved to another
    version or resized (`diff_counts`, `moved`), and every group's cost the same to the cent."""
    if changes is None:
        return False
    same_costs = all(
        (c.before is None) == (c.after is None) and round(c.change or 0.0, 2) == 0 for c in changes
    )
    return same_costs and not moved and not any(diff_counts.values())
