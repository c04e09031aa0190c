"""Hostile inputs beyond single JSON texts (issue 15): what an attacker or a careless user feeds
the command line. Each is built here, deterministically, and used by ``tests/test_hostile.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TAMPERED_JOURNAL = EXAMPLES / "journals" / "tampered.jsonl"
CHAINED_JOURNAL = EXAMPLES / "journals" / "chained.jsonl"
MAP = EXAMPLES / "maps" / "capability-map.json"

# One bad first line put in front of a tampered journal: none may make the journal pass.
JUNK_FIRST_LINES: dict[str, bytes] = {
    "empty-object": b"{}\n",
    "corrupt": b'{"kind": "run_started", "timestamp": \n',
    "truncated-event": b'{"kind":"run_started","data":{},"timestamp":"2026-01-01T00:00:00Z","ru\n',
    "over-1-mib": b'{"note": "' + b"x" * ((1 << 20) + 100) + b'"}\n',
    "invalid-utf8": b'{"kind": "\xff\xfe", "timestamp": "2026-01-01T00:00:00Z"}\n',
    "not-json": b"# exported by hand\n",
}


def journal_behind(first_line: bytes) -> bytes:
    """The tampered example journal with ``first_line`` in front."""
    return first_line + TAMPERED_JOURNAL.read_bytes()


# Array indexes RFC 6901 does not allow: digits that are not ASCII.
NON_ASCII_INDEX_POINTERS = ("/\u00b2", "/\u0661", "/1\u00b2")  # ², Arabic-Indic 1

# Nesting the recursive Python code of `check` must survive (the parser allows 512 levels).
DEEP_ARRAY = b"[" * 400 + b"]" * 400
TOO_DEEP_ARRAY = b"[" * 600 + b"]" * 600

# A pyproject.toml that is not UTF-8, above the working directory (another project's file).
PYPROJECT_NOT_UTF8 = b'[project]\nname = "caf\xe9"\n'

# File names that would fake report lines or drive the terminal if printed raw.
CONTROL_FILE_NAMES = (
    "fake\nok   clean.json (journal).tools.cancel.result.json",
    "\x1b[2J\x1b[31mred.tools.cancel.result.json",
    "bidi\u202eoverride.tools.cancel.result.json",
)


def huge_value_journal(lines: int, value_bytes: int) -> bytes:
    """Events whose ``timestamp`` is a string of ``value_bytes`` bytes: every line is a schema
    violation (PF101) whose message would quote the whole value."""
    event = {"kind": "state_changed", "data": {}, "timestamp": "9" * value_bytes}
    line = json.dumps(event).encode() + b"\n"
    return line * lines


def unchained_events(count: int) -> bytes:
    return b"".join(
        json.dumps(
            {
                "kind": "state_changed",
                "data": {"key": f"k{number}"},
                "timestamp": f"2026-12-02T14:00:{number % 60:02}Z",
            }
        ).encode()
        + b"\n"
        for number in range(count)
    )
