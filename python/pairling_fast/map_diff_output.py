"""The formats ``pairling-fast diff`` writes a ``MapDiff`` in: ``text`` for a terminal, ``json``
(``MapDiff.to_dict``, versioned by ``diff_version``), ``markdown`` for a pull-request comment
(a summary line, then a table per kind of entry, loosenings first) and ``sarif`` (SARIF 2.1.0:
each loosening located in NEW, the bindings to review, NEW's own errors)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from .codes import CODES, MAP_DIFF_DIGEST_REVIEW, MAP_DIFF_LOOSENING
from .map_diff import MAP, DigestReview, MapChange, MapDiff, MapSide
from .map_diff_rules import ABSENT, LOOSENING, NEUTRAL, TIGHTENING, rule_named
from .output import (
    SARIF_LEVELS,
    artifact_location,
    finding_line,
    sarif_document,
    sarif_rules,
    shown,
    with_closest_branch,
)

__all__ = ["DIFF_FORMATS", "markdown", "render_diff", "sarif_log", "summary_text", "text"]

DIFF_FORMATS = ("text", "json", "markdown", "sarif")
_ORDER = {LOOSENING: 0, TIGHTENING: 1, NEUTRAL: 2}
_VALUE_WIDTH = 60
# GitHub refuses a comment over 65,536 characters; the tables stop short of it.
MARKDOWN_BUDGET = 60_000
SIDE_FINDINGS_SHOWN = 20


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _value(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 1] + "…"


def _side_state(side: MapSide) -> str:
    errors, warnings = len(side.report.errors), len(side.report.warnings)
    state = "valid" if side.ok else f"INVALID: {_plural(errors, 'error')}"
    return f"{state}, {_plural(warnings, 'warning')}"


def summary_text(diff: MapDiff) -> str:
    """One line: the verdict counts, entries, bindings to review, invalid sides."""
    if not diff.diffed:
        return "no diff: a map is not a JSON object (see its findings)"
    summary = diff.summary
    if not summary["changes"]:
        head = "no semantic change"
    else:
        entries = "entry" if summary["entries"] == 1 else "entries"
        head = (
            f"{_plural(summary['changes'], 'change')} in {summary['entries']} {entries}: "
            f"{summary[LOOSENING]} loosening, {summary[TIGHTENING]} tightening, "
            f"{summary[NEUTRAL]} neutral"
        )
    if summary["review"]:
        head += f"; {_plural(summary['review'], 'binding')} to review"
    invalid = [name for name, side in (("OLD", diff.old), ("NEW", diff.new)) if not side.ok]
    if invalid:
        head += f"; {' and '.join(invalid)} invalid"
    return head


def _sorted(changes: Iterable[MapChange]) -> list[MapChange]:
    return sorted(changes, key=lambda c: _ORDER[c.classification])


def _located(label: str, line: int | None, pointer: str | None) -> str | None:
    """``label:line pointer`` (the line where known), None without a pointer."""
    if pointer is None:
        return None
    return f"{label}:{line} {pointer}" if line else f"{label} {pointer}"


def _change_line(change: MapChange, labels: tuple[str, str]) -> str:
    values = f"{_value(change.old)} -> {_value(change.new)}"
    places = [
        _located(labels[0], change.old_line, change.old_pointer),
        _located(labels[1], change.new_line, change.new_pointer),
    ]
    return shown(
        f"{change.classification:<10} {change.code} {change.action} {change.where}: {values} "
        f"[{change.rule}] ({' -> '.join(p for p in places if p is not None)})"
    )


def _review_line(review: DigestReview) -> str:
    what = ", ".join(review.members) or "nothing but the order of its sets"
    if review.stale is not None:
        return shown(
            f"review     {MAP_DIFF_DIGEST_REVIEW} operation_bindings[{review.id}]: changed "
            f"({what}) but its semantic_digest did not: {review.stale.message}"
        )
    return shown(
        f"review     {MAP_DIFF_DIGEST_REVIEW} operation_bindings[{review.id}]: semantic_digest "
        f"changed; in it: {what}"
    )


def _side_lines(name: str, side: MapSide) -> list[str]:
    lines = [shown(f"{name} {side.label or '(value)'}: {_side_state(side)}")]
    errors = side.report.errors
    lines += [f"  {finding_line(f)}" for f in errors[:SIDE_FINDINGS_SHOWN]]
    if len(errors) > SIDE_FINDINGS_SHOWN:
        lines.append(f"  … and {len(errors) - SIDE_FINDINGS_SHOWN} more errors")
    return lines


def text(diff: MapDiff) -> str:
    labels = (diff.old.label or "OLD", diff.new.label or "NEW")
    lines = [*_side_lines("OLD", diff.old), *_side_lines("NEW", diff.new)]
    lines += [_change_line(c, labels) for c in _sorted(diff.changes)]
    lines += [_review_line(r) for r in diff.review]
    lines.append(summary_text(diff))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Markdown


def _cell(text: str) -> str:
    return shown(text).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else text


def _collection_order(diff: MapDiff) -> list[str]:
    # The changes come in schema order of their collections, the map's own first.
    names = [MAP, *dict.fromkeys(c.collection for c in diff.changes)]
    loosened = {c.collection for c in diff.loosenings}
    return sorted(
        {c.collection for c in diff.changes}, key=lambda n: (n not in loosened, names.index(n))
    )


def _table(diff: MapDiff, collection: str) -> list[str]:
    rows = _sorted(c for c in diff.changes if c.collection == collection)
    lines = [
        f"#### `{collection}` ({_plural(len(rows), 'change')})",
        "",
        "| verdict | entry | change | member | lines | old | new | rule |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for change in rows:
        verdict = (
            f"**{change.classification}**"
            if change.classification == LOOSENING
            else (change.classification)
        )
        cells = [
            verdict,
            _code(change.id) if change.id else "",
            change.action,
            _code(change.member) if change.member else "(entry)",
            f"{change.old_line or '-'} → {change.new_line or '-'}",
            _code(_value(change.old)),
            _code(_value(change.new)),
            f"`{change.rule}`",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _review_table(diff: MapDiff) -> list[str]:
    lines = [
        f"#### Bindings to review ({len(diff.review)})",
        "",
        "| binding | digest | changed in it |",
        "| --- | --- | --- |",
    ]
    for review in diff.review:
        digest = "**unchanged (PF221: stale)**" if review.stale is not None else "changed"
        members = ", ".join(_code(m) for m in review.members) or "the order of its sets only"
        lines.append(f"| {_cell(_code(review.id))} | {digest} | {_cell(members)} |")
    return lines


def markdown(diff: MapDiff) -> str:
    """A pull-request comment: the summary line, the invalid sides, a table per collection
    (collections with loosenings first, loosenings first in each), then the bindings to review;
    cut short (saying so) before GitHub's comment limit."""
    lines = [f"### Capability map diff: {summary_text(diff)}", ""]
    for name, side in (("OLD", diff.old), ("NEW", diff.new)):
        if not side.ok:
            lines.append(f"> **{name}** `{_cell(side.label or '')}` is invalid:")
            lines += [f"> - {_cell(finding_line(f))}" for f in side.report.errors[:5]]
            lines.append("")
    sections = [_table(diff, name) for name in _collection_order(diff)]
    if diff.review:
        sections.append(_review_table(diff))
    used = sum(len(line) + 1 for line in lines)
    for section in sections:
        size = sum(len(line) + 1 for line in section) + 1
        if used + size > MARKDOWN_BUDGET:
            lines.append(
                "*… more changes than a comment holds: see the JSON report "
                "(`pairling-fast diff --format json`).*"
            )
            break
        lines += [*section, ""]
        used += size
    rules = sorted({c.rule for c in diff.loosenings})
    if rules:
        lines.append("<details><summary>Why these are loosenings</summary>")
        lines.append("")
        lines += [f"- `{name}`: {_cell(rule_named(name).reason)}" for name in rules]
        lines += ["", "</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------------
# SARIF


def _location(label: str | None) -> dict[str, Any]:
    if label is not None and os.path.exists(label):
        return artifact_location(label)
    return {"uri": label or "NEW"}


def _result(
    code: str,
    message: str,
    location: dict[str, Any],
    line: int | None,
    pointer: str | None,
    codes: list[str],
) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": location, "region": {"startLine": line or 1}}
    result: dict[str, Any] = {
        "ruleId": code,
        "ruleIndex": codes.index(code),
        "level": SARIF_LEVELS[CODES[code].severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": physical}],
    }
    if pointer is not None:
        result["locations"][0]["logicalLocations"] = [
            {"fullyQualifiedName": pointer, "kind": "element"}
        ]
    return result


def sarif_log(diff: MapDiff) -> dict[str, Any]:
    """Loosenings (PF270) and bindings to review (PF273) located in NEW, and NEW's errors."""
    codes = sorted(CODES)
    location = _location(diff.new.label)
    results = []
    for change in diff.loosenings:
        rule = rule_named(change.rule)
        message = (
            f"{change.where}: {change.action}, {_value(change.old)} -> {_value(change.new)} "
            f"loosens remote control ({rule.name}: {rule.reason})"
        )
        result = _result(
            MAP_DIFF_LOOSENING, message, location, change.new_line, change.new_pointer, codes
        )
        result["properties"] = change.to_dict()
        results.append(result)
    for review in diff.review:
        message = _review_line(review).split(" ", 1)[1].strip()
        results.append(
            _result(MAP_DIFF_DIGEST_REVIEW, message, location, None, review.new_pointer, codes)
        )
    for finding in diff.new.report.errors:
        results.append(
            _result(
                finding.code,
                with_closest_branch(finding.message, finding),
                location,
                finding.line,
                finding.pointer,
                codes,
            )
        )
    run = {"results": results, "properties": {"backend": diff.backend, "summary": diff.summary}}
    return sarif_document(sarif_rules(codes), run)


def render_diff(diff: MapDiff, format_name: str) -> str:
    if format_name == "json":
        return diff.to_json(indent=2) + "\n"
    if format_name == "markdown":
        return markdown(diff)
    if format_name == "sarif":
        return json.dumps(sarif_log(diff), indent=2, ensure_ascii=False) + "\n"
    return text(diff)
