"""The formats ``pairling-fast check`` writes a ``PathsReport`` in.

``text`` (plain here; ``rich`` with colours, a progress bar and tables on a terminal:
``terminal.py``), ``json``
(the versioned report), ``sarif`` (SARIF 2.1.0 for code scanning), ``junit`` (JUnit XML, one
testcase per file) and ``github`` (workflow-command annotations).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import _json_text
from .codes import CODES, UNREADABLE
from .report import Finding, Severity
from .results import FileResult, PathsReport

__all__ = [
    "FORMATS",
    "artifact_location",
    "finding_counts",
    "finding_json",
    "finding_line",
    "github",
    "jsonl",
    "junit",
    "not_listed_note",
    "plain_text",
    "render",
    "sarif",
    "sarif_document",
    "sarif_rules",
    "shown",
    "summary_line",
    "verdict",
    "with_closest_branch",
]

FORMATS = ("text", "json", "jsonl", "sarif", "junit", "github")

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "info": "note"}
ANNOTATION_COMMANDS: dict[Severity, str] = {
    "error": "error",
    "warning": "warning",
    "info": "notice",
}
# A progress bar only for runs long enough to need one; short runs would only flicker.


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def finding_counts(file: FileResult) -> str:
    """A file's findings by severity, listed or not (``2 errors, 1 warning``); every format
    that words a file's outcome says it so."""
    parts = [
        _plural(file.count(severity), severity)
        for severity in ("error", "warning", "info")
        if file.count(severity)
    ]
    return ", ".join(parts)


# Control characters (C0, DEL, C1) and the bidirectional overrides, as escapes: a file name or a
# quoted document must not fake report lines or drive the terminal (ESC sequences).
_ESCAPES = {
    code: ("\\n" if code == 0x0A else "\\t" if code == 0x09 else f"\\x{code:02x}")
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
} | {code: f"\\u{code:04x}" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def shown(text: str) -> str:
    """``text`` safe to print on a terminal or in a line-oriented log: controls escaped."""
    return text.translate(_ESCAPES)


def closest_branch(finding: Finding) -> str | None:
    """``closest branch: POINTER: MESSAGE (SCHEMA_POINTER)`` for a failing ``oneOf``/``anyOf``
    whose closest branch error stands out (``Finding.best_match``); None for any other finding.
    Every format that words a finding for people adds it (docs/reports.md)."""
    best = finding.best_match
    if best is None:
        return None
    where = best.pointer or "(the value itself)"
    return f"closest branch: {where}: {best.message} ({best.schema_pointer})"


def with_closest_branch(message: str, finding: Finding) -> str:
    """``message``, and the closest branch on a line of its own where there is one."""
    closest = closest_branch(finding)
    return message if closest is None else f"{message}\n{closest}"


def finding_line(finding: Finding) -> str:
    """The finding on one line; a failing ``oneOf``/``anyOf``'s closest branch error on a second,
    indented (``Finding.best_match``)."""
    line = shown(f"{finding.location()}: {finding.severity} {finding.code}: {finding.message}")
    closest = closest_branch(finding)
    return line if closest is None else line + "\n" + shown(f"      {closest}")


def finding_json(finding: Finding) -> str:
    """The finding as one line of JSON (``Finding.to_dict``; no newline inside: JSON escapes
    every control character)."""
    return json.dumps(finding.to_dict(), ensure_ascii=False)


def jsonl(report: PathsReport) -> str:
    """Every finding, one JSON object a line, file by file (the summary is not data here: the
    CLI prints it on stderr)."""
    return "".join(finding_json(f) + "\n" for file in report.files for f in file.findings)


def _status(file: FileResult, report: PathsReport) -> str:
    return {"ok": "ok", "failed": "FAIL", "partial": "PART"}[file.status(report.fail_on)]


def verdict(report: PathsReport) -> str:
    """The run's outcome in words (``passed``, ``failed (--fail-on error)``...)."""
    if report.interrupted:
        return "interrupted (partial report)"
    if report.io_errors:
        return "unreadable files"
    if not report.documents:
        return "no document checked"
    return "passed" if report.ok else f"failed (--fail-on {report.fail_on})"


def not_listed_note(count: int, max_findings: int | None) -> str:
    """The note under a file whose findings went over the cap."""
    return f"{count} more not listed (--max-findings {max_findings}; 0 lists all)"


def summary_line(report: PathsReport) -> str:
    """One line: files checked and skipped, true totals of errors and warnings, the verdict."""
    unlisted = f", {report.unlisted} not listed (--max-findings {report.max_findings})"
    partly = sum(1 for file in report.files if file.partial)
    return (
        f"{_plural(len(report.files), 'file')} checked{f' ({partly} partly)' if partly else ''}, "
        f"{len(report.skipped)} skipped: "
        f"{_plural(report.count('error'), 'error')}, {_plural(report.count('warning'), 'warning')}"
        f"{unlisted if report.unlisted else ''}; {verdict(report)}"
    )


def _throughput(size: int, seconds: float) -> str:
    if seconds <= 0:
        return f"{size} bytes"
    return f"{size} bytes in {seconds * 1000:.1f} ms ({size / seconds / 1e6:.1f} MB/s)"


def plain_text(report: PathsReport, *, show_skipped: bool = False) -> str:
    """The report as plain lines: per file a status line, then its findings, then the summary.

    Skipped files get a line each only with ``show_skipped`` (a built tree has thousands); the
    summary always counts them and the JSON report lists them all.
    """
    lines: list[str] = []
    for file in report.files:
        counts = finding_counts(file)
        kind = file.kind or "unknown kind"
        notes = [file.progress_note()] if file.partial else []
        notes += [counts] if counts else []
        lines.append(
            f"{_status(file, report):<4} {shown(file.path)} ({kind})"
            f"{': ' + '; '.join(notes) if notes else ''}"
        )
        lines.extend(f"  {finding_line(finding)}" for finding in file.findings)
        if file.unlisted:
            lines.append(f"  … {not_listed_note(file.unlisted, report.max_findings)}")
    if show_skipped:
        lines.extend(
            f"skip {shown(skipped.path)}: {shown(skipped.reason)}" for skipped in report.skipped
        )
    if report.timings:
        lines.append("timings:")
        lines.extend(
            f"  {shown(file.path)}: {_throughput(file.size, file.seconds)}" for file in report.files
        )
        total = sum(file.size for file in report.files)
        lines.append(f"  total: {_throughput(total, report.seconds)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# SARIF 2.1.0


def artifact_location(path: str) -> dict[str, Any]:
    """SARIF's ``artifactLocation`` of a file: relative to ``%SRCROOT%`` (the working directory)
    where it is under it, else its absolute ``file:`` URI."""
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(Path.cwd().resolve())
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": "%SRCROOT%"}


def _rule_name(title: str) -> str:
    return "".join(word.capitalize() for word in re.findall(r"[A-Za-z0-9]+", title))


def _region(finding: Finding) -> dict[str, int]:
    region = {"startLine": finding.line or 1}
    if finding.column is not None and finding.line is not None:
        region["startColumn"] = finding.column
    return region


def sarif_rules(codes: list[str]) -> list[dict[str, Any]]:
    """The SARIF rule of each code, in the order given (results refer to them by index)."""
    return [
        {
            "id": code,
            "name": _rule_name(CODES[code].title),
            "shortDescription": {"text": CODES[code].title},
            "fullDescription": {"text": CODES[code].description},
            "defaultConfiguration": {"level": SARIF_LEVELS[CODES[code].severity]},
            "help": {"text": f"{CODES[code].description} (pairling-fast explain {code})"},
        }
        for code in codes
    ]


def sarif(report: PathsReport) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log: one result per finding, every code a rule."""
    codes = sorted(CODES)
    rules = sarif_rules(codes)
    results: list[dict[str, Any]] = []
    for file in report.files:
        location = artifact_location(file.path)
        for finding in file.findings:
            result: dict[str, Any] = {
                "ruleId": finding.code,
                "level": SARIF_LEVELS[finding.severity],
                "message": {"text": with_closest_branch(finding.message, finding)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": location,
                            # Code scanning places a result on a line; whole-document
                            # findings without one go on the first.
                            "region": _region(finding),
                        }
                    }
                ],
            }
            if finding.code in CODES:
                result["ruleIndex"] = codes.index(finding.code)
            if finding.pointer is not None:
                result["locations"][0]["logicalLocations"] = [
                    # The root pointer is "": "/" would name the member called "".
                    {"fullyQualifiedName": finding.pointer, "kind": "element"}
                ]
            result["properties"] = {
                "pointer": finding.pointer,
                "schemaPointer": finding.schema_pointer,
                "kind": file.kind,
            }
            if finding.best_match is not None:
                result["properties"]["bestMatch"] = finding.best_match.to_dict()
            results.append(result)
    notifications: list[dict[str, Any]] = [
        {
            "level": "error",
            "message": {"text": f"{finding.path}: {finding.message}"},
            "descriptor": {"id": finding.code},
        }
        for finding in report.io_errors
    ]
    notifications += [
        {
            "level": "warning",
            "message": {"text": f"{file.path}: {file.progress_note()}"},
            "locations": [{"physicalLocation": {"artifactLocation": artifact_location(file.path)}}],
        }
        for file in report.files
        if file.partial
    ]
    # Results over --max-findings are not in the log: say how many, per file, so the count
    # code scanning shows is not taken for the total.
    notifications += [
        {
            "level": "note",
            "message": {
                "text": f"{file.path}: {finding_counts(file)} in all; "
                f"{not_listed_note(file.unlisted, report.max_findings)}"
            },
            "locations": [{"physicalLocation": {"artifactLocation": artifact_location(file.path)}}],
        }
        for file in report.files
        if file.unlisted
    ]
    return sarif_document(
        rules,
        {
            "invocations": [
                {
                    "executionSuccessful": not report.io_errors and not report.interrupted,
                    "toolExecutionNotifications": notifications,
                }
            ],
            "results": results,
            "properties": {
                "backend": report.backend,
                "skipped": [s.to_dict() for s in report.skipped],
                "summary": report.summary,
                "maxFindings": report.max_findings,
            },
        },
    )


def sarif_document(rules: list[dict[str, Any]], run: dict[str, Any]) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run of pairling_fast: its rules, then ``run``'s members
    (results, invocations, properties)."""
    from . import __version__

    driver = {"name": "pairling_fast", "version": __version__, "rules": rules}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, **run}],
    }


# ---------------------------------------------------------------------------------------------
# JUnit XML


@cache
def _not_xml() -> re.Pattern[str]:
    """Characters XML 1.0 cannot carry at all, even escaped; findings may quote them from
    documents. Compiled on first use: the class took longer to compile than any module of the
    CLI took to import, for a format few runs ask for."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _not_xml().sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def junit(report: PathsReport) -> str:
    """The report as JUnit XML: one testcase per checked file (pass, failure, or error for an
    unreadable one), one suite. Skipped files are not test cases (a built tree has thousands):
    the suite's properties count them and the JSON report lists them."""
    statuses = [f.status(report.fail_on) for f in report.files]
    errors = sum(1 for f in report.files if _unreadable(f))
    counts = {
        "tests": str(len(report.files)),
        "failures": str(statuses.count("failed") - errors),
        "errors": str(errors),
        # A journal checked part way (Ctrl-C) neither passed nor failed.
        "skipped": str(statuses.count("partial")),
        "time": f"{report.seconds:.3f}",
    }
    import xml.etree.ElementTree as ET  # only JUnit needs it

    root = ET.Element("testsuites", {"name": "pairling_fast", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "pairling_fast check", **counts})
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("backend", report.backend),
        ("fail-on", report.fail_on),
        ("skipped-files", str(len(report.skipped))),
        ("findings-not-listed", str(report.unlisted)),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    for file in report.files:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": f"pairling_fast.{file.kind or 'unknown'}",
                "name": _xml_text(file.path),
                "file": _xml_text(file.path),
                "time": f"{file.seconds:.3f}",
            },
        )
        details = "\n".join(_xml_text(finding_line(f)) for f in file.findings)
        if file.unlisted:
            details += f"\n… {not_listed_note(file.unlisted, report.max_findings)}"
        if file.partial:
            ET.SubElement(case, "skipped", {"message": file.progress_note()})
            if details:
                ET.SubElement(case, "system-out").text = details
            continue
        if _unreadable(file):
            element = ET.SubElement(case, "error", {"type": UNREADABLE})
        elif file.fails(report.fail_on):
            first = next(f for f in file.findings if f.severity in _at_least(report.fail_on))
            element = ET.SubElement(case, "failure", {"type": first.code})
        elif file.findings:
            ET.SubElement(case, "system-out").text = details
            continue
        else:
            continue
        element.set("message", _xml_text(finding_counts(file)))
        element.text = details
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _unreadable(file: FileResult) -> bool:
    return any(f.code == UNREADABLE for f in file.findings)


def _at_least(fail_on: Severity) -> tuple[Severity, ...]:
    return ("error",) if fail_on == "error" else ("warning", "error")


# ---------------------------------------------------------------------------------------------
# GitHub workflow commands


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _title(code: str) -> str:
    info = CODES.get(code)
    return f"{code} {info.title}" if info is not None else code


def github(report: PathsReport, *, show_skipped: bool = False) -> str:
    """One ``::error``/``::warning``/``::notice`` annotation per finding, then the summary."""
    lines: list[str] = []
    for file in report.files:
        for finding in file.findings:
            properties = [f"file={_escape_property(file.path.replace(os.sep, '/'))}"]
            if finding.line is not None:
                properties.append(f"line={finding.line}")
            properties.append(f"title={_escape_property(_title(finding.code))}")
            where = f"{finding.pointer}: " if finding.pointer else ""
            lines.append(
                f"::{ANNOTATION_COMMANDS[finding.severity]} {','.join(properties)}::"
                f"{_escape_data(with_closest_branch(where + finding.message, finding))}"
            )
    if show_skipped:
        lines.extend(f"skipped {s.path}: {s.reason}" for s in report.skipped)
    lines.extend(
        f"::error title=Unreadable::{_escape_data(f'{s.path}: {s.error}')}"
        for s in report.skipped
        if s.error
    )
    for file in report.files:
        if file.partial:
            where = _escape_property(file.path.replace(os.sep, "/"))
            note = _escape_data(file.progress_note())
            lines.append(f"::warning file={where},title=Partly checked::{note}")
        if file.unlisted:
            where = _escape_property(file.path.replace(os.sep, "/"))
            note = not_listed_note(file.unlisted, report.max_findings)
            lines.append(f"::notice file={where},title=Findings not listed::{_escape_data(note)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


_RENDERERS: dict[str, Callable[[PathsReport, bool], str]] = {
    "text": lambda report, show_skipped: plain_text(report, show_skipped=show_skipped),
    "json": lambda report, _: report.to_json() + "\n",
    "jsonl": lambda report, _: jsonl(report),
    "sarif": lambda report, _: _json_text.dumps(sarif(report)) + "\n",
    "junit": lambda report, _: junit(report),
    "github": lambda report, show_skipped: github(report, show_skipped=show_skipped),
}


def render(report: PathsReport, format_name: str, *, show_skipped: bool = False) -> str:
    """The report in ``format_name`` (one of ``FORMATS``) as text; ``text`` is the plain form.

    ``show_skipped`` lists skipped files in ``text`` and ``github`` (JSON and SARIF always list
    them as data; JUnit counts them).
    """
    return _RENDERERS[format_name](report, show_skipped)
