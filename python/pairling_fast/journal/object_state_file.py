"""``--state`` for journals read by URL (``s3://``, ``https://``...): an object is keyed by its
URL (redacted) and its version tag (S3 version id or ETag, GCS generation, HTTP ETag). A bucket's
object is replaced whole, never appended to in place, so there is no prefix to resume from: an
object whose tag and check options match its entry is not read again, its recorded report is the
report; any other is checked in full and recorded (docs/cluster.md, "Object storage").

Kept apart from ``journal_state`` (the local, append-resuming entries), whose file it shares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import remote
from ..report import Finding, Report
from .state_file import JournalStates, fingerprint

if TYPE_CHECKING:
    from .options import JournalOptions

__all__ = ["check_object_with_state"]


def check_object_with_state(
    url: str, options: JournalOptions, states: JournalStates, check: Callable[[], Report]
) -> Report:
    """The report of the journal object at ``url``: the recorded one when the object's version
    tag and the options are those of its entry in ``states``, else a full check, recorded (an
    object whose server gives no tag is always checked, and not recorded)."""
    found = remote.stat(url)
    key = remote.redact(url)
    expected = fingerprint(options)
    entry = states.entry(key)
    if (
        found.version is not None
        and entry is not None
        and entry.get("object_version") == found.version
        and entry.get("options") == expected
    ):
        stats = dict(entry["stats"])
        stats["resumed"] = {
            "from_line": stats.get("lines", 0),
            "from_offset": found.size,
            "bytes_checked": 0,
            "bytes_rehashed": 0,
            "object_version": found.version,
        }
        return Report(findings=[Finding.from_dict(f) for f in entry["findings"]], stats=stats)
    report = check()  # the full check; JournalInterrupted: no entry
    if found.version is not None and not report.stats.get("interrupted"):
        record: dict[str, Any] = {
            "object_version": found.version,
            "options": expected,
            "findings": [finding.to_dict() for finding in report.findings],
            "stats": report.stats,
        }
        states._put(key, record)
    return report
